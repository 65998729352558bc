import Testing
@testable import HTTPServer

/// The connection table on its own: events in, sockets to shed out, no threads.
@Suite struct ConnectionTableTests {
    static let a: UInt32 = 0x7F00_0001
    static let b: UInt32 = 0x7F00_0002

    func table(connections: Int = 100, perAddress: Int = 100, headTimeout: Int = 10) -> ConnectionTable {
        ConnectionTable(limits: .init(connections: connections, perAddress: perAddress, headTimeout: .seconds(headTimeout)))
    }

    @Test func aHeadThatTakesTooLongEndsItsConnection() {
        var table = table(headTimeout: 10)
        #expect(table.opened(socket: 5, address: Self.a, at: .seconds(0)) == [])
        #expect(table.opened(socket: 6, address: Self.a, at: .seconds(3)) == [])
        #expect(table.expire(at: .seconds(9)) == [])
        #expect(table.expire(at: .seconds(10)) == [5])
        #expect(table.expire(at: .seconds(12)) == [])
        #expect(table.expire(at: .seconds(13)) == [6])
        #expect(table.counts.timedOut == 2)
        // Shed connections are not shed twice, and their close is accepted.
        #expect(table.expire(at: .seconds(100)) == [])
        table.closed(socket: 5)
        table.closed(socket: 6)
        #expect(table.held == 0)
        #expect(table.live == 0)
    }

    @Test func aMalformedNewcomerIsShedOnceAndCounted() {
        var table = table(connections: 1)
        #expect(table.opened(socket: 5, address: Self.a, at: .seconds(0)) == [])
        table.malformed(socket: 5)
        table.malformed(socket: 5)
        #expect(table.counts.malformed == 1)
        // It no longer counts toward the limit, nor is it timed out later.
        #expect(table.opened(socket: 6, address: Self.a, at: .seconds(1)) == [])
        #expect(table.expire(at: .seconds(100)) == [6])
        table.closed(socket: 5)
        table.closed(socket: 6)
        #expect(table.held == 0)
        #expect(table.live == 0)
    }

    @Test func aBusyConnectionIsNeverTimedOut() {
        var table = table(headTimeout: 10)
        _ = table.opened(socket: 5, address: Self.a, at: .seconds(0))
        table.headArrived(socket: 5)
        #expect(table.expire(at: .seconds(60)) == [])
        // Its wait starts again when the answer is sent, not when it opened.
        table.answered(socket: 5, at: .seconds(60))
        #expect(table.expire(at: .seconds(69)) == [])
        #expect(table.expire(at: .seconds(70)) == [5])
    }

    @Test func keepAliveRequestsRestartTheWait() {
        var table = table(headTimeout: 10)
        _ = table.opened(socket: 5, address: Self.a, at: .seconds(0))
        for second in 1...1000 {
            table.headArrived(socket: 5)
            table.answered(socket: 5, at: .seconds(second))
        }
        #expect(table.expire(at: .seconds(1009)) == [])
        #expect(table.expire(at: .seconds(1010)) == [5])
    }

    @Test func aFullServerShedsItsOldestWaitingConnection() {
        var table = table(connections: 3)
        _ = table.opened(socket: 5, address: Self.a, at: .seconds(0))  // trickles
        _ = table.opened(socket: 6, address: Self.a, at: .seconds(1))
        table.headArrived(socket: 5)  // 5 is busy now: 6 is the oldest waiting
        _ = table.opened(socket: 7, address: Self.b, at: .seconds(2))
        #expect(table.opened(socket: 8, address: Self.b, at: .seconds(3)) == [6])
        #expect(table.counts.crowdedOut == 1)
        #expect(table.live == 3)
        // The shed connection's close arrives later; until then it is held but not live.
        #expect(table.held == 4)
        table.closed(socket: 6)
        #expect(table.held == 3)
        #expect(table.live == 3)
    }

    @Test func whenNothingWaitsTheNewcomerIsRefused() {
        var table = table(connections: 2)
        for socket: Int32 in [5, 6] {
            _ = table.opened(socket: socket, address: Self.a, at: .seconds(0))
            table.headArrived(socket: socket)
        }
        #expect(table.opened(socket: 7, address: Self.b, at: .seconds(1)) == [7])
        #expect(table.counts.refused == 1)
        #expect(table.counts.crowdedOut == 0)
        table.closed(socket: 7)
        #expect(table.live == 2)
    }

    @Test func aCrowdedAddressLosesItsOwnOldestWaitNotAnotherAddresss() {
        var table = table(connections: 100, perAddress: 2)
        _ = table.opened(socket: 4, address: Self.b, at: .seconds(0))  // b's idle connection, the oldest of all
        _ = table.opened(socket: 5, address: Self.a, at: .seconds(1))
        _ = table.opened(socket: 6, address: Self.a, at: .seconds(2))
        #expect(table.opened(socket: 7, address: Self.a, at: .seconds(3)) == [5])
        // Every connection of `a` busy: a third one from `a` is refused.
        table.headArrived(socket: 6)
        table.headArrived(socket: 7)
        #expect(table.opened(socket: 8, address: Self.a, at: .seconds(4)) == [8])
        #expect(table.counts == .init(timedOut: 0, crowdedOut: 1, refused: 1))
    }

