import Foundation

@testable import OriginFetcher

extension OriginFetcher {
    /// The download's outcome as a value, so a test can compare errors.
    func downloadResult(
        _ url: String, to path: String, conditional: ConditionalRequest = .init(),
        headers: [(String, String)] = [], limits: FetchLimits = FetchLimits(), passing: Set<Int> = []
    ) async -> Result<Download, FetchError> {
        do {
            return .success(
                try await download(url, to: path, conditional: conditional, headers: headers, limits: limits, passing: passing))
        } catch {
            return .failure(error)
        }
    }
}

extension Result where Success == Download, Failure == FetchError {
    /// The error, or `nil` for a download.
    var failure: FetchError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A fresh directory for one test's files, removed when `body` returns.
func withScratchDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-download-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// What lies at a path, for checking that a failed download left nothing behind.
enum Disk {
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// The files in `directory`, sorted.
    static func listing(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}

/// This process's memory figures from /proc/self/status, in bytes.
enum ProcessMemory {
    /// A field such as `VmHWM` (the peak resident set) or `VmRSS`.
    static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Resets `VmHWM` to the current resident set (Linux 4.0 and later);
    /// whether the kernel took it.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
