import Foundation
import Testing
import XMLStream

/// Hostile documents: nothing outside the document is read, nothing expands.
@Suite struct SecurityTests {
    @Test func externalEntityIsNeverRead() throws {
        let marker = try MarkerFile()
        let document = """
            <?xml version="1.0"?>
            <!DOCTYPE x [
              <!ENTITY passwd SYSTEM "file:///etc/passwd">
              <!ENTITY marker SYSTEM "\(marker.url)">
              <!ENTITY % parameter SYSTEM "\(marker.url)">
              %parameter;
            ]>
            <x a="&marker;">&passwd; and &marker;</x>
            """
        let recorder = record(document)
        let delivered = recorder.allText + recorder.allAttributeValues
        #expect(!delivered.contains("root:"))
        #expect(!delivered.contains(MarkerFile.marker))
        #expect(recorder.startedElements.map(\.name.localName) == ["x"])
        #expect(recorder.texts == [" and "])
        #expect(recorder.errors.contains { $0.message.contains("passwd") })
        #expect(try marker.wasNotOpened())
    }

    @Test func billionLaughsExpandsNothing() {
        var document = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            document += "<!ENTITY lol\(level) \"\(String(repeating: "&\(previous);", count: 10))\">\n"
        }
        document += "]>\n<lolz>&lol9; a &amp; b</lolz>\n"
        let recorder = record(document)
        #expect(!recorder.allText.contains("lol"))
        #expect(recorder.texts == [" a & b"], "the text after the reference still arrives, with its &amp;")
        #expect(recorder.errors.first?.line == 14)
        #expect(recorder.errors.first?.message.contains("lol9") == true)
    }

    @Test func quadraticBlowupExpandsNothing() {
        let value = String(repeating: "x", count: 100_000)
        let references = String(repeating: "&big;", count: 10_000)
        let recorder = record("<!DOCTYPE r [<!ENTITY big \"\(value)\">]><r>\(references)</r>")
        #expect(recorder.allText.isEmpty)
        #expect(recorder.startedElements.count == 1)
    }

    @Test func externalDTDIsNeitherFetchedNorRead() throws {
        let marker = try MarkerFile(contents: "<!ENTITY m \"\(MarkerFile.marker)\">\n")
        let listener = try LoopbackListener()
        for system in ["http://127.0.0.1:1/x.dtd", "http://127.0.0.1:\(listener.port)/x.dtd", marker.url] {
            let recorder = record("<?xml version=\"1.0\"?>\n<!DOCTYPE x SYSTEM \"\(system)\">\n<x>&m; ok</x>")
            #expect(!recorder.allText.contains(MarkerFile.marker))
            #expect(recorder.texts == [" ok"])
        }
        let entity = record("<!DOCTYPE x [<!ENTITY e SYSTEM \"http://127.0.0.1:\(listener.port)/e\">]><x>&e;</x>")
        #expect(entity.allText.isEmpty)
        #expect(listener.connectionsWaiting() == 0, "nothing connected to the loopback listener")
        #expect(try marker.wasNotOpened())
    }
}

/// A file with a marker text, to show a parser never read it.
struct MarkerFile {
    static let marker = "MARKER-7f3a9c-never-read"
    let path: String
    var url: String { "file://\(path)" }

    init(contents: String = "\(Self.marker)\n") throws {
        path = NSTemporaryDirectory() + "xmlstream-marker-\(UUID().uuidString).txt"
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        // Access and change times in the past: reading the file would move the
        // access time (relatime updates it when it is not after the change time).
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// True when the file's access time is still the one set at creation.
    func wasNotOpened() throws -> Bool {
        defer { try? FileManager.default.removeItem(atPath: path) }
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_atim.tv_sec == 1_000_000_000
    }
}

/// A TCP listener on 127.0.0.1 that nobody should connect to.
final class LoopbackListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
    }

    /// Accepts without waiting; the number of connections that were made.
    func connectionsWaiting() -> Int {
        var count = 0
        while case let connection = accept(descriptor, nil, nil), connection >= 0 {
            close(connection)
            count += 1
        }
        return count
    }

    deinit { close(descriptor) }
}

/// libxml2's own limits, kept on.
@Suite struct LimitTests {
    @Test func deepNestingStopsAtTheDepthLimit() {
        // libxml2's push parser has no depth limit of its own (its pull parser
        // stops at 256): the stream parser keeps one.
        let depth = 100_000
        let recorder = record(String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth))
        #expect(recorder.startedElements.count == 256)
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.last?.severity == .fatal)
        #expect(recorder.errors.last?.message == "elements nested more than 256 deep: nothing after this is read")
    }

    @Test func attributesPastTheLimitAreDropped() {
        let attributes = (0..<10_000).map { " a\($0)=\"\($0)\"" }.joined()
        let recorder = record("<r>\n<t\(attributes)>text</t></r>")
        let element = recorder.startedElements[1]
        #expect(element.attributes.count == 256)
        #expect(element.attribute("a255") == "255")
        #expect(recorder.texts == ["text"])
        #expect(recorder.errors.map(\.description) == ["line 2: <t> has 10000 attributes: only the first 256 are read"])
    }

    @Test func longNameIsRefused() {
        let name = String(repeating: "n", count: 60_000)
        let recorder = record("<r><\(name)/><after/></r>")
        #expect(!recorder.startedElements.contains { $0.name.localName == name })
        #expect(!recorder.errors.isEmpty)
    }
}
