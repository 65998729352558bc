extension Thumbnailer {
    /// A generated original, for the demo origin and the tests: a large,
    /// visually varied image (gradient, soft shapes, grain) whose bytes depend
    /// only on the arguments, so the same call always returns the same bytes.
    /// A 1600 × 1200 JPEG is a few hundred kilobytes, like a photo.
    ///
    /// Painted and encoded on the thumbnailer's workers (in a release build,
    /// about 60 ms of CPU for a 1600 × 1200 JPEG, 100 ms for PNG and WebP):
    /// an origin that serves them should make them once, not per request.
    ///
    /// - Parameter orientation: for JPEG, an EXIF orientation (1 to 8) to store
    ///   in the file, so the stored pixels are shown turned (5 to 8: a quarter
    ///   turn, width and height swapped), to exercise auto-rotation. Other
    ///   formats carry no metadata.
    /// - Throws: ``ThumbnailError/failed(_:)`` for a size of no pixels or over
    ///   ``ThumbnailLimits/maxPixels``, an orientation outside 1 to 8, or when
    ///   libvips cannot encode it.
    public func original(
        width: Int, height: Int, seed: UInt64, format: OriginalFormat, orientation: Int? = nil
    ) async throws(ThumbnailError) -> [UInt8] {
        guard width > 0, height > 0, width * height <= limits.maxPixels else {
            throw .failed("original size \(width)×\(height) is outside the pixel limit")
        }
        guard orientation.map({ (1...8).contains($0) }) ?? true else {
            throw .failed("orientation \(orientation ?? 0) is not 1 to 8")
        }
        let stored = format == .jpeg ? orientation : nil
        let encoding: LibVips.Encoding =
            switch format {
            case .jpeg: stored == nil ? .jpeg(quality: 85) : .jpegKeepingMetadata(quality: 85)
            // The fast ends of PNG's and WebP's settings: an origin's files are
            // made once, by someone else's encoder; here the making is on our clock.
            case .png: .png(compression: 1)
            case .webp: .webp(quality: 80, effort: 0)
            }
        let cost = DecodeCost.painting(width: width)
        let result: Result<[UInt8], ThumbnailError> = await perform(
            cost: cost, refused: .failure(.overDecodeBudget(bytes: cost)), cancelled: .failure(.cancelled)
        ) {
            guard LibVips.started else { return .failure(.failed("libvips did not start")) }
            let size = OriginalPainter.sketchSize(width: width, height: height)
            let painter = OriginalPainter(width: size.width, height: size.height, seed: seed)
            let grain = painter.grain
            let encoded = painter.paint().withUnsafeBytes { raw in
                LibVips.withRGB(raw, width: size.width, height: size.height) { sketch in
                    LibVips.withEnlarged(sketch, width: width, height: height, grain: grain.sigma, seed: grain.seed) {
                        image -> [UInt8]? in
                        guard image.width == width, image.height == height else { return nil }
                        if let stored { image.setIntField("orientation", stored) }
                        return image.save(encoding)
                    }
                }
            }
            guard case .some(.some(.some(let bytes))) = encoded else {
                return .failure(.failed("libvips could not make an original: \(LibVips.takeError())"))
            }
            return .success(bytes)
        }
        return try result.get()
    }
}
