import FeedIngest
import Foundation
import Reckoning
import Synchronization
import Warmfeed

/// The import's progress on standard error: one line redrawn in place on a
/// terminal (a bar that sweeps, entries, rate, elapsed), plain lines every few
/// seconds when standard error is a pipe or a file.
final class ProgressLine: Sendable {
    private let enabled: Bool
    private let terminal = isatty(STDERR_FILENO) == 1
    private let state = Mutex((shown: false, lastPlain: -10.0))
    private let verb: String

    init(enabled: Bool, verb: String = "importing") {
        self.enabled = enabled
        self.verb = verb
    }

    func show(_ progress: ImportProgress) {
        guard enabled else { return }
        let seconds = progress.elapsed.inSeconds
        let share = progress.total.map { total in total > 0 ? min(1, Double(progress.entries) / Double(total)) : 1 }
        let text =
            (share.map { String(format: "%3.0f%% · ", $0 * 100) } ?? "")
            + "\(progress.entries.formatted()) entries · \(Int(progress.rate).formatted())/s · \(Self.clock(seconds))"
        state.withLock { state in
            if terminal {
                let width = 20
                let bar: String
                if let share {
                    let filled = Int(share * Double(width))
                    bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                } else {
                    // The source's length in entries is unknown until the end: the bar sweeps to show life.
                    let position = Int(seconds * 8) % (2 * width - 2)
                    let at = position < width ? position : 2 * width - 2 - position
                    bar = String(repeating: "░", count: at) + "█" + String(repeating: "░", count: width - 1 - at)
                }
                FileHandle.standardError.write(Data("\r\u{1B}[2K\(bar) \(text)".utf8))
                state.shown = true
            } else if seconds - state.lastPlain >= 5 {
                state.lastPlain = seconds
                FileHandle.standardError.write(Data("\(verb): \(text)\n".utf8))
            }
        }
    }

    /// Clears the line before the summary.
    func finish() {
        state.withLock { state in
            if state.shown { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            state.shown = false
        }
    }

    private static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }
}
