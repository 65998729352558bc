import Foundation
import Testing

@testable import Warmfeed

/// The names an operator's dashboards and alerts read: every key path of
/// `/admin/cache` and every series of `/metrics` on a fresh default server.
/// None may go missing when the code is rearranged (issue 24); new ones may
/// be added, and then written into `Tests/operator-names.txt` with
/// `WARMFEED_WRITE_OPERATOR_NAMES=1 swift test --filter OperatorNamesTests`.
@Suite struct OperatorNamesTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("operator-names.txt")

    @Test func everyNameAnOperatorReadsIsStillThere() async throws {
        try await ServedFeed.with(items: 10) { feed in
            var names = Set(Self.keyPaths(try await feed.adminJSON(), under: "admin/cache"))
            let metrics = try await feed.get("/metrics", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")])
            #expect(metrics.status == 200)
            names.formUnion(Self.series(metrics.text))
            if ProcessInfo.processInfo.environment["WARMFEED_WRITE_OPERATOR_NAMES"] == "1" {
                try (names.sorted().joined(separator: "\n") + "\n").write(to: Self.file, atomically: true, encoding: .utf8)
            }
            let kept = try String(contentsOf: Self.file, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(kept.count > 100, "the list names what the server shows")
            let missing = kept.filter { !names.contains($0) }
            #expect(missing.isEmpty, "names an operator reads that are gone: \(missing)")
        }
    }

    /// Every key path of a JSON value: objects by key, arrays as `[]` (their first element stands for all).
    static func keyPaths(_ value: Any, under path: String) -> [String] {
        if let object = value as? [String: Any] {
            return object.flatMap { key, inner in [path + "." + key] + keyPaths(inner, under: path + "." + key) }
        }
        if let array = value as? [Any], let first = array.first {
            return keyPaths(first, under: path + "[]")
        }
        return []
    }

    /// The series names of a Prometheus text exposition (labels dropped).
    static func series(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard !line.hasPrefix("#"), let end = line.firstIndex(where: { $0 == "{" || $0 == " " }) else { return nil }
            return "metrics." + line[..<end]
        }
    }
}
