/// A store this binary must not open.
public enum StoreSchemaError: Error, CustomStringConvertible, Equatable {
    /// A newer warmfeed migrated the store past the migrations this one knows:
    /// reading it could misread or damage it.
    case newerThanThisBinary(store: String, known: String)

    /// What to do about it, in an operator's words.
    public var description: String {
        switch self {
        case .newerThanThisBinary(let store, let known):
            "the store at \(store) was migrated by a newer warmfeed (this one knows migrations up to \"\(known)\"); "
                + "run that version, or a newer one, on it"
        }
    }
}
