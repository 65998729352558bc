import Foundation
import Testing

@testable import SystemMemory

/// The allocator's settings and counts, and the kernel's counts of the
/// process, read from the running test process itself.
@Suite struct SystemMemoryTests {
    @Test func arenasAreOneAServerThreadAtLeastTwoAndAtMostTwoACore() {
        #expect(Allocator.arenas(serverThreads: 10, cores: 2) == 4)
        #expect(Allocator.arenas(serverThreads: 10, cores: 16) == 10)
        #expect(Allocator.arenas(serverThreads: 1, cores: 8) == 2)
        #expect(Allocator.arenas(serverThreads: 40, cores: 0) == 2)
    }

    @Test func theAllocatorCountsWhatTheProgramHolds() {
        let before = Allocator.usage
        // A block over the mapping threshold, held while the allocator is read.
        let held = UnsafeMutableRawPointer.allocate(byteCount: 8 << 20, alignment: 16)
        held.initializeMemory(as: UInt8.self, repeating: 1, count: 8 << 20)
        let during = Allocator.usage
        held.deallocate()
        #expect(during.inUseBytes >= before.inUseBytes + (8 << 20) - (1 << 20))
        #expect(during.heapBytes > 0 || during.mappedBytes > 0)
        // Trimming gives back only free memory: what is in use stays.
        Allocator.trim()
        #expect(Allocator.usage.inUseBytes > 0)
    }

    @Test func theKernelCountsThisProcess() throws {
        let memory = ProcessMemory.now()
        let resident = try #require(memory.residentBytes)
        #expect(resident > 1 << 20)
        #expect((memory.anonymousBytes ?? 0) + (memory.fileBytes ?? 0) <= resident + 4096 * 16)
        #expect((memory.threads ?? 0) >= 1)
    }
}
