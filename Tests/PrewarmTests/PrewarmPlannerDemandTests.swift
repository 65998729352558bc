import Testing

@testable import Prewarm

/// A page's readers are counted in fixed blocks (`PageDemand`): the lead is
/// capped so that every rank fits, and counts come and go as readers move.
@Suite struct PrewarmPlannerDemandTests {
    typealias Planner = PrewarmPlanner<String, String>

    @Test func theLongestLeadAnOperatorCanAskForIsKept() {
        // `--prewarm` takes 0 … 20 (WarmfeedConfiguration): none of them is cut.
        let planner = Planner(lead: 20)
        #expect(planner.lead == 20 && planner.maxLead == 20)
    }

    @Test func aLeadPastTheCapIsCappedAndItsRanksFit() {
        var planner = Planner(lead: 40, maxLead: 100)
        #expect(planner.lead == Planner.leadCap)
        #expect(planner.maxLead == Planner.leadCap)
        // A reader at the cap wants the cap's pages ahead and one behind, each at its rank.
        _ = planner.readerViewed("r", page: 100, older: "after-100", newer: "before-100", revision: 0, variants: 3, now: 0)
        #expect(planner.distance(100) == 0)
        #expect(planner.distance(100 + Planner.leadCap) == Planner.leadCap)
        #expect(planner.distance(99) == 2 * Planner.leadCap + 1)
        #expect(planner.distance(100 + Planner.leadCap + 1) == Int.max)
        #expect(planner.wantedVariants(105) == 3)
    }

