import Testing

@testable import WarmfeedCore

/// Which node polls a host: one owner for each, the hosts spread over the
/// nodes, and a node that comes or goes moving only the hosts it takes or held.
@Suite struct PollingShareTests {
    let hosts = (1...3000).map { "feeds\($0).example:443" }

    @Test func everyHostHasOneOwnerAmongTheNodesAndTheySpread() {
        let places = [0, 1, 2]
        let shares = places.map { PollingShare(place: $0, places: places) }
        var counts = [0, 0, 0]
        for host in hosts {
            let owners = shares.filter { $0.polls(host: host) }
            #expect(owners.count == 1, "\(host) has one owner")
            if let owner = owners.first { counts[owner.place] += 1 }
        }
        // 1,000 each expected; the binomial's deviation is about 26.
        #expect(counts.allSatisfy { (850...1150).contains($0) }, "spread: \(counts)")
    }

    @Test func aNodeThatComesOrGoesMovesOnlyTheHostsItTakesOrHeld() {
        let before = hosts.map { PollingShare.owner(of: $0, among: [0, 1, 2]) }
        let joined = hosts.map { PollingShare.owner(of: $0, among: [0, 1, 2, 3]) }
        let left = hosts.map { PollingShare.owner(of: $0, among: [0, 2]) }
        for (index, host) in hosts.enumerated() {
            #expect(joined[index] == before[index] || joined[index] == 3, "\(host) moves only to the new node")
            if before[index] != 1 { #expect(left[index] == before[index], "\(host) stays where it was when another node goes") }
        }
        let moved = zip(before, joined).filter { $0 != $1 }.count
        #expect((600...900).contains(moved), "about a quarter moves to the fourth node: \(moved)")
    }

    @Test func theOwnerIsTheSameInEveryProcess() {
        // Fixed values: a process with another hash seed, or another build, must agree with these.
        #expect(PollingShare.owner(of: "127.0.0.1:80", among: [0, 1, 2]) == 1)
        #expect(PollingShare.owner(of: "blog.example:443", among: [0, 1, 2]) == 1)
        #expect(PollingShare.owner(of: "file:/srv/feeds", among: [0, 1, 2]) == 0)
        #expect(PollingShare.owner(of: "photos.example:443", among: [0, 1, 2]) == 2)
    }

    @Test func aProcessAloneReadsTheListsAndPollsEveryHost() {
        let whole = PollingShare.whole
        #expect(whole.readsLists)
        #expect(hosts.allSatisfy(whole.polls(host:)))
        #expect(PollingShare(place: 3, places: [5, 1]).places == [1, 3, 5], "a share counts its own place")
        #expect(!PollingShare(place: 3, places: [5, 1]).readsLists)
        #expect(PollingShare(place: 1, places: [1, 3]).readsLists, "the first place alive reads the lists")
    }
}
