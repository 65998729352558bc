import FeedImport
import Foundation
import WarmfeedCore

/// The refresher's record of each import (the status itself is the stats seam's, in `WarmfeedCore`).
extension RefreshStatus {
    /// An import ended with `report`.
    mutating func record(_ report: ImportReport) {
        imports += 1
        lastImportAt = Self.now()
        lastError = nil
        if report.notModified {
            notModified += 1
        } else {
            lastInserted = report.written.inserted
            lastUpdated = report.written.updated
            lastProblems = report.skippedCount
        }
    }

    /// An import failed with `error`; the store kept what it had.
    mutating func record(_ error: ImportError) {
        failures += 1
        lastImportAt = Self.now()
        lastError = error.description
    }

    /// Now in ISO 8601, UTC, to the second: `2026-11-01T12:00:00Z`.
    private static func now() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
