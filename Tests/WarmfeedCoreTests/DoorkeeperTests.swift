import Foundation
import Testing
@testable import WarmfeedCore

/// The page cache's doorkeeper: a key is admitted on its second ask, by any
/// number of threads at once, and forgotten when cleared.
@Suite struct DoorkeeperTests {
    @Test func aKeyIsAdmittedOnItsSecondAskAndForgottenWhenCleared() {
        let doorkeeper = Doorkeeper(bits: 1 << 16)
        #expect(!doorkeeper.admit("page 7".hashValue))
        #expect(doorkeeper.admit("page 7".hashValue))
        #expect(doorkeeper.admit("page 7".hashValue))
        doorkeeper.clear()
        #expect(!doorkeeper.admit("page 7".hashValue))
    }

    @Test func fewKeysAmongManyBitsAreRarelyTakenForOthers() {
        let doorkeeper = Doorkeeper(bits: 1 << 20)
        for key in 0..<10_000 { _ = doorkeeper.admit(key.hashValue) }
        let falselyAdmitted = (10_000..<20_000).filter { doorkeeper.admit($0.hashValue) }.count
        // 10,000 bits of 1,048,576 set: about 1% of new keys collide.
        #expect(falselyAdmitted < 300, "\(falselyAdmitted) of 10,000 new keys admitted at first ask")
    }

    @Test func threadsAskingAtOnceLoseNoBit() {
        let doorkeeper = Doorkeeper(bits: 1 << 12)
        // 8 threads each ask for their own 400 keys once, at once, on shared words.
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for key in 0..<400 { _ = doorkeeper.admit(thread * 1_000_000 + key) }
        }
        // Every key is now admitted: a bit set by one thread was never undone by another's write.
        let missing = (0..<8).flatMap { thread in (0..<400).map { thread * 1_000_000 + $0 } }.filter { !doorkeeper.admit($0) }
        #expect(missing.isEmpty, "\(missing.count) keys lost their bit")
    }
}
