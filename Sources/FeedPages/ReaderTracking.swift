import WarmfeedCore

/// What the feed's routes tell pre-warm: where each reader is, so the pages
/// ahead of them are warm when they arrive. Pages own the protocol and know
/// nothing of pre-warm; the `Prewarmer` conforms, and the root hands it in.
package protocol ReaderTracking: Sendable {
    /// Holds page 1 just after start, until it is warm.
    var startGate: StartGate { get }

    /// Reader `reader` was served page `number` (`query`, when it was asked
    /// for by cursor), whose neighbours are `older` and `newer`, at store
    /// revision `revision`, on a screen that loads `scale` thumbnails (nil
    /// when the browser did not say).
    func readerViewed(_ reader: UInt64, number: Int, query: PageQuery?, older: Cursor?, newer: Cursor?, revision: Int, scale: Int?)
}
