/// What the planner keeps of each page in play, and of each running job.
extension PrewarmPlanner {
    /// Everything the planner knows of one page, in one entry of one table.
    /// Before, the readers who want a page, the variants warmed, how to ask
    /// for it and its job were four tables: a view that steps a reader
    /// through a lead of eight looked pages up about fifty times, each hashed
    /// afresh; one entry a page makes it about twenty.
    struct PageState {
        /// The readers who want it, by rank and by variant.
        var demand = PageDemand()
        /// The variants it has been warmed in since the revision changed (0: none).
        var warmed: UInt8 = 0
        /// How to ask the store for it, learnt from a page beside it.
        var target: Target?
        /// Whether a job for it waits in `queued` or runs in `running`.
        var job = JobMark.none

        /// The variants its readers want that are not warmed yet: what a job for it makes.
        var unwarmed: UInt8 { demand.variants & ~warmed }

        /// Whether the entry holds nothing: no reader wants the page, nothing
        /// was warmed, no way to ask for it is known, and no job holds it.
        var isIdle: Bool { job == .none && warmed == 0 && target == nil && demand.isEmpty }
    }

    /// Where a page's job is.
    enum JobMark {
        case none, queued, running
    }

    /// A running job: when it started, and whether it was asked to cancel
    /// (each is asked once).
    struct Running {
        var job: Job
        var startedAt: Double
        var cancelling = false
    }

    /// How many pages the table holds before it forgets those no reader
    /// wants: four thousand pages of targets, as many as pre-warm kept before.
    static var pagesKept: Int { 4096 }
}
