import HTTPTestClient
import Testing

@_spi(Testing) @testable import HTTPServer

/// A head's lines are read once, on the first call, for the rules and for the
/// request's fields both (`HeadLines`).
@Suite struct HeadLinesTests {
    /// More lines than the server takes get one 431 there; a line the rules
    /// refuse still gets its 400 first; at the limit, every line reaches the handler.
    @Test func headerLinesPastTheLimitGetOne431() async throws {
        let limit = HTTPServerConfiguration().maxHeaderCount
        try await withServer(router: {
            $0.get("/") { request in .now(.plain(200, "\(request.headers.count) \(request.headers[HTTPField.Name("x-last")!] ?? "-")")) }
        }) { server in
            let port = server.port
            func exchange(_ lines: Int, extra: String = "") async throws -> String {
                try await onThread { () throws -> String in
                    let connection = try TestConnection(port: port, timeout: 5)
                    // Host and X-Last are two of the lines.
                    let filler = (0..<(lines - 2)).map { "X-Filler-\($0): v\r\n" }.joined()
                    try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\(filler)\(extra)X-Last: end\r\nConnection: close\r\n\r\n")
                    return connection.readUntilClose().map { String(decoding: $0, as: UTF8.self) } ?? "(no close within 5 s)"
                }
            }
            let over = try await exchange(limit + 1)
            #expect(
                over.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") } == ["HTTP/1.1 431 Request Header Fields Too Large"],
                "\(over.prefix(200).debugDescription)")
            let bad = try await exchange(limit + 1, extra: "Bad Name: x\r\n")
            #expect(bad.hasPrefix("HTTP/1.1 400 "), "\(bad.prefix(200).debugDescription)")
            // At the limit (the Connection line is one more): answered, with every line.
            let within = try await exchange(limit - 1)
            #expect(within.hasPrefix("HTTP/1.1 200 "), "\(within.prefix(200).debugDescription)")
            #expect(within.hasSuffix("\r\n\r\n\(limit) end\n"), "\(within.suffix(80).debugDescription)")
        }
    }
}
