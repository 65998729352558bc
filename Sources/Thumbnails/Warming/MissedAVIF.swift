import WarmfeedCore

/// An AVIF a reader was answered without, as plain values for a thread's ring.
struct MissedAVIF: BitwiseCopyable {
    var itemID: Int64
    var tag: UInt32
    var scale: Int

    init(_ key: ThumbnailKey) {
        (itemID, tag, scale) = (key.picture.itemID, key.picture.tag, key.variant.scale)
    }

    var key: ThumbnailKey {
        ThumbnailKey(picture: Picture(itemID: itemID, tag: tag), variant: ThumbnailVariant(scale: scale, format: .avif))
    }
}
