import Foundation
import Testing

@testable import WarmfeedCore

@Suite struct CursorTests {
    let cursor = Cursor(epoch: 0xdead_beef, published: 1_793_534_400_000, id: 123_456)

    @Test func roundTrips() throws {
        let token = cursor.token
        #expect(token.count == 34)
        #expect(try Cursor.parse(token, epoch: 0xdead_beef) == cursor)
    }

    @Test func negativeTimesRoundTrip() throws {
        let old = Cursor(epoch: 7, published: -86_400_000, id: 1)
        #expect(try Cursor.parse(old.token, epoch: 7) == old)
    }

    @Test(arguments: ["", "garbage", String(repeating: "A", count: 34), "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "%00"])
    func refusesGarbage(token: String) {
        #expect(throws: Cursor.Problem.malformed) { try Cursor.parse(token, epoch: 0xdead_beef) }
    }

    @Test func refusesATruncatedCursor() {
        let token = cursor.token
        #expect(throws: Cursor.Problem.malformed) { try Cursor.parse(String(token.dropLast()), epoch: 0xdead_beef) }
        #expect(throws: Cursor.Problem.malformed) { try Cursor.parse(String(token.prefix(20)), epoch: 0xdead_beef) }
    }

    @Test func refusesAFlippedCharacter() {
        var characters = Array(cursor.token)
        characters[10] = characters[10] == "B" ? "C" : "B"
        #expect(throws: Cursor.Problem.malformed) { try Cursor.parse(String(characters), epoch: 0xdead_beef) }
    }

    @Test func refusesATypoInTheLastCharacter() throws {
        // Found by Fuzz/FuzzCursor: the last character carries 2 bits of the
        // cursor and 4 that the decoder ignored, so 16 tokens named one cursor.
        #expect(throws: Cursor.Problem.malformed) { try Cursor.parse("AQAAAAf_____-tmkAAAAAAAAAAABgaGXK_", epoch: 7) }
        let token = cursor.token
        let digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        for digit in digits where digit != token.last {
            #expect(throws: Cursor.Problem.malformed, "\(digit)") { try Cursor.parse(token.dropLast() + String(digit), epoch: 0xdead_beef) }
        }
        #expect(try Cursor.parse(token, epoch: 0xdead_beef) == cursor)
    }

    @Test func everyCursorRoundTripsThroughTheHandDecoder() throws {
        // The decoder is hand-written: each token is what Foundation's base64
        // decoder reads as 25 bytes of format 1, and `parse` reads its cursor back.
        var generator = SystemRandomNumberGenerator()
        let edges: [Int64] = [.min, -1, 0, 1, .max]
        var cursors = edges.flatMap { published in edges.map { Cursor(epoch: 0, published: published, id: $0) } }
        cursors += (0..<500).map { _ in
            Cursor(
                epoch: .random(in: 0...(.max), using: &generator), published: .random(in: .min ... .max, using: &generator),
                id: .random(in: .min ... .max, using: &generator))
        }
        for cursor in cursors {
            let token = cursor.token
            let standard = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=="
            let bytes = try #require(Data(base64Encoded: standard))
            #expect(bytes.count == 25 && bytes.first == 1, "\(cursor)")
            #expect(try Cursor.parse(token, epoch: cursor.epoch) == cursor)
        }
    }

    @Test func tellsACursorOfAnotherFeedApart() {
        #expect(throws: Cursor.Problem.otherFeed) { try Cursor.parse(cursor.token, epoch: 0x1234) }
    }

    @Test func base64URLIsFoundationsBase64MadeURLSafeWithoutPadding() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Cursor.base64URL(bytes) == expected, "\(bytes)")
        }
        #expect(Cursor.base64URL([0xfb, 0xff, 0xbf]) == "-_-_")
    }
}
