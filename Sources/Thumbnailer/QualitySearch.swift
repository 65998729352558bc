/// AVIF's quality chosen picture by picture: the lowest quality whose SSIM
/// reaches the WebP's of the same thumbnail, so an AVIF is never worse than
/// the WebP it replaces and never better at the cost of bytes.
///
/// A fixed quality cannot do both: at 47, AVIF was 0.73× WebP's bytes at a
/// far higher SSIM on smooth pictures, and 0.68× at a lower one on detailed
/// photographs (docs/benchmarks-history.md, "AVIF"). The search is a binary search over a
/// ladder of qualities (SSIM rises with quality), so about five encodes.
enum QualitySearch {
    /// The qualities tried, lowest first. Below 20 the demo's smoothest
    /// pictures still matched WebP's SSIM, but blocks showed; above 64 AVIF
    /// was bigger than WebP on every picture measured.
    static let avifLadder = Array(stride(from: 20, through: 64, by: 2))

    /// The lowest quality on `ladder` whose `ssim` reaches `target`, the
    /// highest when none does; nil when `ssim` fails (nil) on a quality it
    /// tries. `ssim` is called once per quality tried, about log2 of the
    /// ladder's length times.
    ///
    /// `hurry` is asked each time a quality reaches the target; when it says
    /// yes (more urgent work waits for this thread), the search ends with
    /// that quality, one that reaches the target but may not be the lowest.
    static func lowest(
        on ladder: [Int], reaching target: Double, hurry: () -> Bool = { false }, ssim: (Int) -> Double?
    ) -> Int? {
        guard !ladder.isEmpty else { return nil }
        var low = 0
        var high = ladder.count - 1
        var best = ladder.count - 1
        while low <= high {
            let middle = (low + high) / 2
            guard let measured = ssim(ladder[middle]) else { return nil }
            if measured >= target {
                best = middle
                high = middle - 1
                if hurry() { break }
            } else {
                low = middle + 1
            }
        }
        return ladder[best]
    }
}
