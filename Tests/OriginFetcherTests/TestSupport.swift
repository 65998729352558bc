import HTTPTestClient
@testable import OriginFetcher

extension OriginFetcher {
    /// The fetch's outcome as a value, so a test can compare errors.
    func result(_ url: String, limits: FetchLimits = FetchLimits()) async -> Result<FetchedBody, FetchError> {
        do { return .success(try await fetch(url, limits: limits)) } catch { return .failure(error) }
    }
}

extension Result where Success == FetchedBody, Failure == FetchError {
    /// The error, or `nil` for a body.
    var failure: FetchError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The body, or `nil` for an error.
    var body: FetchedBody? {
        if case .success(let body) = self { return body }
        return nil
    }
}

extension FetchError {
    /// Whether this is `connectionFailed`, whatever libcurl's text.
    var isConnectionFailed: Bool {
        if case .connectionFailed = self { return true }
        return false
    }

    /// Whether this is `invalidResponse`, whatever libcurl's text.
    var isInvalidResponse: Bool {
        if case .invalidResponse = self { return true }
        return false
    }
}

/// Deterministic bytes that are not all alike, so a body mixed up with another
/// shows: a cycle of a prime length, repeated (fast even in a debug build).
func patternBytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
    let cycle = (0..<251).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count { bytes.append(contentsOf: cycle.prefix(count - bytes.count)) }
    return bytes
}

/// Runs `body` with a started origin and fetcher, then stops both, off the cooperative pool.
func withOrigin<T>(
    fetcher: OriginFetcher = OriginFetcher(),
    _ body: (FaultyOrigin, OriginFetcher) async throws -> T
) async throws -> T {
    let origin = try FaultyOrigin()
    do {
        let value = try await body(origin, fetcher)
        fetcher.shutdown()
        try await onThread { origin.stop() }
        return value
    } catch {
        fetcher.shutdown()
        try await onThread { origin.stop() }
        throw error
    }
}
