import Testing

@testable import Prewarm
@testable import WarmfeedCore

@Suite struct PrewarmPlannerTests {
    typealias Planner = PrewarmPlanner<String, String>

    /// The jobs `actions` start, in order.
    func started(_ actions: [Planner.Action]) -> [Planner.Job] {
        actions.compactMap { if case .start(let job) = $0 { job } else { nil } }
    }

    /// The jobs `actions` cancel, in order.
    func cancels(_ actions: [Planner.Action]) -> [Planner.Job] {
        actions.compactMap { if case .cancel(let job) = $0 { job } else { nil } }
    }

    /// Runs the jobs `actions` start to completion the way the server does, in
    /// the order they were started: each finished page reveals its neighbours
    /// and frees its place for the next job.
    func drain(_ planner: inout Planner, _ actions: [Planner.Action]) -> [Int] {
        var pending = started(actions)
        var order: [Int] = []
        while !pending.isEmpty {
            let job = pending.removeFirst()
            order.append(job.page)
            pending += started(planner.finished(job, older: "after-\(job.page)", newer: "before-\(job.page)"))
        }
        return order
    }

    @Test func warmsTheNextLeadPagesAheadOfAReader() {
        var planner = Planner(lead: 2)
        let first = planner.readerViewed("r1", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)
        #expect(drain(&planner, first) == [2, 3])
        #expect(planner.counters.done == 2)
        // Page 4 is only wanted once the reader is on page 2.
        let second = planner.readerViewed("r1", page: 2, older: "after-2", newer: "before-2", revision: 0, now: 1)
        #expect(drain(&planner, second) == [4])
    }

    @Test func theNearestPageRunsFirstAcrossReaders() throws {
        var planner = Planner(lead: 3)
        let first = try #require(started(planner.readerViewed("far", page: 10, older: "after-10", newer: nil, revision: 0, now: 0)).first)
        let second = try #require(started(planner.readerViewed("near", page: 50, older: "after-50", newer: nil, revision: 0, now: 0)).first)
        #expect(Set([first.page, second.page]) == [11, 51])
        let next =
            started(planner.finished(first, older: "after-\(first.page)", newer: nil))
            + started(planner.finished(second, older: "after-\(second.page)", newer: nil))
        // Both readers' next pages are at distance 2; neither page 13 nor 53 comes before them.
        #expect(Set(next.map(\.page)) == [12, 52])
    }

    @Test func aJumpCancelsWorkBehindTheReader() throws {
        var planner = Planner(lead: 2)
        let running = try #require(started(planner.readerViewed("r", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)).first)
        #expect(running.page == 2)
        // A deep link to page 40: page 2 is behind the reader now.
        let jump = planner.readerViewed("r", page: 40, older: "after-40", newer: "before-40", revision: 0, now: 1)
        #expect(cancels(jump) == [running])
        let freed = planner.cancelled(running)
        #expect(planner.counters.cancelled == 1)
        // Finishing a cancelled job does not count or reveal anything.
        #expect(planner.finished(running, older: "after-2", newer: nil).isEmpty)
        #expect(planner.counters.done == 0)
        // 39 is the page behind the reader, warmed in the second place while 42 is not known yet.
        #expect(drain(&planner, jump + freed) == [41, 39, 42])
    }

    @Test func arrivingOnAPageStillBeingWarmedKeepsItsJob() throws {
        var planner = Planner(lead: 2)
        let running = try #require(started(planner.readerViewed("r", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)).first)
        #expect(running.page == 2)
        // The reader reaches page 2 while its thumbnails are still being made.
        #expect(cancels(planner.readerViewed("r", page: 2, older: "after-2", newer: "before-2", revision: 0, now: 1)).isEmpty)
        _ = planner.finished(running, older: "after-2", newer: "before-2")
        #expect(planner.counters.done == 1 && planner.counters.cancelled == 0)
    }

    @Test func queuedWorkNoOneWantsIsDropped() {
        // One place, taken by another reader's page, so r's page waits in the queue.
        var planner = Planner(lead: 2, concurrency: 1)
        _ = planner.readerViewed("busy", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)
        _ = planner.readerViewed("r", page: 5, older: "after-5", newer: nil, revision: 0, now: 0)
        #expect(planner.load.queued == 1)
        _ = planner.readerViewed("r", page: 100, older: nil, newer: nil, revision: 0, now: 1)
        #expect(planner.load.queued == 0)
        #expect(planner.counters.cancelled == 1)
    }

