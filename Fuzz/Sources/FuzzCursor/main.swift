// Cursor.parse on any `after=`/`before=` value a client can send, and the
// round trip of any cursor. A token either is refused (malformed, or of
// another feed) or names exactly one cursor of the feed asked for, and that
// cursor's own token is the same text: one cursor, one token, so a page
// cache keyed by the token cannot hold one page twice.
import FuzzSupport
import WarmfeedCore

/// The epochs of the seed cursors (Tests/WarmfeedCoreTests/CursorTests.swift).
let epochs: [UInt32] = [0xdead_beef, 7]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCursor(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = fuzzInput(data, count)
    let token = String(decoding: bytes, as: UTF8.self)
    for epoch in epochs {
        guard let cursor = try? Cursor.parse(token, epoch: epoch) else { continue }
        check(cursor.epoch == epoch, "\(token.debugDescription) parsed for epoch \(epoch) to \(cursor)")
        check(cursor.token == token, "\(token.debugDescription) parsed to \(cursor), whose token is \(cursor.token.debugDescription)")
        check(otherFeed(token, epoch: epoch &+ 1), "\(token.debugDescription) of epoch \(epoch) is not refused for epoch \(epoch &+ 1)")
    }

    // The same bytes read as a cursor's fields: every cursor round-trips.
    if bytes.count >= 20 {
        let cursor = Cursor(
            epoch: integer(bytes[0..<4]), published: integer(bytes[4..<12]), id: integer(bytes[12..<20]))
        let token = cursor.token
        check(token.utf8.count == 34, "\(cursor)'s token \(token.debugDescription) is not 34 bytes")
        check(
            token.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || (0x30...0x39).contains(byte)
                    || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
            },
            "\(cursor)'s token \(token.debugDescription) is not URL-safe")
        do {
            let parsed = try Cursor.parse(token, epoch: cursor.epoch)
            check(parsed == cursor, "\(cursor) came back as \(parsed)")
        } catch {
            check(false, "\(cursor)'s own token \(token.debugDescription) is refused: \(error)")
        }
        check(otherFeed(token, epoch: cursor.epoch &+ 1), "\(cursor) is not refused for another epoch")
    }
    return 0
}

func otherFeed(_ token: String, epoch: UInt32) -> Bool {
    do {
        _ = try Cursor.parse(token, epoch: epoch)
        return false
    } catch {
        return error == .otherFeed
    }
}

func integer<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>) -> T {
    bytes.reduce(T.zero) { $0 << 8 | T(truncatingIfNeeded: $1) }
}
