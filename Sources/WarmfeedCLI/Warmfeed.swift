import ArgumentParser

/// The `warmfeed` command.
@main
struct WarmfeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warmfeed",
        abstract: "An endless, server-rendered feed whose thumbnails are warm before the reader reaches them.",
        subcommands: [Serve.self, Origin.self, Import.self, CopyStore.self, MeasureRender.self],
        defaultSubcommand: Serve.self
    )
}
