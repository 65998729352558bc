import ServiceLifecycle
import Synchronization

/// Running the state machine's actions, in the manner of async-http-client's
/// `modifyStateAndRunActions`: an event goes into the machine under the one
/// lock; the actions that touch the task tables run there too; the quick ones
/// (answering waiters, moving a queued fetch up) run as soon as the lock is
/// let go; what is left is work (a tier read, a fetch, a resize, a write),
/// each piece of which ends in the next event.
///
/// A job's steps follow one another in one task: the task that did a step
/// does the step its event returns (raising its own priority when that step
/// is a reader's), and only steps beside it (a write into the tiers, a second
/// variant's resize) get tasks of their own. Every task is a child of `run()`'s
/// task group, but pre-warm's fetches and resizes, which are tasks of their own
/// (so that a reader who joins can raise them) that the group awaits.
extension ThumbnailService {
    /// Work for `run()`'s task group: a step of a job, at a priority.
    struct Work: Sendable {
        var priority: TaskPriority?
        var body: @Sendable () async -> Void
    }

    /// Starts the work the machine asks for inside this service's task group,
    /// until graceful shutdown; then cancels what is still in flight (the
    /// server has stopped: nobody reads the answers, and a fetch could take
    /// its whole timeout), so a waiter left gets the placeholder.
    package func run() async throws {
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                for await work in self.work.stream {
                    group.addTask(priority: work.priority) { await work.body() }
                }
            } onGracefulShutdown: {
                self.work.continuation.finish()
            }
            group.cancelAll()
            let prewarm = self.locked.withLock { locked in
                Array(locked.prewarmFetches.values) + Array(locked.prewarmResizes.values)
            }
            for task in prewarm { task.cancel() }
        }
    }

    /// Feeds one event to the state machine under the lock and runs there the
    /// actions that touch the task tables; then runs the quick actions and
    /// returns the work left, for the caller to do or `start`.
    func apply(_ event: (inout Locked) -> [State.Action]) -> [State.Action] {
        let actions = locked.withLock { locked in event(&locked).filter { runLocked($0, in: &locked) } }
        return actions.filter { !runQuick($0) }
    }

    /// Does `steps`, the last in this task (the job's own next step, when one
    /// is there), the others in tasks of their own, and so on with the steps
    /// each returns, until the job waits on nothing this task does.
    func drive(_ steps: [State.Action]) async {
        var steps = steps
        while !steps.isEmpty {
            let index = steps.lastIndex { Self.continuesJob($0) } ?? steps.index(before: steps.endIndex)
            let step = steps.remove(at: index)
            start(steps, priority: Task.currentPriority)
            if let wanted = Self.priority(of: step), wanted > Task.currentPriority {
                // A reader waits on this step now: this task goes ahead of pre-warm's.
                withUnsafeCurrentTask { $0?.escalatePriority(to: wanted) }
            }
            steps = await perform(step)
        }
    }

    /// Starts each of `steps` in a task of its own, in this service's task group.
    func start(_ steps: [State.Action], priority: TaskPriority? = nil) {
        for step in steps {
            spawn(priority: Self.priority(of: step) ?? priority) { await self.drive([step]) }
        }
    }

    /// Adds `body` to `run()`'s task group; once it has ended (shutdown),
    /// runs it anyway, so no waiter is left unanswered.
    func spawn(priority: TaskPriority?, _ body: @escaping @Sendable () async -> Void) {
        if case .terminated = work.continuation.yield(Work(priority: priority, body: body)) {
            Task(priority: priority) { await body() }
        }
    }

    /// Runs the part of `action` that needs the lock: pre-warm's fetch or
    /// resize is started as a task kept in its table (made under the lock its
    /// end takes to remove it, so it is never kept after it ended), and a
    /// reader who joins raises that task's priority (the thumbnailer and the
    /// fetch queue move escalated work up). Nothing here waits. Returns
    /// whether something is left to run outside the lock.
    private func runLocked(_ action: State.Action, in locked: inout Locked) -> Bool {
        switch action {
        case .fetchOriginal(let picture, let item, urgent: false):
            let task = Task(priority: .low) { await self.drive(await self.fetchOriginal(picture, of: item, urgent: false)) }
            locked.prewarmFetches[picture] = task
            spawn(priority: .low) { await task.value }
            return false
        case .resize(let key, let original, urgent: false):
            // AVIF nobody waits for goes behind every WebP, pre-warm's included: it costs
            // nearly twice a WebP's CPU, and a reader without it is answered with the WebP.
            let priority: TaskPriority = key.variant.format == .avif ? .background : .low
            let task = Task(priority: priority) { await self.drive(await self.resize(key, original: original)) }
            locked.prewarmResizes[key] = task
            spawn(priority: priority) { await task.value }
            return false
        case .promoteFetch(let picture, _):
            // A low-priority task on a busy machine may not even have asked for its fetch yet;
            // one already waiting for a connection is moved up outside the lock.
            locked.prewarmFetches[picture]?.escalatePriority(to: .high)
            return true
        case .promoteResize(let key):
            locked.prewarmResizes[key]?.escalatePriority(to: .high)
            return false
        default:
            return true
        }
    }

    /// Runs `action` at once if it is quick (`Action.Kind.quick`); returns whether it was.
    private func runQuick(_ action: State.Action) -> Bool {
        guard action.kind == .quick else { return false }
        switch action {
        case .answer(let waiters, let answer):
            for waiter in waiters { waiter.resume(returning: answer) }
        case .promoteFetch(_, let item):
            // A fetch already waiting for a connection moves up.
            if let url = origin.url(for: item) { fetcher.promote(url) }
        default:
            break
        }
        return true
    }

    /// Does one step and returns the work its event left.
    private func perform(_ step: State.Action) async -> [State.Action] {
        switch step {
        case .lookUp(let key, let tier):
            return await lookUp(key, tier: tier)
        case .readItem(let key):
            return await readItem(of: key)
        case .readOriginal(let picture):
            return await readOriginal(picture)
        case .claimOriginal(let picture, let tier):
            return await claimOriginal(picture, tier: tier)
        case .fetchOriginal(let picture, let item, _):
            // A reader waits on urgent work: it goes ahead of pre-warm's in the fetch and libvips
            // queues (pre-warm's own was started under the lock, `runLocked`).
            return await fetchOriginal(picture, of: item, urgent: true)
        case .resize(let key, let original, _):
            return await resize(key, original: original)
        case .askOwner(let key, let owner, let urgent):
            return await askOwner(key, owner: owner, urgent: urgent)
        case .store(let key, let bytes, let indices):
            for index in indices { await tiers[index].write(key, bytes) }
        case .storeFailure(let key, let seconds, let tier):
            await shared(tier)?.rememberFailure(key, seconds: seconds)
        case .keepOriginal(let picture, let bytes, let owningIn):
            // Written before the owner record: a node that reads the record finds the original here.
            originalStore?.write(picture, bytes)
            if let owningIn { await shared(owningIn)?.ownOriginal(picture) }
            return apply { $0.machine.originalKept(picture: picture) }
        case .originalFailed(let picture, let seconds, let tier):
            await shared(tier)?.originalFailed(picture, seconds: seconds)
        case .releaseOriginalClaim(let picture, let tier):
            await shared(tier)?.releaseOriginal(picture)
        case .forgetOwner(let picture, let url, let tier):
            await shared(tier)?.forgetOwner(picture, url: url)
        case .answer, .promoteFetch, .promoteResize, .release:
            break
        }
        return []
    }

    /// Whether `step` is the job's own next step (its result is the job's
    /// next event), rather than a write beside it that nothing waits on.
    private static func continuesJob(_ step: State.Action) -> Bool {
        if case .jobStep = step.kind { return true }
        return false
    }

    /// The priority `step` runs at, from its kind; nil: its caller's. A
    /// reader's work goes ahead of pre-warm's; what other nodes may wait on
    /// is not held back behind pre-warm's work; writes nobody waits on go last.
    private static func priority(of step: State.Action) -> TaskPriority? {
        switch step.kind {
        case .jobStep(urgent: true): .high
        case .jobStep(urgent: false): .low
        case .sideEffect(othersWait: true): .medium
        case .sideEffect(othersWait: false): .low
        case .jobStep(urgent: nil), .quick: nil
        }
    }
}
