import ImageFormats
import Testing

@testable import Thumbnails

/// Which formats a request takes, best first (`ThumbnailRoutes.formats`).
@Suite struct ThumbnailFormatsTests {
    @Test func formatsFollowAcceptsQualityThenSize() {
        #expect(ThumbnailRoutes.formats(accepted: nil) == [.jpeg], "no Accept: JPEG, which every client shows")
        #expect(ThumbnailRoutes.formats(accepted: "*/*") == [.jpeg])
        #expect(ThumbnailRoutes.formats(accepted: "image/avif,image/webp,image/apng,image/*,*/*;q=0.8") == [.avif, .webp, .jpeg])
        #expect(ThumbnailRoutes.formats(accepted: "image/webp,*/*") == [.webp, .jpeg])
        #expect(ThumbnailRoutes.formats(accepted: "image/avif") == [.avif], "AVIF alone: made at pre-warm's pace, never by the request")
        #expect(ThumbnailRoutes.formats(accepted: "image/webp;q=0, image/jpeg") == [.jpeg])
        #expect(ThumbnailRoutes.formats(accepted: "image/avif;q=0.4, image/webp;q=0.9, image/jpeg;q=0.5") == [.webp, .jpeg, .avif])
        #expect(ThumbnailRoutes.formats(accepted: "text/html") == [.jpeg], "nothing taken: still a picture")
    }
}
