import ArgumentParser
import Logging

/// `--log-level`: swift-log's levels, by their names.
enum LogLevel: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical

    /// The level the log handler lets through.
    var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }
}
