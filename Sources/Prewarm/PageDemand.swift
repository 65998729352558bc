/// The readers who want one page: how many at each rank (lower runs first)
/// and how many ask for each variant, in two fixed blocks. Before, each was
/// an array in a table of its own: two to four lookups, and two arrays
/// allocated, for each page of each view, which at `--threads 8` under
/// readers' load was an eighth of the server's CPU (perf, pinned).
struct PageDemand: Equatable {
    /// Readers by rank: `PrewarmPlanner.leadCap` keeps ranks below 64.
    var byRank = SIMD64<Int32>()
    /// Readers by variant bit.
    var byVariant = SIMD8<Int32>()

    mutating func add(rank: Int, variants: UInt8) {
        byRank[rank] += 1
        for bit in 0..<8 where variants & 1 << bit != 0 { byVariant[bit] += 1 }
    }

    mutating func remove(rank: Int, variants: UInt8) {
        byRank[rank] -= 1
        for bit in 0..<8 where variants & 1 << bit != 0 { byVariant[bit] -= 1 }
    }

    /// Whether no reader wants the page any more (each reader is counted at one rank).
    var isEmpty: Bool { byRank == SIMD64() }

    /// The lowest rank some reader wants the page at; Int.max when none does.
    var nearest: Int {
        for rank in 0..<byRank.scalarCount where byRank[rank] > 0 { return rank }
        return Int.max
    }

    /// The variants some reader asks for, a bit each.
    var variants: UInt8 {
        var bits: UInt8 = 0
        for bit in 0..<8 where byVariant[bit] > 0 { bits |= 1 << bit }
        return bits
    }
}
