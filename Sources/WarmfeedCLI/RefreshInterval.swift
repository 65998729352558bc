import ArgumentParser
import Foundation

/// A duration written as `90`, `30s`, `10m`, `1h` or `1d`.
struct RefreshInterval: ExpressibleByArgument {
    let duration: Duration

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Int64)] = [("ms", 0), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        var seconds: Int64?
        for (suffix, factor) in units where text.hasSuffix(suffix) && factor > 0 {
            if suffix == "s", text.hasSuffix("ms") { continue }
            seconds = Int64(text.dropLast(suffix.count)).map { $0 * factor }
            break
        }
        if seconds == nil { seconds = Int64(text) }
        guard let seconds, seconds > 0, seconds <= 7 * 86_400 else { return nil }
        duration = .seconds(seconds)
    }
}
