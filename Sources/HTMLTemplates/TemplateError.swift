/// A template that cannot be compiled: which file, which line, and why.
public struct TemplateError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
