import FeedImport
import FeedIngest
import Foundation
import Logging
import OriginFetcher
import WarmfeedCore

extension Importer {
    /// An importer for `warmfeed import`: the store at `store` (the SQLite
    /// file in `dataFolder` by default, created when missing), downloads in
    /// `dataFolder`, and a fetcher of its own, no server.
    public static func standalone(store: String?, dataFolder: String) async throws(ImportError) -> Importer {
        let data = URL(fileURLWithPath: dataFolder, isDirectory: true)
        let location: StoreLocation
        do {
            location = try StoreLocation(store, dataFolder: dataFolder)
        } catch {
            throw ImportError(error.description)
        }
        do {
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            let store = try await location.open(logger: Logger(label: "warmfeed"))
            return Importer(store: store, fetcher: OriginFetcher(maxConnectionsPerHost: 2), workFolder: data)
        } catch {
            throw ImportError("cannot open the store \(location): \(error)")
        }
    }
}
