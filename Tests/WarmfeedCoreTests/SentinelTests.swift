import Testing
@testable import WarmfeedCore

@Suite struct SentinelTests {
    @Test(arguments: [
        (1, 1), (2, 2), (3, 3), (10, 7), (30, 21), (31, 22), (7, 5), (4, 3), (0, 0),
    ])
    func sitsAfterSeventyPercentOfItsOwnPage(rows: Int, expected: Int) {
        #expect(Sentinel.rowsBefore(rowCount: rows, threshold: 0.7) == expected)
    }

    @Test func followsTheConfiguredThreshold() {
        #expect(Sentinel.rowsBefore(rowCount: 10, threshold: 0.5) == 5)
        #expect(Sentinel.rowsBefore(rowCount: 10, threshold: 1) == 10)
        #expect(Sentinel.rowsBefore(rowCount: 10, threshold: 0.01) == 1)
        #expect(Sentinel.rowsBefore(rowCount: 30, threshold: 0.9) == 27)
    }

    @Test func aShortLastPageUsesItsOwnRowCount() {
        // A last page of 4 rows (page size 30) still gets its sentinel after ⌈2.8⌉ = 3 rows.
        #expect(Sentinel.rowsBefore(rowCount: 4, threshold: 0.7) == 3)
    }
}
