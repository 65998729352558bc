import HTTPTypes

extension HTTPField {
    /// A field whose name is known to be valid, such as a literal
    /// (`HTTPField("Cache-Control", "no-store")`); traps on an invalid name.
    /// Bytes a value may not hold (CR, LF, NUL) become spaces; white space
    /// around the value goes.
    public init(_ name: String, _ value: String) {
        guard let fieldName = HTTPField.Name(name) else { preconditionFailure("not an HTTP field name: \(name)") }
        self.init(name: fieldName, value: value)
    }
}

extension HTTPField.Name {
    /// `Sec-Fetch-Mode`: `navigate` when a browser loads a document.
    public static let secFetchMode = HTTPField.Name("Sec-Fetch-Mode")!

    /// `Sec-CH-DPR`: the client hint of the screen's device pixel ratio, sent
    /// by Chromium to an origin that asked for it with `Accept-CH`.
    public static let secCHDPR = HTTPField.Name("Sec-CH-DPR")!
}
