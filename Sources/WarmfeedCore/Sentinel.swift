/// Where a page's sentinel row goes.
///
/// The sentinel sits after row ⌈threshold × rows⌉ *of its own page*. A ratio of
/// the whole scroll height drifts as pages pile up (with 10 rows a page, "70% of
/// total" fires after 7, 4, 1, then -2 rows of the newest page); a per-page
/// position always leaves the reader the same share of the page to read while
/// the next one loads.
public enum Sentinel {
    /// The number of rows before the sentinel on a page of `rowCount` rows:
    /// ⌈threshold × rowCount⌉, clamped to 1…rowCount (0 for an empty page).
    ///
    /// `threshold` is in (0, 1]. The product is rounded to a millionth before the
    /// ceiling, because 0.7 × 10 is 7.000000000000001 in binary floating point
    /// and would otherwise place the sentinel after row 8.
    public static func rowsBefore(rowCount: Int, threshold: Double) -> Int {
        guard rowCount > 0 else { return 0 }
        let product = (threshold * Double(rowCount) * 1_000_000).rounded() / 1_000_000
        return min(rowCount, max(1, Int(product.rounded(.up))))
    }
}
