import Testing

@testable import Thumbnails

/// Which owner URLs a node believes: its peers', however they are spelled,
/// and nothing else, however close.
@Suite struct KnownPeersTests {
    @Test func aPeerIsKnownInAnySpellingOfItsAddress() {
        let peers = KnownPeers(["http://node1:8080", "HTTPS://Node2/", "http://[::1]:9000"])
        #expect(peers.known("http://node1:8080") == "http://node1:8080")
        #expect(peers.known("http://NODE1:8080/") == "http://node1:8080")
        #expect(peers.known("https://node2:443") == "https://node2:443")
        #expect(peers.known("https://node2") == "https://node2:443")
        #expect(peers.known("http://[::1]:9000") == "http://[::1]:9000")
    }

    @Test func anythingElseIsAStranger() {
        let peers = KnownPeers(["http://node1:8080", "https://node2"])
        let strangers = [
            "http://node1:8081", "https://node1:8080", "http://node2", "http://node1:8080/thumbs", "http://node1:8080?x=1",
            "http://user@node1:8080", "http://node1:8080#x", "http://node3:8080", "http://169.254.169.254", "ftp://node1:8080",
            "node1:8080", "", "http://", "http://node1:8080 ", "http://node1:0", "http://node1:65536", "http://node1:80:80",
            "http://node1:+8080", "http://evil.example@node1:8080", "http://node1.:8080",
        ]
        for url in strangers { #expect(peers.known(url) == nil, "\(url)") }
    }

    @Test func theListCanBeReplaced() {
        let peers = KnownPeers([])
        #expect(peers.isEmpty && peers.known("http://node1:8080") == nil)
        peers.set(["http://node1:8080", "not a url"])
        #expect(!peers.isEmpty && peers.known("http://node1:8080") != nil)
        peers.set([])
        #expect(peers.known("http://node1:8080") == nil)
    }
}
