// TEMPORARY stand-ins until the parsers land from their branches.
import Foundation
public enum JSONFeedParser {
    public static func parse(_ input: FeedInput, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void) throws -> FeedMetadata { throw ImportError("pending") }
}
public enum XMLFeedParser {
    public static func parse(_ input: FeedInput, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void) throws -> FeedMetadata { throw ImportError("pending") }
}
public struct ImageFacts: Sendable, Equatable { public var width: Int; public var height: Int; public var taken: Date?; public init(width: Int, height: Int, taken: Date?) { self.width = width; self.height = height; self.taken = taken } }
public enum ImageFolder {
    public static func scan(_ root: String, facts: (String) -> ImageFacts?, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void) throws -> FeedMetadata { throw ImportError("pending") }
}
