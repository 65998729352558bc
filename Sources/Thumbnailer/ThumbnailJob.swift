import ImageFormats

/// One thumbnail to make: run on a worker thread, start to finish.
struct ThumbnailJob: Sendable {
    /// Centre, not attention: a feed's thumbnail box should show the middle
    /// of the picture, the same way every time, and attention's saliency pass
    /// about doubles the CPU per thumbnail (measured here with vipsthumbnail on
    /// 1600 × 1200 JPEGs: about 36 ms against 18 ms), which would break the
    /// budget of 1.5× vipsthumbnail's centre-crop time for a small gain.
    static let crop = LibVips.Crop.centre

    var source: [UInt8]
    var width: Int
    var height: Int
    var format: ImageFormat
    /// The encoder's quality; for an AVIF that matches its WebP, the quality
    /// used only when SSIM cannot be measured.
    var quality: Int
    /// Whether an AVIF's quality is chosen so its SSIM reaches the WebP's
    /// (``QualitySearch``) instead of being `quality`.
    var matchesWebP = false
    var limits: ThumbnailLimits

    /// What the source's header says, checked against the pixel limit, and
    /// what making this thumbnail of it will hold (``DecodeCost``). Reads the
    /// header only.
    func facts() -> Result<(facts: SourceFacts, cost: Int), ThumbnailError> {
        source.withUnsafeBytes { bytes in
            SourceHeader.facts(of: bytes).flatMap { facts in
                // Width × height is the same whichever way the image is turned.
                guard facts.pixels <= limits.maxPixels else {
                    return .failure(.tooManyPixels(width: facts.info.width, height: facts.info.height))
                }
                return .success((facts, DecodeCost.bytes(of: facts, width: width, height: height, format: format)))
            }
        }
    }

    /// Makes the thumbnail of a source whose header said `info`: one decode
    /// with shrink-on-load, resize, crop and save, stopped at `deadline`
    /// (an AVIF's quality search, whose encodes read pixels in memory, ends
    /// at the next quality tried instead).
    /// `hurry` says whether more urgent work waits for this thread (an AVIF's
    /// quality search then ends early, as it does past the deadline).
    func run(info: ImageInfo, deadline: ContinuousClock.Instant, hurry: () -> Bool = { false }) -> Result<Thumbnail, ThumbnailError> {
        source.withUnsafeBytes { bytes in
            let encoding: LibVips.Encoding =
                switch format {
                case .webp: .webp(quality: quality)
                case .jpeg: .jpeg(quality: quality)
                case .avif: .avif(quality: quality, effort: Self.avifEffort)
                }
            var expired = false
            let made = LibVips.withThumbnail(
                of: bytes, width: width, height: height, crop: Self.crop, failOn: .error
            ) { image -> Thumbnail? in
                let (saved, stopped) = WorkDeadlines.shared.run(image, until: deadline) {
                    matchesWebP
                        ? Self.avifMatchingWebP(image, fallback: quality, hurry: { hurry() || deadline <= .now })
                        : image.save(encoding)
                }
                expired = stopped
                guard var encoded = saved else { return nil }
                if format == .webp {
                    guard let stripped = WebPMetadata.stripped(encoded) else { return nil }
                    encoded = stripped
                }
                return Thumbnail(bytes: encoded, width: image.width, height: image.height, format: format)
            }
            guard let made, var thumbnail = made else {
                let message = LibVips.takeError()
                if expired { return .failure(.timedOut) }
                if SourceHeader.isCut(bytes, format: info.format) { return .failure(.truncated) }
                return .failure(.failed("libvips could not make a thumbnail of a \(info.format) image: \(Self.firstLine(of: message))"))
            }
            // An item's preview comes from its WebP or JPEG: decoding an AVIF back costs more.
            if format != .avif { thumbnail.preview = Self.preview(of: thumbnail) }
            return .success(thumbnail)
        }
    }

    /// The preview of a thumbnail just made, read back from its own bytes at
    /// a tenth of its size (a fraction of a millisecond).
    static func preview(of thumbnail: Thumbnail) -> ThumbnailPreview? {
        let made = thumbnail.bytes.withUnsafeBytes { bytes in
            LibVips.withThumbnail(
                of: bytes, width: max(1, thumbnail.width / 10), height: max(1, thumbnail.height / 10), crop: .centre, failOn: .error
            ) { small -> ThumbnailPreview? in
                small.pixels().flatMap { ThumbnailPreview(pixels: $0, width: small.width, height: small.height, bands: small.bands) }
            }
        }
        guard let made, let preview = made else {
            _ = LibVips.takeError()
            return nil
        }
        return preview
    }

    /// The first line of a libvips error message, for a log line.
    private static func firstLine(of message: String) -> String {
        let line = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        return line.isEmpty ? "no detail" : String(line.prefix(200))
    }
}
