import Thumbnailer
import WarmfeedCore

extension CacheStats.Decode {
    /// The operator's view of the thumbnailer's decode budget.
    init(_ budget: DecodeStats) {
        self.init()
        (budgetBytes, inUseBytes, peakBytes) = (budget.budgetBytes, budget.inUseBytes, budget.peakBytes)
        (running, waiting, admitted, waited) = (budget.decoding, budget.waiting, budget.admitted, budget.waited)
        (refused, timedOut) = (budget.refused, budget.timedOut)
    }
}
