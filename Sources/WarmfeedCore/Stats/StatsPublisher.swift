/// A part of the server that shows the operator its numbers: it fills its own
/// sections of `CacheStats` (and only those), and the operator's views —
/// `/admin/cache`, the dashboard, `/metrics` — read the whole value without
/// knowing which part filled what. A new number is a field of its section,
/// set where the part keeps it.
///
/// Publishers are asked in the order they are given, each on the caller's
/// thread; a publish reads what the part holds now (under its own lock, if
/// it has one) and does no I/O.
public protocol StatsPublisher: Sendable {
    func publish(into stats: inout CacheStats)
}
