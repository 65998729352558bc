import Testing

@testable import Operations

/// The sessions `/admin?token=` is exchanged for: random, bounded, and over
/// at their end, on a clock the test moves.
@Suite struct AdminSessionsTests {
    @Test func aSessionIsOpenUntilItsLifetimeEnds() {
        let sessions = AdminSessions()
        let id = sessions.open(now: 100)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        #expect(sessions.isOpen(id, now: 100))
        #expect(sessions.isOpen(id, now: 100 + AdminSessions.lifetime - 1))
        #expect(!sessions.isOpen(id, now: 100 + AdminSessions.lifetime))
        #expect(!sessions.isOpen("", now: 100) && !sessions.isOpen(String(repeating: "0", count: 32), now: 100))
    }

    @Test func sessionsAreNeverTheSameAndTheOldestMakeRoom() {
        let sessions = AdminSessions()
        let ids = (0..<(AdminSessions.capacity + 10)).map { sessions.open(now: Double($0)) }
        #expect(Set(ids).count == ids.count)
        // The ten oldest made room for the newest; the rest are open.
        #expect(ids.prefix(10).allSatisfy { !sessions.isOpen($0, now: 100) })
        #expect(ids.dropFirst(10).allSatisfy { sessions.isOpen($0, now: 100) })
    }
}