    @Test func scrollingBackUpWarmsUpwards() {
        var planner = Planner(lead: 2)
        let down = planner.readerViewed("r", page: 10, older: "after-10", newer: "before-10", revision: 0, now: 0)
        // 9, the page behind, takes the second place while 12 is not known yet.
        #expect(drain(&planner, down) == [11, 9, 12])
        let up = planner.readerViewed("r", page: 9, older: "after-9", newer: "before-9", revision: 0, now: 1)
        #expect(drain(&planner, up) == [8, 7])
        // At the top there is nothing above page 1: only the page behind, below it.
        let top = planner.readerViewed("r", page: 1, older: "after-1", newer: nil, revision: 0, now: 2)
        #expect(started(top).map(\.page) == [2] && planner.load.queued == 0)
    }

    @Test func aPageAlreadyWarmedIsNotWarmedAgainUntilTheFeedChanges() {
        var planner = Planner(lead: 2)
        let first = planner.readerViewed("a", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)
        #expect(drain(&planner, first) == [2, 3])
        #expect(started(planner.readerViewed("b", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)).isEmpty)
        // The store moved on to revision 1.
        let changed = planner.readerViewed("c", page: 1, older: "after-1", newer: nil, revision: 1, now: 0)
        #expect(drain(&planner, changed) == [2, 3])
    }

    @Test func theQueueIsBounded() {
        var planner = Planner(lead: 1, maxQueued: 3, concurrency: 2)
        for reader in 0..<10 {
            _ = planner.readerViewed("r\(reader)", page: reader * 10, older: "x", newer: nil, revision: 0, now: 0)
        }
        // Two run, three wait, the other five are refused.
        #expect(planner.load.running == 2)
        #expect(planner.load.queued == 3)
        #expect(planner.counters.dropped == 5)
    }

    @Test func silentReadersAreForgotten() {
        var planner = Planner(lead: 2, readerTTL: 60)
        _ = planner.readerViewed("old", page: 3, older: "after-3", newer: nil, revision: 0, now: 0)
        _ = planner.readerViewed("new", page: 90, older: "after-90", newer: nil, revision: 0, now: 100)
        #expect(planner.readerCount == 1)
        #expect(!planner.isWanted(4))
        #expect(planner.isWanted(91))
    }
}

/// Each reader's lead follows their pace, with a trailing side one page long.
extension PrewarmPlannerTests {
    /// A planner that has timed one job at `seconds`.
    func planner(warmingAPageIn seconds: Double) throws -> Planner {
        var planner = Planner(lead: 2, maxLead: 8, concurrency: 1)
        let job = try #require(started(planner.readerViewed("timer", page: 1000, older: "after-1000", newer: nil, revision: 0, now: 0)).first)
        _ = planner.finished(job, older: nil, newer: nil, now: seconds)
        #expect(planner.warmSeconds == seconds)
        return planner
    }

    @Test func aSlowReaderGetsOnePageAheadAndAFastOneMoreUpToTheCap() throws {
        var planner = try planner(warmingAPageIn: 1)
        // Until two steps are timed, the configured lead.
        _ = planner.readerViewed("slow", page: 1, older: "after-1", newer: nil, revision: 0, now: 10)
        _ = planner.readerViewed("fast", page: 1, older: "after-1", newer: nil, revision: 0, now: 10)
        #expect(planner.lead(of: "slow")?.lead == 2)
        // One page every 30 s: 1/30 page a second, three warm-ups cover a tenth of a page.
        for page in 2...4 { _ = planner.readerViewed("slow", page: page, older: "after-\(page)", newer: nil, revision: 0, now: 10 + Double(page - 1) * 30) }
        #expect(planner.lead(of: "slow")?.lead == 1)
        // One page every 0.5 s: 2 pages a second, three warm-ups cover 6 pages.
        for page in 2...6 { _ = planner.readerViewed("fast", page: page, older: "after-\(page)", newer: nil, revision: 0, now: 100 + Double(page) * 0.5) }
        #expect(planner.lead(of: "fast")?.lead == 6)
        #expect(planner.isWanted(6 + 6) && !planner.isWanted(6 + 7))
        // Faster still: capped at maxLead.
        for page in 7...12 { _ = planner.readerViewed("fast", page: page, older: "after-\(page)", newer: nil, revision: 0, now: 110 + Double(page) * 0.1) }
        #expect(planner.lead(of: "fast")?.lead == 8)
        #expect(planner.leads == [1: 1, 8: 1, 2: 1])
    }

