import Foundation

extension FaultyOrigin {
    /// The 251 bytes a `.pattern` body repeats (a prime length, so no
    /// power-of-two block lines up with it).
    public static let patternCycle: [UInt8] = (0..<251).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// The value of header `name` (case-insensitive) in the last request for
    /// `path`, or nil when it had none.
    public func lastRequestHeader(_ name: String, to path: String) -> String? {
        lastRequest(to: path).flatMap { Self.header(name, in: $0) }
    }

    /// The value of the first header `name` (case-insensitive) in a request head.
    static func header(_ name: String, in head: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
