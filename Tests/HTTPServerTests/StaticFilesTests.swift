import Foundation
import HTTPTestClient
import Testing

@testable import HTTPServer

@Suite struct StaticFilesTests {
    func folder() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-static-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try String(repeating: "console.log('warm');\n", count: 50).write(to: url.appendingPathComponent("app.js"), atomically: true, encoding: .utf8)
        try "body{}".write(to: url.appendingPathComponent("sub/style.css"), atomically: true, encoding: .utf8)
        try "secret".write(to: url.appendingPathComponent(".hidden"), atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func servesWithETagsGzipAndVersionedURLs() async throws {
        let statics = try StaticFiles(folder: try folder())
        try await withServer(router: { router in router.get(prefix: "/static/") { .now(statics.reply(to: $0)) } }) { server in
            let plain = try TestHTTP.get(port: server.port, "/static/app.js")
            #expect(plain.status == 200)
            #expect(plain.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(plain.header("Cache-Control") == "no-cache")
            #expect(plain.text.hasPrefix("console.log"))
            let etag = try #require(plain.header("ETag"))

            let revalidated = try TestHTTP.get(port: server.port, "/static/app.js", headers: [("If-None-Match", etag)])
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            let changed = try TestHTTP.get(port: server.port, "/static/app.js", headers: [("If-None-Match", "\"other\"")])
            #expect(changed.status == 200)

            let gzipped = try TestHTTP.get(port: server.port, "/static/app.js", headers: [("Accept-Encoding", "br, gzip")])
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.body.count < plain.body.count)
            #expect(Array(gzipped.body.prefix(2)) == [0x1f, 0x8b])
            let refused = try TestHTTP.get(port: server.port, "/static/app.js", headers: [("Accept-Encoding", "gzip;q=0")])
            #expect(refused.header("Content-Encoding") == nil)

            let versioned = try TestHTTP.get(port: server.port, statics.versionedURL(of: "app.js"))
            #expect(versioned.header("Cache-Control") == "max-age=31536000, immutable")
            let stale = try TestHTTP.get(port: server.port, "/static/app.js?v=old")
            #expect(stale.header("Cache-Control") == "no-cache")

            #expect(try TestHTTP.get(port: server.port, "/static/sub/style.css").header("Content-Type") == "text/css; charset=utf-8")
            #expect(try TestHTTP.get(port: server.port, "/static/.hidden").status == 404)
            #expect(try TestHTTP.get(port: server.port, "/static/missing.js").status == 404)
            for escape in ["/static/../Package.swift", "/static/%2e%2e%2f%2e%2e%2fetc/passwd", "/static/sub/..%2fapp.js", "/static/app.js%00.png"] {
                #expect(try TestHTTP.get(port: server.port, escape).status == 400, "\(escape)")
            }
        }
    }

    @Test func aScriptIsServedWithoutItsCommentLinesAndNothingElseChanges() throws {
        let source = "// a comment\nconst a = 1 // after code, kept\n  // indented\n\t// tabbed\nconst url = 'http://x/'\n\n//\nend()"
        let served = String(decoding: StaticFiles.withoutCommentLines(Array(source.utf8)), as: UTF8.self)
        #expect(served == "const a = 1 // after code, kept\nconst url = 'http://x/'\n\nend()")
        let trailing = "a()\n// last\n"
        #expect(String(decoding: StaticFiles.withoutCommentLines(Array(trailing.utf8)), as: UTF8.self) == "a()\n")
        // Through the folder: the script loses them, a stylesheet keeps every byte.
        let folder = try folder()
        try "// why\nrun()\n".write(toFile: folder + "/c.js", atomically: true, encoding: .utf8)
        try "// not a comment in CSS\n".write(toFile: folder + "/c.css", atomically: true, encoding: .utf8)
        let statics = try StaticFiles(folder: folder)
        #expect(statics.file(named: "c.js")?.body.bytes == Array("run()\n".utf8))
        #expect(statics.file(named: "c.css")?.body.bytes == Array("// not a comment in CSS\n".utf8), "only scripts lose comment lines")
    }
}