    @Test func aReaderFasterThanAWarmUpGetsThePagesItCanStillReachInTimeFirst() throws {
        var planner = try planner(warmingAPageIn: 1)
        // Two pages a second, a page warms in 1 s: pages 6 and 7 are reached before a job could warm them.
        for page in 1...5 { _ = planner.readerViewed("fast", page: page, older: "after-\(page)", newer: nil, revision: 0, now: 10 + Double(page) * 0.5) }
        #expect(planner.lead(of: "fast")?.lead == 6)
        // Queued jobs run by rank, lowest first: the reader's page, then 8 … 11, then 6 and 7, then the page behind.
        #expect([5, 8, 9, 10, 11, 6, 7, 4].map(planner.distance) == [0, 3, 4, 5, 6, 9, 10, 17])
        // A slow reader's next page comes first.
        for page in 1...3 { _ = planner.readerViewed("slow", page: 100 + page, older: nil, newer: nil, revision: 0, now: 20 + Double(page) * 10) }
        #expect(planner.distance(104) == 1)
    }

    @Test func theTrailingSideIsOnePageAndSwapsWhenTheReaderTurnsBack() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r", page: 10, older: "after-10", newer: "before-10", revision: 0, now: 0)
        #expect([9, 10, 11, 12].allSatisfy(planner.isWanted) && !planner.isWanted(8) && !planner.isWanted(13))
        // Back up one page: the leading side is now above.
        _ = planner.readerViewed("r", page: 9, older: "after-9", newer: "before-9", revision: 0, now: 5)
        #expect([7, 8, 9, 10].allSatisfy(planner.isWanted) && !planner.isWanted(6) && !planner.isWanted(11))
    }

    @Test func theTrailingPageIsWarmedAfterEveryPageAhead() {
        var planner = Planner(lead: 2, concurrency: 1)
        let actions = planner.readerViewed("r", page: 10, older: "after-10", newer: "before-10", revision: 0, now: 0)
        #expect(drain(&planner, actions) == [11, 12, 9])
    }

    @Test func aReaderWhoLandsByAJumpGetsTheLandingPageWarmedFirst() {
        var planner = Planner(lead: 2, concurrency: 1)
        let landing = planner.readerViewed("r", page: 300, target: "page-300", older: "after-300", newer: "before-300", revision: 0, now: 0)
        #expect(started(landing).map(\.page) == [300])
        #expect(drain(&planner, landing) == [300, 301, 302, 299])
        // A step onto a page is not a landing: that page is the reader's own business now.
        let step = planner.readerViewed("r", page: 301, target: "page-301", older: "after-301", newer: "before-301", revision: 0, now: 5)
        #expect(!started(step).map(\.page).contains(301))
    }
}

extension PrewarmPlannerTests {
    /// The planner keeps, per page, counts of readers at each distance instead of
    /// scanning every reader; this checks those counts against a plain model of
    /// the readers through many moves, jumps, turns and evictions.
    @Test func whatIsWantedMatchesEveryReadersPositionThroughManyMoves() {
        let lead = 3
        var planner = Planner(lead: lead, maxReaders: 6)
        var model: [String: (page: Int, direction: Int, seen: Double)] = [:]
        var random = SystemRandomNumberGenerator()
        for step in 0..<2000 {
            let reader = "r\(Int.random(in: 0..<9, using: &random))"
            let previous = model[reader]
            let page =
                Int.random(in: 0..<4, using: &random) == 0
                ? Int.random(in: 1...40, using: &random)  // a jump
                : max(1, (previous?.page ?? 1) + Int.random(in: -1...2, using: &random))
            var direction = previous?.direction ?? 1
            if let previous, page != previous.page { direction = page > previous.page ? 1 : -1 }
            if previous == nil, model.count >= 6, let oldest = model.min(by: { $0.value.seen < $1.value.seen })?.key {
                model[oldest] = nil
            }
            model[reader] = (page, direction, Double(step))
            _ = planner.readerViewed(reader, page: page, older: nil, newer: nil, revision: 0, now: Double(step) * 0.001)
            for probe in 0...45 {
                let expected = model.values.contains { reader in
                    let ahead = (probe - reader.page) * reader.direction
                    return ahead >= -1 && ahead <= lead  // the lead ahead, and one page behind
                }
                #expect(planner.isWanted(probe) == expected, "step \(step), page \(probe)")
            }
        }
    }
}

