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
}
