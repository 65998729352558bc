import Testing

@testable import RedisClient

@Suite struct RedisHealthTests {
    @Test func aFailureMarksRedisDownUntilOneProbeGetsThrough() {
        var health = RedisHealth(firstBackOff: 1, longestBackOff: 4)
        do { let tried = health.mayTry(now: 0); #expect(tried) }
        health.failed(now: 10)
        #expect(!health.isUp)
        #expect(health.downSince == 10)
        // Inside the back-off nobody tries.
        do { let tried = health.mayTry(now: 10.5); #expect(!tried) }
        // After it, exactly one command is the probe.
        do { let tried = health.mayTry(now: 11); #expect(tried) }
        do { let tried = health.mayTry(now: 11); #expect(!tried) }
        health.succeeded()
        #expect(health.isUp)
        do { let tried = health.mayTry(now: 11.1); #expect(tried) }
        #expect(health.downSince == nil)
    }

    @Test func commandsAlreadyOnTheirWayFailWithoutPuttingOffTheProbe() {
        var health = RedisHealth(firstBackOff: 1, longestBackOff: 16)
        // Four connections meet the same stall: their commands fail together.
        for now in [10.0, 10.01, 10.02, 10.03] { health.failed(now: now) }
        #expect(health.downSince == 10)
        do { let tried = health.mayTry(now: 10.9); #expect(!tried) }
        // One back-off after the first failure, not 2^4.
        do { let tried = health.mayTry(now: 11); #expect(tried) }
        // The probe failing doubles it.
        health.failed(now: 11.2)
        do { let tried = health.mayTry(now: 13.1); #expect(!tried) }
        do { let tried = health.mayTry(now: 13.2); #expect(tried) }
    }

    @Test func failedTriesCountTheFirstFailureAndEachProbeNotTheCommandsOnTheirWay() {
        var health = RedisHealth(firstBackOff: 0.25, longestBackOff: 5)
        #expect(health.failedTries == 0)
        for now in [10.0, 10.01, 10.02] { health.failed(now: now) }
        #expect(health.failedTries == 1)
        // The first probe, a back-off later, fails: 2; while the second is on its way, still 2.
        do { let tried = health.mayTry(now: 10.25); #expect(tried) }
        health.failed(now: 10.5)
        #expect(health.failedTries == 2)
        do { let tried = health.mayTry(now: 11.0); #expect(tried) }
        #expect(health.failedTries == 2)
        health.failed(now: 11.25)
        #expect(health.failedTries == 3)
        health.succeeded()
        #expect(health.failedTries == 0)
    }

    @Test func theBackOffDoublesAndStopsAtItsLongest() {
        var health = RedisHealth(firstBackOff: 1, longestBackOff: 4)
        var now = 0.0
        var waits: [Double] = []
        for _ in 0..<5 {
            health.failed(now: now)
            var wait = 0.0
            while !health.mayTry(now: now + wait) { wait += 0.5 }
            waits.append(wait)
            now += wait
        }
        #expect(waits == [1, 2, 4, 4, 4])
        // Down since the first failure, whatever the probes did.
        #expect(health.downSince == 0)
    }
}

@Suite struct RedisLocationTests {
    @Test func readsWhatRedisCliReads() throws {
        let plain = try RedisLocation("redis://cache.internal:6380/2")
        #expect(plain.host == "cache.internal" && plain.port == 6380 && plain.database == 2 && plain.password == nil)
        let defaults = try RedisLocation("redis://redis")
        #expect(defaults.port == 6379 && defaults.database == 0)
        let secret = try RedisLocation("redis://:s3cret@127.0.0.1:7000/0")
        #expect(secret.password == "s3cret")
        #expect(secret.description == "redis://127.0.0.1:7000/0")
    }

    @Test(arguments: [
        "http://redis:6379", "redis://", "redis://host:99999/0", "redis://host:port/0", "redis://host:6379/16", "redis://host:6379/x", "redis://a b:1/0",
    ])
    func refusesWhatItCannotRead(_ url: String) {
        #expect(throws: RedisError.self) { try RedisLocation(url) }
    }
}