/// The plan around the jobs: how many run, what a report frees, what a new
/// revision or a jump asks for.
extension PrewarmPlannerTests {
    /// Many readers moving about while jobs end in any order: never more than
    /// `concurrency` jobs are started and not yet reported, and the planner
    /// agrees with the caller's count of them.
    @Test func neverMoreThanConcurrencyJobsRunAtOnce() {
        var planner = Planner(lead: 3, concurrency: 3)
        var outstanding: [Int: Planner.Job] = [:]
        var random = SystemRandomNumberGenerator()
        func apply(_ actions: [Planner.Action]) {
            for job in started(actions) {
                #expect(outstanding[job.page] == nil, "page \(job.page) started twice")
                outstanding[job.page] = job
            }
            #expect(outstanding.count <= 3)
            #expect(planner.load.running == outstanding.count)
        }
        for step in 0..<1000 {
            if Int.random(in: 0..<3, using: &random) == 0, let job = outstanding.values.randomElement(using: &random) {
                outstanding[job.page] = nil
                if Bool.random(using: &random) {
                    apply(planner.finished(job, older: "after-\(job.page)", newer: "before-\(job.page)"))
                } else {
                    apply(planner.cancelled(job))
                }
            } else {
                let page = Int.random(in: 1...60, using: &random)
                apply(
                    planner.readerViewed(
                        "r\(Int.random(in: 0..<8, using: &random))", page: page, older: "after-\(page)",
                        newer: "before-\(page)", revision: step / 200, now: Double(step)))
            }
        }
    }

    @Test func aFinishedJobFreesItsPlaceForTheNearestQueuedJob() throws {
        var planner = Planner(lead: 3, concurrency: 1)
        let first = try #require(started(planner.readerViewed("a", page: 10, older: "after-10", newer: nil, revision: 0, now: 0)).first)
        #expect(first.page == 11)
        // The only place is taken: b's next page waits.
        #expect(started(planner.readerViewed("b", page: 20, older: "after-20", newer: nil, revision: 0, now: 0)).isEmpty)
        #expect(planner.load == (queued: 1, running: 1))
        // Page 11 reveals page 12, two pages from a; page 21 is one page from b and goes first.
        #expect(planner.finished(first, older: "after-11", newer: "before-11") == [.start(Planner.Job(page: 21, target: "after-20"))])
        #expect(planner.load == (queued: 1, running: 1))
        // Then 12 and 22 are both two pages away: the lower page first.
        let next = planner.finished(Planner.Job(page: 21, target: "after-20"), older: "after-21", newer: "before-21")
        #expect(next == [.start(Planner.Job(page: 12, target: "after-11"))])
    }

    @Test func aNewRevisionWarmsPagesAgain() {
        var planner = Planner(lead: 2)
        // New items at the top: warm the first pages as if a reader stood above page 1.
        let top = planner.readerViewed("~refresh", page: 0, older: "page-1", newer: nil, revision: 7, now: 0)
        #expect(planner.revision == 7)
        #expect(drain(&planner, top) == [1, 2])
        #expect(started(planner.readerViewed("~refresh", page: 0, older: "page-1", newer: nil, revision: 7, now: 1)).isEmpty)
        // More items arrived: the same pages are stale and are warmed again.
        let again = planner.readerViewed("~refresh", page: 0, older: "page-1", newer: nil, revision: 8, now: 2)
        #expect(planner.revision == 8)
        #expect(drain(&planner, again) == [1, 2])
        #expect(planner.counters.done == 4)
    }

    @Test func aJumpCancelsRunningJobsBehindTheReaderAndTheReportCountsIt() throws {
        var planner = Planner(lead: 2, concurrency: 1)
        let running = try #require(started(planner.readerViewed("r", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)).first)
        // The reader jumps to page 40; page 2 still holds the only place until its task stops.
        let jump = planner.readerViewed("r", page: 40, older: "after-40", newer: nil, revision: 0, now: 1)
        #expect(jump == [.cancel(running)])
        #expect(planner.counters.cancelled == 0)
        // Asked once: moving on does not ask again.
        #expect(cancels(planner.readerViewed("r", page: 40, older: "after-40", newer: nil, revision: 0, now: 2)).isEmpty)
        // The task stopped: counted, and its place goes to the page ahead of the reader.
        #expect(planner.cancelled(running) == [.start(Planner.Job(page: 41, target: "after-40"))])
        #expect(planner.counters.cancelled == 1 && planner.counters.done == 0)
        #expect(planner.load == (queued: 0, running: 1))
    }

    @Test func cancellingAJobThatAlreadyFinishedIsHarmless() throws {
        var planner = Planner(lead: 2)
        let running = try #require(started(planner.readerViewed("r", page: 1, older: "after-1", newer: nil, revision: 0, now: 0)).first)
        let jump = planner.readerViewed("r", page: 40, older: "after-40", newer: nil, revision: 0, now: 1)
        #expect(cancels(jump) == [running])
        // The job ended before its task saw the cancellation.
        _ = planner.finished(running, older: "after-2", newer: "before-2")
        #expect(planner.cancelled(running).isEmpty)
        #expect(planner.finished(running, older: "after-2", newer: "before-2").isEmpty)
        #expect(planner.counters.done == 1 && planner.counters.cancelled == 0)
        #expect(planner.load == (queued: 0, running: started(jump).count))
        // A job never started is no different.
        #expect(planner.cancelled(Planner.Job(page: 99, target: "x")).isEmpty)
        #expect(planner.counters.cancelled == 0)
    }
}