    @Test func anIdleConnectionIsClosedSilentlyAndABegunHeadGets408() {
        var table = table(headTimeout: 10)
        // 5 opened having sent part of a head; 6 opened with nothing; 7 is idle after an answer.
        _ = table.opened(socket: 5, address: Self.a, at: .seconds(0), began: true)
        _ = table.opened(socket: 6, address: Self.a, at: .seconds(0))
        _ = table.opened(socket: 7, address: Self.a, at: .seconds(0))
        table.headArrived(socket: 7)
        table.answered(socket: 7, at: .seconds(1))
        var judged: [ConnectionTable.Overdue] = []
        let expired = table.expire(at: .seconds(11)) { overdue in
            judged.append(overdue)
            // What the kernel would say: only 5's bytes arrived (at the open).
            return overdue.began
        }
        #expect(expired.slowHeads == [5])
        #expect(expired.idle == [6, 7])
        #expect(judged == [
            .init(socket: 5, waited: .seconds(11), began: true, first: true),
            .init(socket: 6, waited: .seconds(11), began: false, first: true),
            .init(socket: 7, waited: .seconds(10), began: false, first: false),
        ])
        #expect(table.counts.timedOut == 1)
        #expect(table.counts.idleClosed == 2)
        // A keep-alive wait never counts the bytes seen when its connection opened.
        _ = table.opened(socket: 8, address: Self.a, at: .seconds(20), began: true)
        table.headArrived(socket: 8)
        table.answered(socket: 8, at: .seconds(21))
        #expect(table.expire(at: .seconds(31)) { $0.began } == (slowHeads: [], idle: [8]))
    }

    @Test func staleWaitsDoNotPileUp() {
        var table = table(connections: 10)
        _ = table.opened(socket: 5, address: Self.a, at: .zero)
        _ = table.opened(socket: 6, address: Self.a, at: .zero)
        for _ in 0..<100_000 {
            table.headArrived(socket: 5)
            table.answered(socket: 5, at: .zero)
        }
        // 6 is still the oldest wait, ahead of 100,000 ended waits of 5.
        #expect(table.expire(at: .seconds(10)) == [6, 5])
    }

    /// Random events against a plain model: what is shed and when.
    @Test func agreesWithAPlainModel() {
        struct Model {
            var open: [Int32: (address: UInt32, waitingSince: Int?, order: Int)] = [:]
            var order = 0
            mutating func wait(_ socket: Int32, _ now: Int) { order += 1; open[socket]?.waitingSince = now; open[socket]?.order = order }
            func oldestWaiting(_ address: UInt32?) -> Int32? {
                open.filter { $0.value.waitingSince != nil && (address == nil || $0.value.address == address) }
                    .min { $0.value.order < $1.value.order }?.key
            }
        }
        var generator = SystemRandomNumberGenerator()
        var table = table(connections: 8, perAddress: 5, headTimeout: 10)
        var model = Model()
        var now = 0
        var nextSocket: Int32 = 3
        for _ in 0..<20_000 {
            let roll = Int.random(in: 0..<10, using: &generator)
            let sockets = Array(model.open.keys)
            if roll < 3 || sockets.isEmpty {
                let socket = nextSocket
                nextSocket += 1
                let address = UInt32.random(in: 1...3, using: &generator)
                model.open[socket] = (address, nil, 0)
                model.wait(socket, now)
                var expected: [Int32] = []
                if model.open.values.count(where: { $0.address == address }) > 5 {
                    expected = [model.oldestWaiting(address)!]
                } else if model.open.count > 8 {
                    expected = [model.oldestWaiting(nil)!]
                }
                for shed in expected { model.open[shed] = nil }
                #expect(table.opened(socket: socket, address: address, at: .seconds(now)) == expected)
                for shed in expected { table.closed(socket: shed) }
            } else if roll < 6, let socket = sockets.randomElement(using: &generator) {
                if model.open[socket]!.waitingSince != nil {
                    model.open[socket]!.waitingSince = nil
                    table.headArrived(socket: socket)
                } else {
                    model.wait(socket, now)
                    table.answered(socket: socket, at: .seconds(now))
                }
            } else if roll < 7, let socket = sockets.randomElement(using: &generator) {
                model.open[socket] = nil
                table.closed(socket: socket)
            } else {
                now += Int.random(in: 0...3, using: &generator)
                let expired = model.open.filter { $0.value.waitingSince.map { now - $0 >= 10 } ?? false }
                    .sorted { $0.value.order < $1.value.order }.map(\.key)
                for socket in expired { model.open[socket] = nil }
                #expect(table.expire(at: .seconds(now)) == expired)
                for socket in expired { table.closed(socket: socket) }
            }
            #expect(table.live == model.open.count)
        }
    }
}

extension ConnectionTable {
    /// Expires as if every overdue connection had begun its head (the sockets answered 408).
    mutating func expire(at now: Duration) -> [Int32] {
        expire(at: now) { _ in true }.slowHeads
    }
}
