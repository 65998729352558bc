import FeedImport
import Testing

@testable import FeedIngest

/// What a read of the lists changes: pure, no store.
@Suite struct SourceReconcilerTests {
    let list = "/etc/warmfeed/feeds.opml"
    let other = "https://example.org/list.txt"

    func feed(_ url: String, by spec: String) -> ListedFeed {
        ListedFeed(source: .url(url), listedBy: spec)
    }

    func read(_ feeds: [ListedFeed], failed: Set<String> = []) -> SourceSpecs.Read {
        var read = SourceSpecs.Read()
        read.feeds = feeds
        read.failed = failed
        return read
    }

    @Test func addsWhatIsNewAndRemovesWhatAListNoLongerNames() {
        let stored = [
            SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: list),
            SourceReconciler.Stored(id: 2, key: "https://b.example/feed", listedBy: list),
            SourceReconciler.Stored(id: 3, key: "https://c.example/feed", listedBy: other),
        ]
        let plan = SourceReconciler.plan(
            stored: stored,
            read: read([feed("https://a.example/feed", by: list), feed("https://d.example/feed", by: list), feed("https://c.example/feed", by: other)]),
            specs: [list, other], emptyBefore: [])
        #expect(plan.add.map(\.key) == ["https://d.example/feed"])
        #expect(plan.remove == [2])
    }

    @Test func aListThatCannotBeReadRemovesNothing() {
        let stored = [SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: other)]
        let plan = SourceReconciler.plan(stored: stored, read: read([], failed: [other]), specs: [other], emptyBefore: [])
        #expect(plan.remove.isEmpty)
        #expect(plan.add.isEmpty)
    }

    @Test func anEmptyReadIsBelievedOnlyTheSecondTime() {
        let stored = [SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: list)]
        let first = SourceReconciler.plan(stored: stored, read: read([]), specs: [list], emptyBefore: [])
        #expect(first.remove.isEmpty)
        #expect(first.emptyNow == [list])
        let second = SourceReconciler.plan(stored: stored, read: read([]), specs: [list], emptyBefore: first.emptyNow)
        #expect(second.remove == [1])
    }

    @Test func aValueNoLongerGivenTakesItsSourcesOut() {
        let stored = [
            SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: list),
            SourceReconciler.Stored(id: 2, key: "https://b.example/feed", listedBy: other),
        ]
        let plan = SourceReconciler.plan(stored: stored, read: read([feed("https://b.example/feed", by: other)]), specs: [other], emptyBefore: [])
        #expect(plan.remove == [1])
    }

    @Test func importedSourcesAreNeverRemovedByAList() {
        let stored = [SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: nil)]
        let plan = SourceReconciler.plan(stored: stored, read: read([feed("https://b.example/feed", by: list)]), specs: [list], emptyBefore: [])
        #expect(plan.remove.isEmpty)
        #expect(plan.add.map(\.key) == ["https://b.example/feed"])
    }

    @Test func aSourceMovedToAnotherListStays() {
        let stored = [SourceReconciler.Stored(id: 1, key: "https://a.example/feed", listedBy: list)]
        let plan = SourceReconciler.plan(stored: stored, read: read([feed("https://a.example/feed", by: other)]), specs: [other], emptyBefore: [])
        #expect(plan.remove.isEmpty)
        #expect(plan.add.isEmpty)
    }

    @Test func credentialsNeverReachTheOperatorsViews() {
        #expect(SourceURL.redacted("https://user:secret@example.org/feed?token=abc&page=2") == "https://***@example.org/feed?token=***&page=2")
        #expect(SourceURL.redacted("https://example.org/feed?api_key=k&x=1") == "https://example.org/feed?api_key=***&x=1")
        #expect(SourceURL.redacted("/srv/feeds/a.xml") == "/srv/feeds/a.xml")
        #expect(SourceURL.host(of: .url("https://Example.org/feed")) == "example.org:443")
        #expect(SourceURL.host(of: .url("http://127.0.0.5:8080/feed")) == "127.0.0.5:8080")
    }
}