/// Readers are kept by recency: the silent and the surplus leave from the old
/// end, one step each, however many are tracked.
extension PrewarmPlannerTests {
    @Test func aCrowdOfReadersIsBoundedAndTheNewestAreKept() {
        var planner = Planner(lead: 1, maxReaders: 1000)
        for reader in 0..<50_000 {
            _ = planner.readerViewed("r\(reader)", page: 1 + reader % 500, older: nil, newer: nil, revision: 0, now: Double(reader) * 0.001)
        }
        #expect(planner.readerCount == 1000)
        // The last 1000 readers are the ones kept: their pages are wanted.
        #expect(planner.isWanted(1 + 49_999 % 500))
    }

    @Test func onlyTheSilentReadersAreForgottenWhenManyAreTracked() {
        var planner = Planner(lead: 1, readerTTL: 60, maxReaders: 10_000)
        for reader in 0..<5000 {
            _ = planner.readerViewed("early\(reader)", page: 10, older: nil, newer: nil, revision: 0, now: 0)
        }
        for reader in 0..<3000 {
            _ = planner.readerViewed("late\(reader)", page: 20, older: nil, newer: nil, revision: 0, now: 50)
        }
        _ = planner.readerViewed("early0", page: 30, older: nil, newer: nil, revision: 0, now: 50)  // one early reader speaks again
        _ = planner.readerViewed("now", page: 40, older: nil, newer: nil, revision: 0, now: 61)
        #expect(planner.readerCount == 3000 + 1 + 1)
        #expect(!planner.isWanted(10) && planner.isWanted(20) && planner.isWanted(30) && planner.isWanted(40))
    }
}

/// Each reader's screen says which variants it loads (a bit each, 1x = 1,
/// 2x = 2): a page is warmed in those, and in no other.
extension PrewarmPlannerTests {
    @Test func aPlainScreensPagesAreWarmedIn1xOnly() {
        var planner = Planner(lead: 2)
        let jobs = started(planner.readerViewed("plain", page: 1, older: "after-1", newer: nil, revision: 0, variants: 1, now: 0))
        #expect(jobs.map(\.variants) == [1])
        #expect(started(planner.readerViewed("dense", page: 10, older: "after-10", newer: nil, revision: 0, variants: 2, now: 0)).map(\.variants) == [2])
    }

    /// A page warmed for a plain screen is warmed again, in 2x only, when a dense one heads for it.
    @Test func aDenseReaderAddsOnly2xToAPageWarmedFor1x() {
        var planner = Planner(lead: 1)
        let first = started(planner.readerViewed("plain", page: 1, older: "after-1", newer: nil, revision: 0, variants: 1, now: 0))
        #expect(first.map(\.page) == [2] && first[0].variants == 1)
        _ = planner.finished(first[0], older: "after-2", newer: "before-2")
        let second = started(planner.readerViewed("dense", page: 1, older: "after-1", newer: nil, revision: 0, variants: 2, now: 1))
        #expect(second.map(\.page) == [2] && second[0].variants == 2)
        _ = planner.finished(second[0], older: "after-2", newer: "before-2")
        // Both warmed in what they ask for: a third reader of either kind starts nothing.
        #expect(started(planner.readerViewed("plain2", page: 1, older: "after-1", newer: nil, revision: 0, variants: 1, now: 2)).isEmpty)
        #expect(started(planner.readerViewed("dense2", page: 1, older: "after-1", newer: nil, revision: 0, variants: 2, now: 2)).isEmpty)
    }

    /// Readers of both kinds heading for one page, before it is warmed: one job, both variants.
    @Test func readersOfBothKindsShareOneJobInBothVariants() {
        var planner = Planner(lead: 1, concurrency: 1)
        let busy = started(planner.readerViewed("elsewhere", page: 50, older: "after-50", newer: nil, revision: 0, variants: 1, now: 0))
        _ = planner.readerViewed("plain", page: 1, older: "after-1", newer: nil, revision: 0, variants: 1, now: 0)
        _ = planner.readerViewed("dense", page: 1, older: "after-1", newer: nil, revision: 0, variants: 2, now: 0)
        let next = started(planner.finished(busy[0], older: nil, newer: nil))
        #expect(next.map(\.page) == [2] && next[0].variants == 3)
    }
}
