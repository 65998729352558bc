import Synchronization
import WarmfeedCore

/// This node's address as the other nodes of a cluster reach it, named in the
/// owner records of the originals it fetched (see `SharedTier`).
///
/// Given (`--advertise`), it is known at once; otherwise it is the address the
/// server bound, known once it listens (its port may have been 0), which is
/// before any request can make this node own an original.
package final class NodeAddress: Sendable {
    private let address: Mutex<String>

    package init(configured: String?) {
        address = Mutex(configured.map(Self.trimmed) ?? "")
    }

    /// The address (empty only before the server listens, when none was given).
    var value: String { address.withLock { $0 } }

    /// The server listens on `host`:`port`: the address, unless one was given.
    /// A server on every interface is reached by its node name.
    package func bound(host: String, port: Int, nodeName: String) {
        address.withLock { address in
            guard address.isEmpty else { return }
            address = Self.trimmed("http://\(host == "0.0.0.0" ? nodeName : host):\(port)")
        }
    }

    /// The address in the spelling the other nodes' peer lists compare (`KnownPeers.canonical`).
    private static func trimmed(_ url: String) -> String {
        KnownPeers.canonical(url) ?? (url.hasSuffix("/") ? String(url.dropLast()) : url)
    }
}
