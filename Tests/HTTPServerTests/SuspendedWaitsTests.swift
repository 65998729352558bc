import Testing

@testable import HTTPServer

/// The caps and deadlines on waits, as a pure state machine (no sockets).
@Suite struct SuspendedWaitsTests {
    @Test func pastAnAddressesCapItsOldestWaitIsAnsweredOthersUntouched() {
        var waits = SuspendedWaits(limits: .init(total: 100, perAddress: 2))
        let ids = (0..<5).map { _ in waits.nextID() }
        #expect(waits.began(ids[0], address: 1, deadline: nil).isEmpty)
        #expect(waits.began(ids[1], address: 2, deadline: nil).isEmpty)
        #expect(waits.began(ids[2], address: 1, deadline: nil).isEmpty)
        // A third wait of address 1: its oldest goes, address 2's stays.
        let shedFirst = waits.began(ids[3], address: 1, deadline: nil)
        #expect(shedFirst == [ids[0]])
        #expect(waits.count(of: 1) == 2 && waits.count(of: 2) == 1)
        // The one answered is no longer held: its work ending later changes nothing.
        let (endedShed, endedHeld) = (waits.ended(ids[0]), waits.ended(ids[2]))
        #expect(!endedShed && endedHeld)
        #expect(waits.began(ids[4], address: 1, deadline: nil).isEmpty)
        #expect(waits.counts == .init(shed: 1, late: 0))
    }

    @Test func pastTheTotalCapTheOldestOfTheAddressHoldingTheMostIsAnswered() {
        var waits = SuspendedWaits(limits: .init(total: 4, perAddress: 10))
        let ids = (0..<6).map { _ in waits.nextID() }
        // A lone reader's wait first, then a crowd's from address 7.
        #expect(waits.began(ids[0], address: 1, deadline: nil).isEmpty)
        for id in ids[1...3] { #expect(waits.began(id, address: 7, deadline: nil).isEmpty) }
        // Past the cap: the crowd's oldest goes, not the reader's older wait.
        #expect(waits.began(ids[4], address: 7, deadline: nil) == [ids[1]])
        #expect(waits.began(ids[5], address: 9, deadline: nil) == [ids[2]])
        #expect(waits.count == 4 && waits.count(of: 1) == 1 && waits.count(of: 9) == 1)
        #expect(waits.counts == .init(shed: 2, late: 0))
    }

    @Test func whenEveryAddressHoldsAsManyTheOldestOfAllGoesNeverTheNewOne() {
        var waits = SuspendedWaits(limits: .init(total: 3, perAddress: 10))
        let ids = (0..<4).map { _ in waits.nextID() }
        for (index, id) in ids.prefix(3).enumerated() { #expect(waits.began(id, address: UInt32(index), deadline: nil).isEmpty) }
        #expect(waits.began(ids[3], address: 9, deadline: nil) == [ids[0]])
        #expect(waits.count == 3 && waits.count(of: 9) == 1)
    }

    @Test func waitsPastTheirDeadlineAreAnsweredThenAndOnlyThose() {
        var waits = SuspendedWaits(limits: .init(total: 10, perAddress: 10))
        let ids = (0..<3).map { _ in waits.nextID() }
        _ = waits.began(ids[0], address: 1, deadline: .seconds(5))
        _ = waits.began(ids[1], address: 1, deadline: .seconds(2))
        _ = waits.began(ids[2], address: 1, deadline: nil)
        let (none, second, last) = (waits.expire(at: .seconds(1)), waits.expire(at: .seconds(3)), waits.expire(at: .seconds(100)))
        #expect(none.isEmpty && second == [ids[1]])
        #expect(last == [ids[0]], "a wait without a deadline is its handler's to bound")
        #expect(waits.count == 1)
        #expect(waits.counts == .init(shed: 0, late: 2))
    }

    /// Many waits begun and ended: the order's stale entries stay bounded and the counts add up.
    @Test func manyWaitsLeaveNothingBehind() {
        var waits = SuspendedWaits(limits: .init(total: 50, perAddress: 20))
        var ids: [SuspendedWaits.ID] = []
        var shed = 0
        for round in 0..<2_000 {
            let id = waits.nextID()
            ids.append(id)
            shed += waits.began(id, address: UInt32(round % 7), deadline: nil).count
            if round % 3 == 0 { waits.ended(ids[round / 2]) }
        }
        #expect(waits.count <= 50)
        #expect(waits.counts.shed == shed)
        #expect(Set(ids).count == ids.count, "a number is never given twice")
        for id in ids { waits.ended(id) }
        #expect(waits.count == 0)
    }
}

/// `Accept`'s qualities, read as RFC 9110 §12.5.1 says.
@Suite struct AcceptQualityTests {
    @Test func theMostSpecificRangeDecides() {
        let chrome = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        #expect(AcceptQuality.of("image/avif", in: chrome) == .init(thousandths: 1000, named: true))
        #expect(AcceptQuality.of("image/jpeg", in: chrome) == .init(thousandths: 1000, named: false))
        #expect(AcceptQuality.of("text/html", in: chrome) == .init(thousandths: 800, named: false))
        let picky = "image/webp;q=0, image/*;q=0.5, */*;q=0.1"
        #expect(AcceptQuality.of("image/webp", in: picky)?.accepts == false)
        #expect(AcceptQuality.of("image/jpeg", in: picky)?.thousandths == 500)
        #expect(AcceptQuality.of("image/avif", in: "image/webp") == nil)
        #expect(AcceptQuality.of("image/webp", in: "Image/WebP ; Q=0.25") == .init(thousandths: 250, named: true))
        #expect(AcceptQuality.of("image/webp", in: "image/webp;level=1;q=0.7") == .init(thousandths: 700, named: true))
        #expect(AcceptQuality.of("image/webp", in: "image/webp;q=2")?.thousandths == 0, "not a qvalue: not acceptable")
        #expect(AcceptQuality.of("image/webp", in: "image/webpx, image/web") == nil)
        #expect(AcceptQuality.of("image/webp", in: "") == nil)
    }
}
