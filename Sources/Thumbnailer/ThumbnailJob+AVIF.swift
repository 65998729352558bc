import ImageFormats

extension ThumbnailJob {
    /// libaom's effort: at 4 it cost three times the CPU of 3 for 1% fewer bytes.
    static let avifEffort = 3

    /// `image` as AVIF at the lowest quality whose SSIM reaches that of its
    /// WebP (made here at the WebP's own quality, and left): about five AVIF
    /// encodes of pixels resized once. At `fallback` when SSIM cannot be
    /// measured: not 8 bits a band, smaller than SSIM's window, or a band count
    /// the decoders change (a grey picture comes back from WebP as RGB).
    /// `hurry` (``QualitySearch``) may end the search at a quality that
    /// reaches the WebP's SSIM but is not the lowest.
    static func avifMatchingWebP(_ image: VipsImageView, fallback: Int, hurry: () -> Bool = { false }) -> [UInt8]? {
        let made = image.withPixelsInMemory { pixels -> [UInt8]? in
            guard pixels.isEightBit, let reference = pixels.pixels(),
                let webp = pixels.save(.webp(quality: ImageFormat.webp.thumbnailQuality)),
                let target = similarity(of: webp, to: reference, of: pixels)
            else { return pixels.save(.avif(quality: fallback, effort: avifEffort)) }
            var encoded: [Int: [UInt8]] = [:]
            let chosen = QualitySearch.lowest(on: QualitySearch.avifLadder, reaching: target, hurry: hurry) { quality in
                guard let avif = pixels.save(.avif(quality: quality, effort: avifEffort)) else { return nil }
                encoded[quality] = avif
                return similarity(of: avif, to: reference, of: pixels)
            }
            if let chosen, let avif = encoded[chosen] { return avif }
            return pixels.save(.avif(quality: fallback, effort: avifEffort))
        }
        return made ?? nil
    }

    /// The SSIM of `encoded`, decoded, against the `reference` pixels of
    /// `image`; nil when it cannot be decoded or decodes to another shape.
    private static func similarity(of encoded: [UInt8], to reference: [UInt8], of image: VipsImageView) -> Double? {
        let decoded = encoded.withUnsafeBytes { bytes in
            LibVips.withHeader(of: bytes) { copy -> [UInt8]? in
                guard copy.width == image.width, copy.height == image.height, copy.bands == image.bands, copy.isEightBit
                else { return nil }
                return copy.pixels()
            }
        }
        guard let decoded, let pixels = decoded else {
            _ = LibVips.takeError()
            return nil
        }
        return SSIM.of(reference, pixels, width: image.width, height: image.height, bands: image.bands)
    }
}
