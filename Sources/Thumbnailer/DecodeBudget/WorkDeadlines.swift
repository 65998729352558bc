import CVips
import Foundation

/// Stops libvips work that runs past its deadline, from a thread of its own.
///
/// libvips stops an image's computation at the next strip asked of it once
/// the image is killed (`vips_image_set_kill`). Its "eval" signal, which
/// would let the working thread check a deadline itself, proved unreliable
/// in libvips 8.14 with one thread per operation: in about half the saves of
/// a 4000 × 3000 PNG it was never emitted (the pool's main loop saw the work
/// finished before it saw a tick), so the deadline is kept here instead.
/// The decisions are ``DeadlineWatch``'s, under this one lock; an image is
/// killed under the lock too, and unwatched under it before it is released,
/// so a kill never reaches an image already freed.
final class WorkDeadlines: @unchecked Sendable {
    // Safe to share: `watch`, `images` and `started` are touched only with `condition` locked.
    /// The process's watcher: one thread, asleep while nothing is watched.
    static let shared = WorkDeadlines()

    private let condition = NSCondition()
    private var watch = DeadlineWatch()
    private var images: [UInt64: UnsafeMutablePointer<VipsImage>] = [:]
    private var started = false

    /// Runs `body`, which computes `image` (saves it, copies its pixels), and
    /// stops the computation at `deadline` (at once when it is past already).
    /// Answers `body`'s result and whether the deadline passed while it ran.
    func run<R>(_ image: VipsImageView, until deadline: ContinuousClock.Instant, _ body: () -> R) -> (result: R, expired: Bool) {
        let id = condition.withLock {
            let (id, due) = watch.add(deadline: deadline, now: .now)
            images[id] = image.pointer
            if due { LibVips.kill(image.pointer) }
            if !started {
                started = true
                let thread = Thread { [self] in patrol() }
                thread.name = "thumbnailer-deadlines"
                thread.start()
            }
            condition.signal()
            return id
        }
        let result = body()
        let expired = condition.withLock {
            images[id] = nil
            return watch.remove(id)
        }
        return (result, expired)
    }

    /// The watcher's loop: kills the images past their deadline, then sleeps
    /// until the next deadline or a new watch.
    private func patrol() {
        condition.lock()
        while true {
            let now = ContinuousClock.now
            for id in watch.due(now: now) {
                if let image = images[id] { LibVips.kill(image) }
            }
            if let next = watch.nextLook(now: now) {
                let wait = next - now
                let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.001, seconds)))
            } else {
                condition.wait()
            }
        }
    }
}
