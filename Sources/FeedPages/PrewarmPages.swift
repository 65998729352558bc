import WarmfeedCore

/// Where the pre-warmer gets the pages it warms: read from the store and
/// rendered through the page cache, so a reader who arrives finds the page
/// rendered too. Given to the `Prewarmer` when it is made, so neither side has
/// to be patched in after the other exists.
package protocol PrewarmPages: Sendable {
    /// The page `query` names, rendered and kept, and its number; nil when the
    /// feed no longer has it (or the store is not answering).
    func pageForWarming(_ query: PageQuery) async -> (page: Page, number: Int)?
}
