import Foundation
import Testing
@testable import WarmfeedCore

@Suite struct AdminTokenTests {
    @Test func comesFromTheEnvironmentOrAFileThatPersists() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try AdminToken.load(dataFolder: folder.path, environment: ["WARMFEED_ADMIN_TOKEN": "s3cret"]).value == "s3cret")
        let generated = try AdminToken.load(dataFolder: folder.path, environment: [:])
        #expect(generated.value.count == 32)
        #expect(try AdminToken.load(dataFolder: folder.path, environment: [:]).value == generated.value)
        let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("admin-token").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func matchesOnlyTheExactToken() {
        let token = AdminToken(value: "abcdef", source: "test")
        #expect(token.matches("abcdef"))
        for wrong in ["", "abcde", "abcdefg", "abcdeF", "xbcdef", "abcdef\0"] {
            #expect(!token.matches(wrong), "\(wrong)")
        }
    }
}

@Suite struct LatencyWindowTests {
    @Test func percentilesOfTheRecentWindow() {
        var window = LatencyWindow(capacity: 100)
        #expect(window.percentile(0.5) == nil)
        for ms in 1...100 { window.record(Double(ms) / 1000) }
        #expect(window.percentile(0.5) == 0.051)
        #expect(window.percentile(0.99) == 0.1)
        // Old samples leave the window.
        for _ in 1...100 { window.record(2) }
        #expect(window.percentile(0.01) == 2)
        #expect(window.total == 200)
    }

    @Test func aTimeSeriesKeepsItsCapacity() {
        var series = TimeSeries(capacity: 3)
        for t in 0..<5 { series.append(time: Double(t), value: Double(t) * 2) }
        #expect(series.points.map(\.time) == [2, 3, 4])
    }
}
