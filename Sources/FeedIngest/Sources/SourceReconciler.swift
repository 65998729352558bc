/// What a read of the source lists changes in the store: the feeds to add,
/// and the sources to take out of the river. Pure: no store, no clock.
///
/// A source leaves only when the value that listed it was read and no
/// longer names it (or is no longer given at all): a list that cannot be
/// fetched removes nothing. A list that reads empty after naming sources is
/// believed only when the next read says the same, so one truncated upload
/// does not empty the river. Sources that no value listed (`warmfeed import`
/// wrote them) are never removed by a list.
public enum SourceReconciler {
    /// A source the store keeps, as the reconciler needs it.
    public struct Stored: Sendable, Equatable {
        public var id: Int64
        public var key: String
        /// The `--source` value that listed it; nil for one `warmfeed import` wrote.
        public var listedBy: String?

        public init(id: Int64, key: String, listedBy: String?) {
            (self.id, self.key, self.listedBy) = (id, key, listedBy)
        }
    }

    /// What to do.
    public struct Plan: Sendable, Equatable {
        /// Listed feeds the store has no source for.
        public var add: [ListedFeed] = []
        /// Sources to remove, with their items.
        public var remove: [Int64] = []
        /// Values that read empty while the store held sources they listed:
        /// held this time; give them as `emptyBefore` to the next plan.
        public var emptyNow: Set<String> = []
    }

    /// The plan for `read` (of the values `specs`) against `stored`.
    public static func plan(stored: [Stored], read: SourceSpecs.Read, specs: [String], emptyBefore: Set<String>) -> Plan {
        var plan = Plan()
        let listed = Set(read.feeds.map(\.key))
        let keys = Set(stored.map(\.key))
        plan.add = read.feeds.filter { !keys.contains($0.key) }
        let named = Dictionary(grouping: read.feeds, by: \.listedBy)
        let given = Set(specs)
        for spec in given where named[spec] == nil && !read.failed.contains(spec) {
            if stored.contains(where: { $0.listedBy == spec && !listed.contains($0.key) }) { plan.emptyNow.insert(spec) }
        }
        for source in stored {
            guard let by = source.listedBy, !listed.contains(source.key) else { continue }
            if read.failed.contains(by) { continue }
            if plan.emptyNow.contains(by), !emptyBefore.contains(by) { continue }
            plan.remove.append(source.id)
        }
        return plan
    }
}
