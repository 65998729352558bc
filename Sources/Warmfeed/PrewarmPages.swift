import WarmfeedCore

/// Where pre-warm gets the pages it warms: rendered (and kept) through the
/// page service, so the reader who arrives finds the page already rendered.
protocol PrewarmPages: Sendable {
    /// Renders the page `query` names; nil when it no longer exists.
    func pageForWarming(_ query: PageQuery) async -> (page: Page, number: Int)?
}
