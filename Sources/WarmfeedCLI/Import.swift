import ArgumentParser
import FeedImport
import FeedIngest
import Foundation
import Warmfeed

/// `warmfeed import SOURCE`: brings a feed or a folder of images into the store.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a feed (JSON Feed, RSS, RSS 1.0, Atom; a file or an http(s) URL) or a folder of images.",
        discussion: """
            Entries are keyed by their id (or link), so importing again changes nothing and an edited \
            entry is updated in place. The import is one transaction: if it fails, the store is as it was, \
            and a server running on the same data folder keeps serving.
            """
    )

    @Option(help: "The data folder (the one `warmfeed serve --data` uses): the SQLite store by default, and downloads; created when missing.")
    var data = "./data"

    @Option(help: ArgumentHelp("The feed store: sqlite:PATH or postgres://user:password@host:port/database; also WARMFEED_STORE.", valueName: "url"))
    var store: String?

    @Argument(help: "A feed file, an http(s) URL of a feed, or a folder of images.")
    var source: String

    @Flag(help: "Print only the summary, no progress.")
    var quiet = false

    func run() async throws {
        let parsed: ImportSource
        let importer: Importer
        do throws(ImportError) {
            parsed = try ImportSource(source)
            importer = try await Importer.standalone(store: store ?? storeFromEnvironment, dataFolder: data)
        } catch {
            printError("warmfeed import: \(error)")
            printError("Nothing was written.")
            throw ExitCode(2)
        }
        let line = ProgressLine(enabled: !quiet)
        let outcome = await Self.run(importer, parsed, line)
        line.finish()
        await importer.close()
        switch outcome {
        case .success(let report):
            for line in report.summaryLines { print(line) }
        case .failure(let error):
            printError("warmfeed import: \(error)")
            printError("Nothing was written: the store is as it was before this import.")
            throw ExitCode(1)
        }
    }

    private static func run(_ importer: Importer, _ source: ImportSource, _ line: ProgressLine) async -> Result<ImportReport, ImportError> {
        do throws(ImportError) {
            return .success(try await importer.run(source, progress: { line.show($0) }))
        } catch {
            return .failure(error)
        }
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
