/// The structural similarity (SSIM) of two images of the same size, computed
/// as scikit-image's `structural_similarity(a, b, channel_axis=2,
/// data_range=255)` does with its defaults, so the figure the server decides
/// by is the one `bench/avif.py` reports: a 7 × 7 uniform window, K1 0.01 and
/// K2 0.03, sample covariance (N / (N − 1)), and the mean over the colour
/// channels of the mean over the pixels at least 3 from every edge.
///
/// libvips 8.14 has no SSIM, and one is a few dozen lines: five running sums
/// over the pixels (integral images), nothing allocated per pixel.
enum SSIM {
    static let window = 7

    /// The SSIM of the first `min(bands, 3)` channels (an alpha channel is
    /// left out, as the benchmark does) of two 8-bit interleaved images, 1 for
    /// identical ones; nil when the sizes do not match or the image is smaller
    /// than the window.
    static func of(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, bands: Int) -> Double? {
        guard bands > 0, a.count == width * height * bands, b.count == a.count,
            width >= window, height >= window
        else { return nil }
        let channels = min(bands, 3)
        var sum = 0.0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var sums = Sums(width: width, height: height)
                for channel in 0..<channels {
                    sums.fill(a, b, band: channel, of: bands)
                    sum += sums.meanSSIM()
                }
            }
        }
        return sum / Double(channels)
    }

    /// Integral images of x, y, x², y² and xy for one channel: the sum over any
    /// window is four reads.
    private struct Sums {
        let width: Int
        let height: Int
        /// (width + 1) × (height + 1) entries each, row 0 and column 0 zero.
        var x, y, xx, yy, xy: [Double]

        init(width: Int, height: Int) {
            self.width = width
            self.height = height
            let count = (width + 1) * (height + 1)
            x = Array(repeating: 0, count: count)
            y = x
            xx = x
            yy = x
            xy = x
        }

        mutating func fill(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, band: Int, of bands: Int) {
            let stride = width + 1
            x.withUnsafeMutableBufferPointer { x in
                y.withUnsafeMutableBufferPointer { y in
                    xx.withUnsafeMutableBufferPointer { xx in
                        yy.withUnsafeMutableBufferPointer { yy in
                            xy.withUnsafeMutableBufferPointer { xy in
                                for row in 0..<height {
                                    var rx = 0.0
                                    var ry = 0.0
                                    var rxx = 0.0
                                    var ryy = 0.0
                                    var rxy = 0.0
                                    let above = row * stride
                                    let here = above + stride
                                    for column in 0..<width {
                                        let i = (row * width + column) * bands + band
                                        let p = Double(a[i])
                                        let q = Double(b[i])
                                        rx += p
                                        ry += q
                                        rxx += p * p
                                        ryy += q * q
                                        rxy += p * q
                                        let at = here + column + 1
                                        let up = above + column + 1
                                        x[at] = x[up] + rx
                                        y[at] = y[up] + ry
                                        xx[at] = xx[up] + rxx
                                        yy[at] = yy[up] + ryy
                                        xy[at] = xy[up] + rxy
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        /// The mean of the SSIM map over every full window (scikit-image's
        /// crop of (window − 1) / 2 at each edge).
        func meanSSIM() -> Double {
            let n = Double(window * window)
            let covarianceScale = n / (n - 1)
            let c1 = (0.01 * 255) * (0.01 * 255)
            let c2 = (0.03 * 255) * (0.03 * 255)
            let stride = width + 1
            var total = 0.0
            x.withUnsafeBufferPointer { x in
                y.withUnsafeBufferPointer { y in
                    xx.withUnsafeBufferPointer { xx in
                        yy.withUnsafeBufferPointer { yy in
                            xy.withUnsafeBufferPointer { xy in
                                func box(_ s: UnsafeBufferPointer<Double>, _ top: Int, _ left: Int) -> Double {
                                    let bottom = (top + window) * stride
                                    let upper = top * stride
                                    return s[bottom + left + window] - s[upper + left + window] - s[bottom + left] + s[upper + left]
                                }
                                for top in 0...(height - window) {
                                    for left in 0...(width - window) {
                                        let mx = box(x, top, left) / n
                                        let my = box(y, top, left) / n
                                        let vx = covarianceScale * (box(xx, top, left) / n - mx * mx)
                                        let vy = covarianceScale * (box(yy, top, left) / n - my * my)
                                        let vxy = covarianceScale * (box(xy, top, left) / n - mx * my)
                                        total += ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            return total / Double((height - window + 1) * (width - window + 1))
        }
    }
}
