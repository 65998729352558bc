extension StringProtocol {
    /// Without white space and control characters at either end. Foundation's
    /// `trimmingCharacters(in:)` builds character sets and goes through UTF-16
    /// on Linux: it was a large share of an import's time.
    func trimmingFeedSpace() -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value <= 0x20 || scalar.value == 0x7F || scalar.value == 0x85 || scalar.value == 0xA0
                || scalar.properties.isWhitespace
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
