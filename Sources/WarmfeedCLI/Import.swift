import ArgumentParser
import FeedImport
import FeedIngest
import Foundation
import Warmfeed

/// `warmfeed import SOURCE...`: brings feeds, folders of images, or the
/// feeds of lists into the store, each into a source of its own.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Import feeds (JSON Feed, RSS, RSS 1.0, Atom; files or http(s) URLs), folders of images, or lists of them (OPML, or one a line).",
        discussion: """
            Entries are keyed by their source and their id (or link), so importing again changes nothing and \
            an edited entry is updated in place. Each source is one transaction: if it fails, the store keeps \
            what it had of that source, and a server running on the same data folder keeps serving.
            """
    )

    @Option(help: "The data folder (the one `warmfeed serve --data` uses): the SQLite store by default, and downloads; created when missing.")
    var data = "./data"

    @Option(help: ArgumentHelp("The feed store: sqlite:PATH or postgres://user:password@host:port/database; also WARMFEED_STORE.", valueName: "url"))
    var store: String?

    @Argument(help: "Feed files, http(s) URLs of feeds, folders of images, or lists of them.")
    var source: [String]

    @Flag(help: "Print only the summary, no progress.")
    var quiet = false

    func run() async throws {
        let importer: Importer
        do throws(ImportError) {
            guard !source.isEmpty else { throw ImportError("name at least one source") }
            for spec in source { _ = try ImportSource(spec) }
            importer = try await Importer.standalone(store: store ?? storeFromEnvironment, dataFolder: data)
        } catch {
            printError("warmfeed import: \(error)")
            printError("Nothing was written.")
            throw ExitCode(2)
        }
        let line = ProgressLine(enabled: !quiet)
        let (feeds, problems) = await SourcePoller.importOnce(source, importer: importer, progress: { line.show($0) })
        line.finish()
        await importer.close()
        for problem in problems { printError("warmfeed import: \(problem)") }
        var failed = 0
        for (feed, outcome) in feeds {
            switch outcome {
            case .success(let report):
                for line in report.summaryLines { print(line) }
            case .failure(let error):
                failed += 1
                printError("warmfeed import: \(SourceURL.redacted(feed.key)): \(error)")
                printError("Nothing was written: the store has what it had of that source.")
            }
        }
        if failed > 0 || feeds.isEmpty { throw ExitCode(1) }
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
