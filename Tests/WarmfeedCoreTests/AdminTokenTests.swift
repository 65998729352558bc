import Foundation
import Testing

@testable import WarmfeedCore

@Suite struct AdminTokenTests {
    static let long = "a-token-of-thirty-two-characters"

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func comesFromTheEnvironmentOrAFileThatPersists() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(Self.long.count == AdminToken.minimumLength)
        #expect(try AdminToken.load(dataFolder: folder.path, environment: ["WARMFEED_ADMIN_TOKEN": Self.long]).value == Self.long)
        let generated = try AdminToken.load(dataFolder: folder.path, environment: [:])
        #expect(generated.value.count == AdminToken.minimumLength)
        #expect(generated.value.allSatisfy { $0.isLetter || $0.isNumber })
        #expect(try AdminToken.load(dataFolder: folder.path, environment: [:]).value == generated.value)
        let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("admin-token").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Another data folder, another token.
        let other = try Self.folder()
        defer { try? FileManager.default.removeItem(at: other) }
        #expect(try AdminToken.load(dataFolder: other.path, environment: [:]).value != generated.value)
    }

    @Test func aTokenShorterThan32CharactersIsRefusedWhereverItComesFrom() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let short = String(Self.long.dropLast())
        #expect(throws: AdminToken.Refused.self) { try AdminToken.load(dataFolder: folder.path, environment: ["WARMFEED_ADMIN_TOKEN": short]) }
        do {
            _ = try AdminToken.load(dataFolder: folder.path, environment: ["WARMFEED_ADMIN_TOKEN": "change-me"])
            Issue.record("change-me was taken")
        } catch {
            // The message names where the token came from and the rule, never the token.
            let text = "\(error)"
            #expect(text.contains("WARMFEED_ADMIN_TOKEN") && text.contains("at least 32 characters") && !text.contains("change-me"), "\(text)")
        }
        // Nothing was written for a token refused; a short one written by hand is refused too.
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("admin-token").path))
        try "by-hand\n".write(to: folder.appendingPathComponent("admin-token"), atomically: true, encoding: .utf8)
        #expect(throws: AdminToken.Refused.self) { try AdminToken.load(dataFolder: folder.path, environment: [:]) }
        #expect(throws: AdminToken.Refused.self) { try AdminToken.check(short, from: "the configured admin token") }
        try AdminToken.check(Self.long, from: "the configured admin token")
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
