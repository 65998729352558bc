import Testing

@testable import Thumbnailer

@Suite("The decode budget's bookkeeping")
struct DecodeAdmissionTests {
    static let reader: UInt8 = 25
    static let prewarm: UInt8 = 9

    @Test("A job that fits decodes at once; one over the whole budget is refused")
    func fitsOrNever() {
        var admission = DecodeAdmission(budget: 100)
        let could = (admission.couldFit(100), admission.couldFit(101))
        #expect(could == (true, false) && admission.refused == 1)
        admission = DecodeAdmission(budget: 100)
        #expect(admission.enter(1, cost: 60, priority: Self.reader, now: 0) == .admitted)
        #expect(admission.enter(2, cost: 40, priority: Self.reader, now: 0) == .admitted)
        #expect(admission.inUse == 100 && admission.running == 2)
        #expect(admission.enter(3, cost: 101, priority: Self.reader, now: 0) == .refused)
        #expect(admission.refused == 1 && admission.waiting == 0)
    }

    @Test("A job waits while the decodes running hold its room, and goes in when they end")
    func waitsForRoom() {
        var admission = DecodeAdmission(budget: 100)
        #expect(admission.enter(1, cost: 70, priority: Self.reader, now: 0) == .admitted)
        #expect(admission.enter(2, cost: 50, priority: Self.reader, now: 0.25) == .waiting)
        #expect(admission.waiting == 1)
        #expect(admission.longestWait(now: 0.75) == 0.5)
        #expect(admission.leave(cost: 70, now: 0.875) == [2])
        #expect(admission.inUse == 50 && admission.peak == 70 && admission.waiting == 0)
        #expect(admission.admitted == 2 && admission.admittedAfterWaiting == 1)
        #expect(admission.longestWait(now: 1) == nil)
    }

    @Test("A small job passes a large one that does not fit yet, until the large one's patience runs out")
    func patience() {
        var admission = DecodeAdmission(budget: 100, patience: 1)
        #expect(admission.enter(1, cost: 60, priority: Self.reader, now: 0) == .admitted)
        #expect(admission.enter(2, cost: 80, priority: Self.reader, now: 0) == .waiting)
        // Within the large job's patience, small ones that fit go ahead of it.
        #expect(admission.enter(3, cost: 20, priority: Self.reader, now: 0.5) == .admitted)
        #expect(admission.leave(cost: 20, now: 0.6).isEmpty)
        // Past it, the large job holds the line: nothing behind it goes in, though it would fit.
        #expect(admission.enter(4, cost: 20, priority: Self.reader, now: 1.5) == .waiting)
        #expect(admission.leave(cost: 60, now: 1.6) == [2, 4])
        #expect(admission.inUse == 100 && admission.peak == 100)
    }

    @Test("Readers' jobs are looked at before pre-warm's, oldest first within each")
    func order() {
        var admission = DecodeAdmission(budget: 100)
        #expect(admission.enter(1, cost: 100, priority: Self.prewarm, now: 0) == .admitted)
        #expect(admission.enter(2, cost: 50, priority: Self.prewarm, now: 0) == .waiting)
        #expect(admission.enter(3, cost: 50, priority: Self.reader, now: 0) == .waiting)
        #expect(admission.enter(4, cost: 50, priority: Self.reader, now: 0) == .waiting)
        #expect(admission.leave(cost: 100, now: 0.1) == [3, 4])
        #expect(admission.leave(cost: 50, now: 0.2) == [2])
    }

    @Test("A lower budget refuses the waiting jobs over it; a higher one lets waiting jobs in")
    func budgetChanges() {
        var admission = DecodeAdmission(budget: 100)
        #expect(admission.enter(1, cost: 100, priority: Self.reader, now: 0) == .admitted)
        #expect(admission.enter(2, cost: 90, priority: Self.reader, now: 0) == .waiting)
        #expect(admission.enter(3, cost: 40, priority: Self.reader, now: 0) == .waiting)
        #expect(admission.setBudget(60, now: 0.1) == .init(admitted: [], refused: [2]))
        #expect(admission.refused == 1)
        #expect(admission.setBudget(140, now: 0.2) == .init(admitted: [3], refused: []))
        #expect(admission.inUse == 140)
    }
}
