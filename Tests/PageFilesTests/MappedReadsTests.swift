import Foundation
import Synchronization
import Testing

@testable import PageFiles

/// Reads out of a mapping of the page files (`MappedReads`), on the paths
/// that hurt: a file that grows past its mapping, a file cut by someone else
/// under a reader, and readers racing a writer that cuts and rewrites it.
@Suite struct MappedReadsTests {
    /// A file in a folder of its own, removed at the end.
    static func withFile<Result>(_ body: (String) throws -> Result) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapped-reads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder.appendingPathComponent("file").path)
    }

    /// Bytes that say where they are: byte `i` of the file is `pattern(i, seed)`.
    static func pattern(_ offset: Int64, seed: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: offset &* 31 &+ offset >> 8) ^ seed
    }

    static func bytes(at: Int64, count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { pattern(at + Int64($0), seed: seed) }
    }

    static func read(_ file: PositionedFile, at: Int64, count: Int, mapped: Bool = true) -> [UInt8] {
        var buffer = [UInt8](repeating: 0xEE, count: count)
        let done = buffer.withUnsafeMutableBytes { mapped ? file.read(at: at, into: $0) : file.readWithoutMapping(at: at, into: $0) }
        return Array(buffer[0..<done])
    }

    @Test func readsAgreeWithPreadEverywhereAndAtTheEnd() throws {
        try Self.withFile { path in
            let file = try PositionedFile(path: path)
            let size: Int64 = 3 << 20
            try file.write(Self.bytes(at: 0, count: Int(size), seed: 7), at: 0)
            var random = SystemRandomNumberGenerator()
            for _ in 0..<500 {
                let at = Int64.random(in: 0..<size, using: &random)
                let count = Int.random(in: 1...20_000, using: &random)
                let mapped = Self.read(file, at: at, count: count)
                #expect(mapped == Self.read(file, at: at, count: count, mapped: false))
                #expect(mapped == Self.bytes(at: at, count: min(count, Int(size - at)), seed: 7))
            }
            // Past the end: as short as pread's, and nothing at all beyond it.
            #expect(Self.read(file, at: size - 10, count: 100).count == 10)
            #expect(Self.read(file, at: size + 4096, count: 100).isEmpty)
        }
    }

    @Test func aFileThatGrowsPastItsMappingIsMappedAgain() throws {
        try Self.withFile { path in
            let file = try PositionedFile(path: path)
            try file.write(Self.bytes(at: 0, count: 4096, seed: 1), at: 0)
            #expect(Self.read(file, at: 0, count: 4096) == Self.bytes(at: 0, count: 4096, seed: 1))
            // Far past the first mapping's length (the gap is a hole, read as zeros).
            let far = Int64(MappedReads.leastLength) * 3 + 123
            try file.write(Self.bytes(at: far, count: 10_000, seed: 2), at: far)
            #expect(Self.read(file, at: far, count: 10_000) == Self.bytes(at: far, count: 10_000, seed: 2))
            #expect(Self.read(file, at: 0, count: 4096) == Self.bytes(at: 0, count: 4096, seed: 1))
            #expect(Self.read(file, at: far - 10, count: 10) == [UInt8](repeating: 0, count: 10))
        }
    }

    /// Another process (here: another descriptor) cuts the file under a
    /// mapping that reached past the new end: the read that touches the cut
    /// page gets SIGBUS, which the guard turns into a short read, as pread's.
    @Test func aFileCutBySomeoneElseReadsShortAndDoesNotKill() throws {
        try Self.withFile { path in
            let file = try PositionedFile(path: path)
            let size = 1 << 20
            try file.write(Self.bytes(at: 0, count: size, seed: 3), at: 0)
            #expect(Self.read(file, at: 900_000, count: 4000) == Self.bytes(at: 900_000, count: 4000, seed: 3))
            let faultsBefore = MappedReads.faults
            #expect(truncate(path, 8192) == 0)
            // The reader's last look said 1 MiB: it copies from the mapping, hits the cut, and reads again with pread.
            #expect(Self.read(file, at: 900_000, count: 4000).isEmpty)
            #expect(MappedReads.faults > faultsBefore)
            #expect(Self.read(file, at: 0, count: 8192) == Self.bytes(at: 0, count: 8192, seed: 3))
            // Written again by someone else, with other bytes: read as they are now.
            let other = try PositionedFile(path: path)
            try other.write(Self.bytes(at: 0, count: size, seed: 4), at: 0)
            #expect(Self.read(file, at: 900_000, count: 4000) == Self.bytes(at: 900_000, count: 4000, seed: 4))
            #expect(Self.read(file, at: 0, count: 100) == Self.bytes(at: 0, count: 100, seed: 4))
        }
    }

    /// Readers on eight threads while a writer cuts the file and writes it
    /// again with another seed, over and over: no reader dies, and every read
    /// holds the bytes of one seed or another, or zeros where the cut was
    /// (never bytes from elsewhere in the file). Once the writer stops, every
    /// read agrees with the file.
    @Test func readersRacingCutsAndRewritesNeverDieAndSettle() throws {
        try Self.withFile { path in
            let file = try PositionedFile(path: path)
            let writer = try PositionedFile(path: path)
            let size = 256 << 10
            try writer.write(Self.bytes(at: 0, count: size, seed: 0), at: 0)
            let stop = Atomic<Bool>(false)
            let misplaced = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
            let threads = (0..<8).map { _ in
                Thread {
                    var random = SystemRandomNumberGenerator()
                    while !stop.load(ordering: .relaxed) {
                        let at = Int64.random(in: 0..<Int64(size - 64), using: &random)
                        let got = Self.read(file, at: at, count: 64)
                        for (index, byte) in got.enumerated() {
                            let offset = at + Int64(index)
                            let seed = byte ^ Self.pattern(offset, seed: 0)
                            // Seeds written are 0...40; zeros are a cut page's.
                            if seed > 40, byte != 0 { misplaced.add(1, ordering: .relaxed) }
                        }
                        reads.add(1, ordering: .relaxed)
                    }
                }
            }
            threads.forEach { $0.start() }
            for round in 1...40 {
                try writer.truncate()
                try writer.write(Self.bytes(at: 0, count: size, seed: UInt8(round)), at: 0)
            }
            stop.store(true, ordering: .relaxed)
            while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
            #expect(reads.load(ordering: .relaxed) > 0)
            #expect(misplaced.load(ordering: .relaxed) == 0)
            for at in stride(from: Int64(0), to: Int64(size), by: 4093) {
                #expect(Self.read(file, at: at, count: 64) == Self.bytes(at: at, count: min(64, size - Int(at)), seed: 40))
            }
        }
    }

    /// A SIGBUS outside every guarded mapping still ends the process, as it
    /// would have without the guard: the guard hands it on.
    @Test func aFaultOutsideTheGuardedMappingsStillKills() async throws {
        await #expect(processExitsWith: .signal(SIGBUS)) {
            try? MappedReadsTests.faultOutsideTheGuard()
        }
    }

    static func faultOutsideTheGuard() throws {
        try withFile { path in
            // The guard is in place once a page file has been read through a mapping.
            let file = try PositionedFile(path: path)
            try file.write([1, 2, 3], at: 0)
            _ = read(file, at: 0, count: 3)
            let descriptor = open(path, O_RDONLY)
            guard let base = mmap(nil, 1 << 20, PROT_READ, MAP_SHARED, descriptor, 0), base != MAP_FAILED else { exit(3) }
            // Past the file's end and not registered with the guard.
            let byte = base.load(fromByteOffset: 512 << 10, as: UInt8.self)
            exit(byte == 0 ? 4 : 5)
        }
    }
}
