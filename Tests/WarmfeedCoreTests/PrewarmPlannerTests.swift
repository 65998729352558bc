import Testing
@testable import WarmfeedCore

@Suite struct PrewarmPlannerTests {
    typealias Planner = PrewarmPlanner<String>

    /// Runs jobs to completion the way the server does: each finished page reveals its neighbours.
    func drain(_ planner: inout Planner) -> [Int] {
        var order: [Int] = []
        while let job = planner.nextJob() {
            order.append(job.page)
            planner.finished(job, older: "after-\(job.page)", newer: "before-\(job.page)")
        }
        return order
    }

    @Test func warmsTheNextLeadPagesAheadOfAReader() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r1", page: 1, older: "after-1", newer: nil, now: 0)
        #expect(drain(&planner) == [2, 3])
        #expect(planner.counters.done == 2)
        // Page 4 is only wanted once the reader is on page 2.
        _ = planner.readerViewed("r1", page: 2, older: "after-2", newer: "before-2", now: 1)
        #expect(drain(&planner) == [4])
    }

    @Test func theNearestPageRunsFirstAcrossReaders() {
        var planner = Planner(lead: 3)
        _ = planner.readerViewed("far", page: 10, older: "after-10", newer: nil, now: 0)
        _ = planner.readerViewed("near", page: 50, older: "after-50", newer: nil, now: 0)
        let first = planner.nextJob()!
        let second = planner.nextJob()!
        #expect(Set([first.page, second.page]) == [11, 51])
        planner.finished(first, older: "after-\(first.page)", newer: nil)
        planner.finished(second, older: "after-\(second.page)", newer: nil)
        // Both readers' next pages are at distance 2; neither page 13 nor 53 comes before them.
        let next = [planner.nextJob()!.page, planner.nextJob()!.page]
        #expect(Set(next) == [12, 52])
    }

    @Test func aJumpCancelsWorkBehindTheReader() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r", page: 1, older: "after-1", newer: nil, now: 0)
        let running = planner.nextJob()!  // page 2, running
        #expect(running.page == 2)
        // A deep link to page 40: page 2 is behind the reader now.
        let cancel = planner.readerViewed("r", page: 40, older: "after-40", newer: "before-40", now: 1)
        #expect(cancel == [running])
        planner.cancelled(running)
        #expect(planner.counters.cancelled == 1)
        // Finishing a cancelled job does not count or reveal anything.
        planner.finished(running, older: "after-2", newer: nil)
        #expect(planner.counters.done == 0)
        #expect(drain(&planner) == [41, 42])
    }

    @Test func arrivingOnAPageStillBeingWarmedKeepsItsJob() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r", page: 1, older: "after-1", newer: nil, now: 0)
        let running = planner.nextJob()!
        #expect(running.page == 2)
        // The reader reaches page 2 while its thumbnails are still being made.
        #expect(planner.readerViewed("r", page: 2, older: "after-2", newer: "before-2", now: 1).isEmpty)
        planner.finished(running, older: "after-2", newer: "before-2")
        #expect(planner.counters.done == 1 && planner.counters.cancelled == 0)
    }

    @Test func queuedWorkNoOneWantsIsDropped() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r", page: 5, older: "after-5", newer: nil, now: 0)
        #expect(planner.load.queued == 1)
        _ = planner.readerViewed("r", page: 100, older: nil, newer: nil, now: 1)
        #expect(planner.load.queued == 0)
        #expect(planner.counters.cancelled == 1)
    }

    @Test func scrollingBackUpWarmsUpwards() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("r", page: 10, older: "after-10", newer: "before-10", now: 0)
        #expect(drain(&planner) == [11, 12])
        _ = planner.readerViewed("r", page: 9, older: "after-9", newer: "before-9", now: 1)
        #expect(drain(&planner) == [8, 7])
        // At the top there is nothing above page 1.
        _ = planner.readerViewed("r", page: 1, older: "after-1", newer: nil, now: 2)
        #expect(planner.nextJob() == nil)
    }

    @Test func aPageAlreadyWarmedIsNotWarmedAgainUntilTheFeedChanges() {
        var planner = Planner(lead: 2)
        _ = planner.readerViewed("a", page: 1, older: "after-1", newer: nil, now: 0)
        #expect(drain(&planner) == [2, 3])
        _ = planner.readerViewed("b", page: 1, older: "after-1", newer: nil, now: 0)
        #expect(planner.nextJob() == nil)
        planner.forgetWarmed()
        _ = planner.readerViewed("c", page: 1, older: "after-1", newer: nil, now: 0)
        #expect(drain(&planner) == [2, 3])
    }

    @Test func theQueueIsBounded() {
        var planner = Planner(lead: 1, maxQueued: 3)
        for reader in 0..<10 {
            _ = planner.readerViewed("r\(reader)", page: reader * 10, older: "x", newer: nil, now: 0)
        }
        #expect(planner.load.queued == 3)
        #expect(planner.counters.dropped == 7)
    }

    @Test func silentReadersAreForgotten() {
        var planner = Planner(lead: 2, readerTTL: 60)
        _ = planner.readerViewed("old", page: 3, older: "after-3", newer: nil, now: 0)
        _ = planner.readerViewed("new", page: 90, older: "after-90", newer: nil, now: 100)
        #expect(planner.readerCount == 1)
        #expect(!planner.isWanted(4))
        #expect(planner.isWanted(91))
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
            let page = Int.random(in: 0..<4, using: &random) == 0
                ? Int.random(in: 1...40, using: &random)  // a jump
                : max(1, (previous?.page ?? 1) + Int.random(in: -1...2, using: &random))
            var direction = previous?.direction ?? 1
            if let previous, page != previous.page { direction = page > previous.page ? 1 : -1 }
            if previous == nil, model.count >= 6, let oldest = model.min(by: { $0.value.seen < $1.value.seen })?.key {
                model[oldest] = nil
            }
            model[reader] = (page, direction, Double(step))
            _ = planner.readerViewed(reader, page: page, older: nil, newer: nil, now: Double(step) * 0.001)
            for probe in 0...45 {
                let expected = model.values.contains { reader in
                    let ahead = (probe - reader.page) * reader.direction
                    return ahead >= 0 && ahead <= lead
                }
                #expect(planner.isWanted(probe) == expected, "step \(step), page \(probe)")
            }
        }
    }
}
