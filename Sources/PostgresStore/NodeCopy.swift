import Foundation
import PageFiles
import Synchronization
import ThreadSlots
import WarmfeedCore

/// This node's own copy of the shared feed's prepared rows, in the layout a
/// SQLite store keeps beside its database (`PageIndex` and `RowLog`, in the
/// data folder's `postgres-copy/`): a deep page on a cluster node is then
/// one `pread` of records and one of rows, with no round trip to PostgreSQL
/// and no hand-off to another thread, so PostgreSQL's CPU goes to writes.
///
/// PostgreSQL stays the truth. `NodeCopyKeeper` keeps the copy current on a
/// thread and a connection of its own: each row changed since its last
/// catch-up (`item.changed`, the writing transaction's id, set by a trigger)
/// is copied, woken by the revision the listener hears (NOTIFY) and each
/// second, from the start again when the files are missing, cut, or of
/// another store. A page is read from the copy only when the copy has caught
/// up with every write this node has heard of (`Header.writes` ≥ the store's
/// revision) and PostgreSQL answers (a store down gives the same 503 as
/// before); otherwise, and for a row the copy does not hold current (not yet
/// prepared, or prepared with other templates), PostgreSQL is asked, as
/// before.
final class NodeCopy: Sendable {
    let index: PageIndex
    let folder: String
    /// Pages answered from the copy, and pages asked of PostgreSQL while the
    /// copy was behind (or could not answer), counted per thread.
    private let counts = ThreadCounters(count: 2)
    private let kept = Mutex(Kept())

    /// What the keeper did, for the operator's view.
    struct Kept: Sendable {
        /// The feed's write count the copy has caught up with; -1 before the first catch-up.
        var writes = -1
        var catchUps = 0
        var rowsCopied = 0
        var rebuilds = 0
        /// Why the last catch-up failed, until one succeeds.
        var problem: String?
    }

    /// Opens (and creates, when missing) the copy's files in `folder`.
    init(folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.folder = folder
        let rows = try RowLog(path: (folder as NSString).appendingPathComponent("rows"))
        index = try PageIndex(path: (folder as NSString).appendingPathComponent("pages"), rows: rows)
    }

    /// The page for `request` from the copy; nil when the copy cannot answer
    /// it for a feed of epoch `epoch` whose writes this node has heard up to `writes`.
    func page(_ request: PageRequest, size: Int, tag: UInt32, epoch: UInt32, writes: Int) -> PreparedPage?? {
        let trusts: (PageIndex.Header) -> Bool = { $0.origin == Int64(epoch) && $0.writes >= Int64(writes) }
        let page: PreparedPage??
        switch request {
        case .number(let number): page = index.page(number: number, size: size, tag: tag, epoch: epoch, trusts: trusts)
        case .after(let cursor), .before(let cursor): page = index.page(request, cursor: cursor, size: size, tag: tag, epoch: epoch, trusts: trusts)
        }
        counts.add(page == nil ? 1 : 0)
        return page
    }

    /// Notes what a catch-up did.
    func noteKept(_ change: (inout Kept) -> Void) {
        kept.withLock { kept in change(&kept) }
    }

    /// What the operator's view shows of the copy.
    var status: StoreStatus.Copy {
        let kept = kept.withLock { $0 }
        return StoreStatus.Copy(
            folder: folder, writes: kept.writes, pagesFromCopy: counts.value(0), pagesFromStore: counts.value(1),
            catchUps: kept.catchUps, rowsCopied: kept.rowsCopied, rebuilds: kept.rebuilds, problem: kept.problem)
    }
}
