/// Small feeds of each kind, as publishers write them.
enum XMLFeedCorpus {
    static let rss091 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"
          "http://my.netscape.com/publish/formats/rss-0.91.dtd">
        <rss version="0.91">
          <channel>
            <title>Caf&eacute; News</title>
            <link>http://news.example.com/</link>
            <description>All the news&nbsp;&mdash; fit to print</description>
            <language>fr</language>
            <image>
              <title>Logo</title>
              <url>http://news.example.com/logo.gif</url>
              <link>http://news.example.com/about</link>
            </image>
            <item>
              <title>Cr&egrave;me br&ucirc;l&eacute;e &amp; more</title>
              <link>http://news.example.com/creme</link>
              <description>D&eacute;j&agrave; vu &copy; 1999</description>
            </item>
            <item>
              <title>Second</title>
              <link>http://news.example.com/second</link>
            </item>
          </channel>
        </rss>
        """

    static let rss092 = """
        <?xml version="1.0"?>
        <rss version="0.92">
          <channel>
            <title>Podcast 0.92</title>
            <link>http://pod.example.com/</link>
            <item>
              <description>Episode one, &lt;b&gt;bold&lt;/b&gt;</description>
              <enclosure url="http://pod.example.com/one.mp3" length="12216320" type="audio/mpeg"/>
            </item>
            <item>
              <title>Two</title>
              <enclosure url="http://pod.example.com/two.jpg" length="1000" type="image/jpeg"/>
            </item>
          </channel>
        </rss>
        """

    static let rss20 = """
        <?xml version="1.0" encoding="utf-8"?>
        <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"
             xmlns:content="http://purl.org/rss/1.0/modules/content/"
             xmlns:dc="http://purl.org/dc/elements/1.1/"
             xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
             xmlns:atom="http://www.w3.org/2005/Atom">
          <channel>
            <title>Photo Blog</title>
            <link>https://photos.example.com/</link>
            <atom:link href="https://photos.example.com/feed" rel="self" type="application/rss+xml"/>
            <item>
              <title>  Sunset over the bay  </title>
              <link>https://photos.example.com/sunset</link>
              <guid isPermaLink="false">photo-1001</guid>
              <pubDate>Tue, 10 Jun 2025 04:00:00 GMT</pubDate>
              <dc:date>2025-06-09T00:00:00Z</dc:date>
              <description><![CDATA[<p>A <em>red</em> sky.</p>]]></description>
              <content:encoded><![CDATA[<p><img src="/img/sunset-full.jpg"> Full story</p>]]></content:encoded>
              <itunes:image href="https://photos.example.com/art/sunset.jpg"/>
              <media:content url="https://cdn.example.com/sunset.mp4" medium="video" type="video/mp4">
                <media:thumbnail url="https://cdn.example.com/sunset-poster.jpg" width="320" height="180"/>
              </media:content>
              <media:content url="https://cdn.example.com/sunset.jpg" medium="image" width="1600" height="900"/>
              <media:content url="https://cdn.example.com/sunset-typed" type="image/webp"/>
              <media:content url="https://cdn.example.com/sunset-small.PNG?v=2"/>
              <media:content url="https://cdn.example.com/sunset.mov"/>
              <media:group>
                <media:content url="https://cdn.example.com/g1.jpg" medium="image" width="640" height="360" type="image/jpeg"/>
                <media:thumbnail url="https://cdn.example.com/g1-thumb.jpg"/>
              </media:group>
              <enclosure url="https://cdn.example.com/sunset.mp3" length="123" type="audio/mpeg"/>
              <enclosure url="https://cdn.example.com/sunset-enc.jpg" length="456" type="image/jpeg"/>
            </item>
            <item>
              <title>Only a permalink guid</title>
              <guid>https://photos.example.com/p/1002</guid>
              <dc:date>2025-06-08T00:00:00Z</dc:date>
              <dc:modified>2025-06-08T12:00:00Z</dc:modified>
            </item>
            <item>
              <title>A guid that is not a URL</title>
              <guid>tag:photos.example.com,2025:1003</guid>
            </item>
          </channel>
        </rss>
        """

    static let rdf = """
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                 xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
          <channel rdf:about="http://rdf.example.org/">
            <title>RDF Site</title>
            <link>http://rdf.example.org/</link>
            <description>An RSS 1.0 feed</description>
            <items>
              <rdf:Seq>
                <rdf:li rdf:resource="http://rdf.example.org/one"/>
                <rdf:li rdf:resource="http://rdf.example.org/two"/>
              </rdf:Seq>
            </items>
          </channel>
          <item rdf:about="http://rdf.example.org/one">
            <title>One</title>
            <link>http://rdf.example.org/one</link>
            <description>First item</description>
            <dc:date>2025-01-02T03:04:05Z</dc:date>
            <content:encoded>&lt;p&gt;Full &amp;amp; rich&lt;/p&gt;</content:encoded>
          </item>
          <item rdf:about="http://rdf.example.org/two">
            <title>Two</title>
            <link>http://rdf.example.org/two</link>
          </item>
        </rdf:RDF>
        """

    static let atom = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/"
              xml:base="https://blog.example.net/">
          <title type="text">Atom Blog</title>
          <link rel="self" href="https://blog.example.net/feed.atom"/>
          <link href="https://blog.example.net/"/>
          <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
          <updated>2025-03-01T00:00:00Z</updated>
          <entry xml:base="posts/2025/">
            <title type="html">Fish &amp;amp; &lt;i&gt;chips&lt;/i&gt;</title>
            <link rel="alternate" type="text/html" href="fish.html"/>
            <link rel="enclosure" type="image/png" href="fish.png" length="3000"/>
            <link rel="enclosure" type="audio/mpeg" href="fish.mp3" length="9000"/>
            <link rel="edit" href="edit/1"/>
            <id>tag:blog.example.net,2025:1</id>
            <published>2025-02-28T10:00:00Z</published>
            <updated>2025-03-01T00:00:00Z</updated>
            <summary>Plain &lt;summary&gt;</summary>
            <content type="xhtml">
              <div xmlns="http://www.w3.org/1999/xhtml"><p>Hello <b>there</b> &amp; <img src="a.jpg" alt="A &quot;quote&quot;"/><br/>bye</p></div>
            </content>
            <source><title>Elsewhere</title><id>tag:elsewhere</id></source>
          </entry>
          <entry>
            <title>Second</title>
            <link href="/second"/>
            <id>tag:blog.example.net,2025:2</id>
            <updated>2025-03-02T00:00:00Z</updated>
            <content type="html">&lt;p&gt;HTML &lt;img src="b.jpg"&gt;&lt;/p&gt;</content>
            <media:group><media:thumbnail url="https://i.example.net/2.jpg" width="480" height="360"/></media:group>
          </entry>
          <entry xml:base="https://other.example.org/x/">
            <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">An <em>XHTML</em> title</div></title>
            <id>tag:blog.example.net,2025:3</id>
            <content>Text content with &lt;tags&gt; &amp; ampersands</content>
          </entry>
        </feed>
        """
}
