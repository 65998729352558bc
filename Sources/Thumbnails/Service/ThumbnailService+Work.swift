import CoreMetrics
import HTTPServer
import ImageFormats
import Logging
import OriginFetcher
import Reckoning
import Synchronization
import Thumbnailer
import WarmfeedCore

/// The work the state machine's actions ask for, each ending in the event
/// that tells the machine how it went: a tier read, the item read, an
/// original read back from disk, claimed, fetched or asked of its owner, a
/// resize. Each returns the work that event left (see `drive`). None of it
/// holds the lock while it waits.
extension ThumbnailService {
    func lookUp(_ key: ThumbnailKey, tier: Int) async -> [State.Action] {
        let lookup: State.Lookup
        switch await tiers[tier].read(key) {
        case .hit(let bytes): lookup = .hit(made(key, from: bytes))
        case .miss: lookup = .miss
        case .failed(let remaining): lookup = .failed(remaining: remaining)
        }
        let now = clock.now
        return apply { $0.machine.tierAnswered(key, tier: tier, lookup, now: now) }
    }

    /// Reads the item a reader's job needs made.
    func readItem(of key: ThumbnailKey) async -> [State.Action] {
        let read: State.ItemRead
        do {
            if let item = try await store.item(id: key.itemID) {
                if item.imageURL == nil {
                    read = .placeholder
                } else {
                    // The picture asked for is no longer the item's (its image changed, or the
                    // store was replaced): never another picture under its name.
                    read = Picture(item: item, epoch: store.epoch) == key.picture ? .found(item) : .noSuchItem
                }
            } else {
                read = .noSuchItem
            }
        } catch {
            // The store is down: the box keeps its placeholder, and the next look asks again.
            read = .placeholder
        }
        return apply { $0.machine.itemRead(key, read) }
    }

    func shared(_ tier: Int) -> (any SharedThumbnailTier)? { tiers[tier] as? any SharedThumbnailTier }

    /// Reads `picture`'s original back from disk.
    func readOriginal(_ picture: Picture) async -> [State.Action] {
        let bytes = originalStore?.read(picture)
        let now = clock.now
        return apply { $0.machine.originalRead(picture: picture, bytes, now: now) }
    }

    /// Asks the shared tier for the claim on fetching `picture`'s original
    /// (waiting while another node fetches it, or learning which node owns it).
    func claimOriginal(_ picture: Picture, tier: Int) async -> [State.Action] {
        let claim = await shared(tier)?.claimOriginal(picture) ?? .unavailable
        let now = clock.now
        return apply { $0.machine.originalClaimAnswered(picture: picture, claim, now: now) }
    }

    /// Asks the node that owns `key`'s original for `key`, as a browser
    /// would (the thumbnail's own URL, the format in `Accept`): it makes it
    /// from the original it keeps, and answers from its cache after that.
    func askOwner(_ key: ThumbnailKey, owner: String, urgent: Bool) async -> [State.Action] {
        let answer: State.OwnerAnswer
        // A node that is gone refuses the connection or never connects; one that is
        // busy resizing takes its time, and waiting for it is still one fetch cheaper.
        var limits = limits
        // The cluster's own nodes: not a feed's URL, so not under the feeds' address policy.
        limits.addressPolicy = .anywhere
        limits.connectTimeout = .seconds(2)
        limits.totalTimeout = limits.totalTimeout + .seconds(20)
        limits.lowSpeedLimit = 0
        // A node answers for itself: a redirect (anywhere) is not followed, and a
        // thumbnail is tens of kilobytes.
        limits.maxRedirects = 0
        limits.maxBodyBytes = Self.largestPeerAnswer
        let url = "\(owner)/thumbs/\(key.picture.name)/\(key.variant.name)"
        let start = clock.now
        do throws(FetchError) {
            let reply = try await fetcher.fetch(
                url, limits: limits, urgent: urgent, headers: [("Accept", key.variant.format.mediaType), (ThumbnailRoutes.nodeHeader, nodeName)])
            if reply.contentType?.hasPrefix(key.variant.format.mediaType) == true {
                if ThumbnailCheck.holds(reply.bytes, as: key.variant) {
                    answer = .made(made(key, from: reply.bytes))
                } else {
                    // Not the image it says it is: neither served nor stored. The owner is
                    // treated as gone, and the original looked for again.
                    ownerAnswersRefused.add(1, ordering: .relaxed)
                    logger.warning("a peer answered a thumbnail with bytes that are not one: refused", metadata: ["url": "\(url)"])
                    answer = .unreachable
                }
            } else {
                // The owner's placeholder: the origin failed there, and it said so in the shared tier too.
                answer = .failed(remaining: firstFailureSeconds)
            }
        } catch .httpStatus(let status) where status == 404 {
            answer = .failed(remaining: firstFailureSeconds)
        } catch .httpStatus(503) {
            // Not made yet there (its wait ran out, or its AVIF waits for pre-warm): busy, not gone.
            answer = .busy
        } catch .timedOut where clock.now - start < 3 {
            // Within the connect timeout: the node never answered the connection.
            answer = .unreachable
        } catch .busy, .cancelled, .timedOut {
            // Every connection to the owner taken for the queue's whole bound, an answer
            // that took longer than the whole timeout, or the fetcher stopped: a busy node
            // is not a gone one.
            answer = .busy
        } catch {
            answer = .unreachable
        }
        let now = clock.now
        return apply { $0.machine.ownerAnswered(key, owner: owner, answer, now: now) }
    }

