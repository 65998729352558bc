import HTTPServer
import Testing

@testable import FeedPages
@testable import WarmfeedCore

@Suite struct PageQueryTests {
    let epoch: UInt32 = 42

    func parse(_ pairs: [(String, String)]) throws(PageQuery.Problem) -> PageQuery {
        try PageQuery.parse(pairs.map { QueryItem($0.0, $0.1) }, epoch: epoch)
    }

    @Test func defaultsToPageOne() throws {
        #expect(try parse([]) == PageQuery(request: .number(1), number: 1))
        #expect(try parse([("utm_source", "x")]).request == .number(1))
    }

    @Test func readsDeepLinksAndCursors() throws {
        #expect(try parse([("page", "7")]) == PageQuery(request: .number(7), number: 7))
        let cursor = Cursor(epoch: epoch, published: 5, id: 9)
        #expect(try parse([("page", "3"), ("after", cursor.token)]) == PageQuery(request: .after(cursor), number: 3))
        #expect(try parse([("before", cursor.token)]) == PageQuery(request: .before(cursor), number: nil))
    }

    @Test(arguments: ["0", "-1", "abc", "1e9", "99999999999999999999", "", "+3", " 3", "3 ", "0x10", "1.0", "100000001"])
    func refusesBadPageNumbers(value: String) {
        #expect(throws: PageQuery.Problem.self) { try parse([("page", value)]) }
        do { _ = try parse([("page", value)]) } catch { #expect(error.status == 400) }
    }

    @Test func refusesRepeatsAndConflicts() {
        let token = Cursor(epoch: epoch, published: 5, id: 9).token
        for pairs in [[("page", "1"), ("page", "2")], [("after", token), ("after", token)], [("after", token), ("before", token)]] {
            do {
                _ = try parse(pairs)
                Issue.record("accepted \(pairs)")
            } catch {
                #expect(error.status == 400)
            }
        }
    }

    @Test func tellsGarbageFromAnotherFeedsCursor() {
        let token = Cursor(epoch: epoch, published: 5, id: 9).token
        let cases: [(String, Int)] = [("garbage", 400), (String(token.dropLast(3)), 400), (Cursor(epoch: 7, published: 5, id: 9).token, 410)]
        for (value, status) in cases {
            do {
                _ = try parse([("page", "2"), ("after", value)])
                Issue.record("accepted \(value)")
            } catch {
                #expect(error.status == status)
            }
        }
    }

    @Test func buildsTheURLsItReads() throws {
        let cursor = Cursor(epoch: epoch, published: 5, id: 9)
        let query = PageQuery(request: .after(cursor), number: 4)
        #expect(query.documentURL == "/?page=4&after=\(cursor.token)")
        #expect(query.fragmentURL == "/fragment?page=4&after=\(cursor.token)")
        #expect(PageQuery(request: .number(1), number: 1).documentURL == "/")
    }
}
