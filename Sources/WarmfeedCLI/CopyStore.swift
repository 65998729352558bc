import ArgumentParser
import FeedIngest
import Foundation
import Logging
import Reckoning
import Warmfeed
import WarmfeedCore

/// `warmfeed copy-store FROM TO`: moves a feed from one store to another.
struct CopyStore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy-store",
        abstract: "Copy a feed into an empty store, e.g. from SQLite to PostgreSQL when one machine is no longer enough (or back).",
        discussion: """
            FROM and TO are store URLs: sqlite:PATH or postgres://user:password@host:port/database. \
            The copy is one transaction on the target: it lands whole or not at all. Items keep their ids \
            and the feed its epoch, so links and cursors readers hold stay valid. Stop the servers writing \
            to FROM first (their imports would not be copied).
            """
    )

    @Argument(help: "The store to copy from.")
    var from: String

    @Argument(help: "The empty store to copy into (created and migrated when missing).")
    var to: String

    @Flag(help: "Print only the summary, no progress.")
    var quiet = false

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "warmfeed")
        let source: StoreLocation
        let target: StoreLocation
        do {
            source = try StoreLocation(from, dataFolder: ".")
            target = try StoreLocation(to, dataFolder: ".")
        } catch {
            printError("warmfeed copy-store: \(error)")
            throw ExitCode(2)
        }
        guard source != target else {
            printError("warmfeed copy-store: FROM and TO are the same store")
            throw ExitCode(2)
        }
        let fromStore: any FeedStore
        let toStore: any FeedStore
        do {
            fromStore = try await source.open(logger: logger)
        } catch {
            printError("warmfeed copy-store: cannot open \(source): \(error)")
            throw ExitCode(2)
        }
        do {
            toStore = try await target.open(logger: logger)
        } catch {
            await fromStore.close()
            printError("warmfeed copy-store: cannot open \(target): \(error)")
            throw ExitCode(2)
        }
        let line = ProgressLine(enabled: !quiet, verb: "copying")
        let start = ContinuousClock.now
        do {
            let copied = try await StoreCopy.copy(from: fromStore, to: toStore, progress: { line.show($0) })
            line.finish()
            let seconds = (ContinuousClock.now - start).inSeconds
            print(
                "Copied \(copied.formatted()) items from \(source) to \(target) in \(String(format: "%.1f", seconds)) s (\(Int(Double(copied) / max(seconds, 0.001)).formatted())/s)."
            )
            await fromStore.close()
            await toStore.close()
        } catch {
            line.finish()
            printError("warmfeed copy-store: \(error)")
            printError("Nothing was written: the target is as it was.")
            await fromStore.close()
            await toStore.close()
            throw ExitCode(1)
        }
    }
}
