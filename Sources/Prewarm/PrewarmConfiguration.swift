/// What pre-warm can be told, each with its one default: how many pages it
/// warms ahead of each reader (0: none), how many pages and thumbnails at
/// once, and how long page 1 is held at start while it is warmed.
/// `warmfeed serve`'s options set it (`WarmfeedConfiguration.prewarm`).
public struct PrewarmConfiguration: Sendable {
    /// Pages warmed ahead of each reader (0: no pre-warm; readers are not tracked).
    public var pages = 2
    /// Pages warmed at a time, and thumbnails at a time within a page.
    public var pagesAtOnce = 2
    public var thumbnailsAtOnce = 8
    /// The longest page 1 is held at start while it is warmed (`StartGate`).
    public var pageOneHold: Duration = .seconds(3)

    /// Whether readers are tracked and pages warmed ahead at all.
    public var isOn: Bool { pages > 0 }

    /// The defaults.
    public init() {}
}
