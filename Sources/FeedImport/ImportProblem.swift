/// Something wrong with part of a source that did not stop the import: a
/// malformed stretch, an entry without an identifier. Reported with the line
/// and a reason; the well-formed entries around it still import.
public struct ImportProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source line (1-based), when known.
    public var line: Int?
    /// What was wrong, in a phrase an operator understands ("no title, link or id").
    public var reason: String

    /// A problem at `line`.
    public init(line: Int?, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String {
        if let line { return "line \(line): \(reason)" }
        return reason
    }
}

/// Why a whole import failed. Nothing of the source is written when one of
/// these is thrown: the store stays as it was.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source line (1-based), when the failure has one.
    public var line: Int?
    /// The clear message shown to the operator ("HTML page, not a feed").
    public var message: String

    /// An import failure.
    public init(_ message: String, line: Int? = nil) {
        self.message = message
        self.line = line
    }

    public var description: String {
        if let line { return "\(message) (line \(line))" }
        return message
    }
}
