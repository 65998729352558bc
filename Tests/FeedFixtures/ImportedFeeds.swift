import Foundation

/// Feeds the import tests write: small, readable, each with the quirk a test needs.
public enum ImportedFeeds {
    /// An RSS 2.0 feed of `items` (newest first), each with an image unless `textOnly` holds its index.
    /// Dates come from the number an id ends with (p3: 25 Oct 2024), so an item keeps its date from one version
    /// of the feed to the next; `dates` names others.
    public static func rss(
        _ items: [(id: String, title: String)], textOnly: Set<Int> = [], base: String = "https://blog.example",
        dates: [String: String] = [:]
    ) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">
            <channel><title>Test blog</title><link>\(base)/</link><description>d</description>

            """
        for (index, item) in items.enumerated() {
            let number = Int(item.id.reversed().prefix { $0.isNumber }.reversed().map(String.init).joined()) ?? index
            let date = dates[item.id] ?? "Mon, \(String(format: "%02d", 28 - number % 28)) Oct 2024 10:00:00 GMT"
            xml += "<item><guid>\(item.id)</guid><title>\(item.title)</title><link>\(base)/posts/\(item.id)</link>"
            xml += "<description>Summary of \(item.title)</description><pubDate>\(date)</pubDate>"
            if !textOnly.contains(index) {
                xml += "<media:content url=\"/img/\(item.id).jpg\" medium=\"image\" width=\"1200\" height=\"800\"/>"
            }
            xml += "</item>\n"
        }
        return xml + "</channel></rss>\n"
    }

    /// A JSON Feed 1.1 of `items`.
    public static func jsonFeed(_ items: [(id: String, title: String)]) -> String {
        let entries = items.enumerated().map { index, item in
            #"{"id": "\#(item.id)", "title": "\#(item.title)", "url": "https://json.example/\#(item.id)", "image": "https://json.example/\#(item.id).png", "date_published": "2024-09-\#(String(format: "%02d", 28 - index % 28))T10:00:00Z"}"#
        }
        return
            #"{"version": "https://jsonfeed.org/version/1.1", "title": "JSON test", "home_page_url": "https://json.example/", "items": [\#(entries.joined(separator: ",\n"))]}"#
    }

    /// Everything a hostile feed tries, in the places it tries it.
    public static let hostile = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:media="http://search.yahoo.com/mrss/">
        <channel><title>Hostile</title><link>https://evil.example/</link><description>x</description>
        <item><guid>h1</guid><title>&lt;script&gt;alert('title')&lt;/script&gt;Plain &lt;img src=x onerror=alert(1)&gt;</title>
          <link>javascript:alert('link')</link>
          <description><![CDATA[<p onclick="alert(2)">Click</p><script>alert(3)</script><a href="javascript:alert(4)">x</a><iframe src="https://evil.example"></iframe>]]></description>
          <media:content url="data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDUpPC9zY3JpcHQ+PC9zdmc+" medium="image"/>
          <pubDate>Mon, 07 Oct 2024 10:00:00 GMT</pubDate></item>
        <item><guid>h2</guid><title>"&gt;&lt;svg onload=alert(6)&gt;</title><link>https://evil.example/" onmouseover="alert(7)</link>
          <content:encoded><![CDATA[<img src="javascript:alert(8)"><style>body{display:none}</style>text]]></content:encoded>
          <enclosure url="file:///etc/passwd" type="image/jpeg" length="1"/>
          <pubDate>Sun, 06 Oct 2024 10:00:00 GMT</pubDate></item>
        <item><guid>h3</guid><title>Data link</title><link>data:text/html,&lt;script&gt;alert(9)&lt;/script&gt;</link>
          <description>&amp;lt;b&amp;gt;double-escaped&amp;lt;/b&amp;gt;</description>
          <pubDate>Sat, 05 Oct 2024 10:00:00 GMT</pubDate></item>
        </channel></rss>
        """

    /// Writes `text` to a fresh temporary file and returns its path.
    public static func file(_ text: String, name: String = "feed.xml") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A fresh data folder path (not created).
    public static func dataFolder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-import-data-\(UUID().uuidString)").path
    }
}