    func fetchOriginal(_ picture: Picture, of item: FeedItem, urgent: Bool) async -> [State.Action] {
        let result: Result<[UInt8], State.Failure>
        var seconds: Double?
        var lease: BodyLease?
        if let original = origin.original(of: item) {
            let url = original.url
            let start = clock.now
            do throws(FetchError) {
                // A reader may have joined since the fetch was decided: it raised this task (`promoteFetch`).
                let urgentNow = urgent || Task.currentPriority >= .high
                let body = try await fetchBody(of: original, urgent: urgentNow)
                (result, lease) = (.success(body.bytes), body.lease)
                seconds = clock.now - start
                metrics.originFetched(seconds: seconds!)
            } catch .busy, .cancelled {
                // No connection to a busy origin came free in time, or the fetcher stopped:
                // not the origin's failure, and not remembered as one.
                result = .failure(.busy)
            } catch {
                result = .failure(.origin)
                // A refusal by the address policy (or of a file outside the folders) is a failure
                // like any origin's, remembered as one, but told once per host (`isRefusal`).
                if !isRefusal(error, url: url) {
                    // What an operator asks first when placeholders appear (nginx logs each upstream error too).
                    logger.warning(
                        "origin fetch failed: the placeholder is served for a while",
                        metadata: [
                            "url": "\(url)", "error": "\(error)", "seconds": "\(clock.now - start)",
                        ])
                }
            }
        } else {
            result = .failure(.noSource)
        }
        let now = clock.now
        return apply { locked in
            locked.prewarmFetches[picture] = nil
            if let lease { locked.leases[picture, default: []].append(lease) }
            let actions = locked.machine.originalArrived(picture: picture, result, seconds: seconds, now: now)
            // No resize took it (nobody waits any more): its bytes go at once.
            if !locked.machine.holdsOriginal(of: picture) { locked.leases[picture] = nil }
            return actions
        }
    }

    func resize(_ key: ThumbnailKey, original: [UInt8]) async -> [State.Action] {
        let start = clock.now
        let format = key.variant.format
        let result: Result<State.Made, State.Failure>
        var seconds: Double?
        if let thumbnail = try? await thumbnailer.thumbnail(
            of: original, width: Self.box.width * key.variant.scale, height: Self.box.height * key.variant.scale, format: format
        ) {
            seconds = clock.now - start
            metrics.resized(seconds: seconds!)
            if let preview = thumbnail.preview { previews?.note(key.itemID, preview) }
            result = .success(made(key, from: thumbnail.bytes))
        } else {
            result = .failure(.image)
        }
        let now = clock.now
        return apply { locked in
            locked.prewarmResizes[key] = nil
            let actions = locked.machine.resized(key, result, seconds: seconds, now: now)
            // The last resize of the original ended: the bytes of its body go.
            if !locked.machine.holdsOriginal(of: key.picture) { locked.leases[key.picture] = nil }
            return actions
        }
    }

    /// A thumbnail's bytes made into what memory keeps: the whole response, prepared once.
    func made(_ key: ThumbnailKey, from bytes: [UInt8]) -> State.Made {
        State.Made(value: PreparedResponse(Self.imageResponse(bytes, format: key.variant.format)), bytes: bytes, cost: bytes.count + 512)
    }

    /// A thumbnail's response: cacheable for a day, varying with `Accept`
    /// (the format), with its bytes' hash as its validator (hashed once, when
    /// it is made or read from a tier), so a browser's revalidation is a 304.
    static func imageResponse(_ bytes: [UInt8], format: ImageFormat) -> Response {
        Response(
            status: 200,
            headers: [
                HTTPField("Content-Type", format.mediaType),
                HTTPField("ETag", "\"" + String(FNV1a.hash64(bytes), radix: 36) + "\""),
            ] + cachingHeaders, body: ResponseBytes(bytes))
    }

    /// What a thumbnail's 200 and 304 both carry. No `public`: nothing here is
    /// behind authentication, so any cache may keep it anyway.
    static let cachingHeaders = [HTTPField("Cache-Control", "max-age=86400"), HTTPField("Vary", "Accept")]
}
