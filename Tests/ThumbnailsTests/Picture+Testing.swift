import WarmfeedCore

@testable import Thumbnails

/// Tests name pictures by item id alone where the tag plays no part: item 7's picture is `7`.
extension Picture: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self.init(itemID: value, tag: 0)
    }
}

extension ThumbnailKey {
    /// Item `itemID`'s thumbnail in `variant`, its picture's tag 0.
    init(itemID: Int64, variant: ThumbnailVariant) {
        self.init(picture: Picture(itemID: itemID, tag: 0), variant: variant)
    }
}

/// Disk keys of the index's tests: item bits alone, tag 0.
extension DiskKey: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: UInt64) {
        self.init(item: value, tag: 0)
    }
}
