import Testing
import WarmfeedCore

@testable import Thumbnails

/// The originals between the origin and libvips, as a value of its own.
@Suite struct OriginalsPipelineTests {
    @Test func anOriginalIsHeldOnceByEveryResizeOfItAndGoesWithTheLast() {
        var pipeline = OriginalsPipeline(budget: 1000)
        pipeline.hold(1, bytes: 400)
        pipeline.hold(1, bytes: 400)
        #expect(pipeline.heldBytes == 400)
        pipeline.release(1)
        #expect(pipeline.heldBytes == 400)
        pipeline.release(1)
        #expect(pipeline.heldBytes == 0)
        pipeline.release(1)
        #expect(pipeline.heldBytes == 0)
    }

    @Test func fetchesOnTheWireCountAtWhatOriginalsWeighAndOneAlwaysGoesAhead() {
        var pipeline = OriginalsPipeline(budget: 1000)
        #expect(!pipeline.isFull, "nothing held and nothing on its way: a fetch goes ahead")
        pipeline.weigh(600)
        pipeline.fetchStarted()
        #expect(!pipeline.isFull)
        pipeline.fetchStarted()
        #expect(pipeline.isFull, "two of 600 on their way fill 1000")
        pipeline.fetchEnded()
        #expect(!pipeline.isFull)
    }

    @Test func heldBackFetchesStartReadersFirstThenPrewarmsThatAReaderJoined() {
        var pipeline = OriginalsPipeline(budget: 1000)
        pipeline.holdBack(1, urgent: false)
        pipeline.holdBack(2, urgent: false)
        pipeline.holdBack(3, urgent: true)
        pipeline.holdBack(4, urgent: false)
        pipeline.raise(4)
        var order: [Picture] = []
        while let place = pipeline.nextHeldBack(isUrgent: { $0 == 2 }) { order.append(pipeline.take(place)) }
        #expect(order == [3, 4, 2, 1])
        #expect(pipeline.deferredCount == 0)
        pipeline.holdBack(5, urgent: false)
        pipeline.hold(9, bytes: 1000)
        #expect(pipeline.nextHeldBack(isUrgent: { _ in true }) == nil, "none starts while the pipeline is full")
    }
}