    @Test func aPageLeavesTheTableWhenItsLastReaderMovesOn() {
        var planner = Planner(lead: 2, maxLead: 8)
        _ = planner.readerViewed("a", page: 10, older: nil, newer: nil, revision: 0, variants: 1, now: 0)
        _ = planner.readerViewed("b", page: 11, older: nil, newer: nil, revision: 0, variants: 2, now: 0)
        // Page 11: b is on it (rank 0, 2x), a is one ahead of it (rank 1, 1x).
        #expect(planner.distance(11) == 0)
        #expect(planner.wantedVariants(11) == 3)
        // b jumps far away: 11 is a's alone again.
        _ = planner.readerViewed("b", page: 500, older: nil, newer: nil, revision: 0, variants: 2, now: 1)
        #expect(planner.distance(11) == 1)
        #expect(planner.wantedVariants(11) == 1)
        // a jumps too: no one wants 9 … 12 any more.
        _ = planner.readerViewed("a", page: 900, older: nil, newer: nil, revision: 0, variants: 1, now: 2)
        for page in 9...12 { #expect(!planner.isWanted(page)) }
        #expect(planner.isWanted(500) && planner.isWanted(900))
    }

    /// The table kept as readers move (one lookup a page whose rank or
    /// variants changed, none for one that kept them) is the table counting
    /// every reader afresh makes: through steps, turns, jumps, views of the
    /// same page, screens that change, paces that lengthen and shorten leads
    /// once jobs are timed, readers evicted for room and forgotten for silence.
    @Test func theTableKeptAsReadersMoveIsTheTableCountedAfresh() {
        var planner = Planner(lead: 2, maxLead: 8, readerTTL: 30, maxReaders: 7)
        var random = SystemRandomNumberGenerator()
        var now = 0.0
        var running: [Planner.Job] = []
        var pages: [String: Int] = [:]
        for step in 0..<5000 {
            now += [0.001, 0.05, 0.4, 2, 45][Int.random(in: 0..<5, using: &random)] * (step % 97 == 0 ? 1 : 0.2)
            let reader = "r\(Int.random(in: 0..<10, using: &random))"
            let at = pages[reader] ?? Int.random(in: 1...60, using: &random)
            let page =
                switch Int.random(in: 0..<10, using: &random) {
                case 0: Int.random(in: 1...60, using: &random)  // a jump
                case 1, 2: at  // the same page again
                case 3: max(1, at - 1)  // back
                default: at + 1
                }
            pages[reader] = page
            let variants = UInt8([1, 2, 3, 5][Int.random(in: 0..<4, using: &random)])
            let actions = planner.readerViewed(
                reader, page: page, target: "p\(page)", older: "p\(page + 1)", newer: page > 1 ? "p\(page - 1)" : nil,
                revision: step / 1000, variants: variants, now: now)
            for case .start(let job) in actions { running.append(job) }
            // Jobs end, timed, so that paces give leads from 1 to 8 and reaches beside them.
            while running.count > 1 || (!running.isEmpty && Bool.random(using: &random)) {
                let job = running.removeFirst()
                _ = planner.finished(job, older: "p\(job.page + 1)", newer: "p\(job.page - 1)", now: now + Double.random(in: 0...0.5, using: &random))
            }
            let (kept, afresh) = (planner.demand, planner.rebuiltDemand)
            if kept != afresh {
                let pages = Set(kept.keys).union(afresh.keys).filter { kept[$0] != afresh[$0] }.sorted()
                Issue.record("after view \(step), pages \(pages) are counted otherwise than afresh")
                return
            }
        }
        let leads = planner.leads
        #expect(leads.keys.contains { $0 > 2 } || leads.keys.contains(1), "the leads never moved from the first: \(leads)")
    }

    /// A drain's views given at once move every reader as the same views
    /// one by one do, and start only pages some reader still wants after
    /// the last: a page a reader passed within the batch is not started.
    @Test func aBatchOfViewsMovesReadersAsOneByOneAndStartsOnlyWhatIsWantedAfter() {
        var one = Planner(lead: 3, concurrency: 2)
        var batch = Planner(lead: 3, concurrency: 2)
        var views: [Planner.View] = []
        for page in 1...6 {
            views.append(Planner.View("a", page: page, target: "a\(page)", older: "a\(page + 1)", newer: "a\(page - 1)", revision: 0, now: 0))
            views.append(Planner.View("b", page: 40 - page, target: "b\(page)", older: "b\(page + 1)", newer: "b\(page - 1)", revision: 0, now: 0))
        }
        var startedOne: [Int] = []
        for view in views {
            let actions = one.readerViewed(
                view.reader, page: view.page, target: view.target, older: view.older, newer: view.newer, revision: view.revision, now: view.now)
            for case .start(let job) in actions { startedOne.append(job.page) }
        }
        let actions = batch.readersViewed(views)
        #expect(batch.demand == one.demand)
        #expect(batch.demand == batch.rebuiltDemand)
        let startedBatch = actions.compactMap { if case .start(let job) = $0 { job.page } else { nil } }
        // One by one, the first views started pages their readers left at once (cancelled since).
        #expect(startedOne.contains { !one.isWanted($0) })
        #expect(startedBatch.count == 2 && startedBatch.allSatisfy { batch.isWanted($0) && batch.distance($0) <= 1 }, "\(startedBatch)")
        #expect(!actions.contains { if case .cancel = $0 { true } else { false } })
    }

    /// Readers who roam a deep feed leave behind pages warmed and pages
    /// learnt; the table forgets those no reader wants once it holds more
    /// than `pagesKept`, so it stays bounded, while the pages readers want
    /// keep their counts and their jobs, and a page still held is not
    /// warmed twice.
    @Test func readersRoamingADeepFeedLeaveABoundedTable() {
        var planner = Planner(lead: 2, maxLead: 8, concurrency: 2)
        var random = SystemRandomNumberGenerator()
        var touched: Set<Int> = []
        var largest = 0
        for step in 0..<20_000 {
            let reader = "r\(step % 10)"
            let page = Int.random(in: 1...1_000_000, using: &random)
            touched.formUnion([page - 1, page, page + 1])
            let actions = planner.readerViewed(
                reader, page: page, target: "p\(page)", older: "p\(page + 1)", newer: "p\(page - 1)", revision: 0, now: Double(step))
            // Each job ends at once, and those its ends start in turn.
            var started = actions.compactMap { if case .start(let job) = $0 { job } else { nil } }
            while let job = started.popLast() {
                let next = planner.finished(job, older: "p\(job.page + 1)", newer: "p\(job.page - 1)", now: Double(step))
                started += next.compactMap { if case .start(let job) = $0 { job } else { nil } }
            }
            largest = max(largest, planner.pages.count)
        }
        #expect(touched.count > 4 * Planner.pagesKept, "the readers never roamed past what the table keeps")
        // Ten readers want at most ten pages each; a view adds a handful of entries before the next sweep.
        #expect(largest <= Planner.pagesKept + 16, "the table held \(largest) pages")
        #expect(planner.demand == planner.rebuiltDemand)
        // The sweeps left the planner whole: a reader landing far away gets their page and the next started.
        #expect(planner.load.running == 0)
        let actions = planner.readerViewed("r0", page: 2_000_000, target: "far", older: "p2000001", newer: "p1999999", revision: 0, now: 30_000)
        #expect(Set(actions) == [.start(Planner.Job(page: 2_000_000, target: "far")), .start(Planner.Job(page: 2_000_001, target: "p2000001"))])
    }
}
