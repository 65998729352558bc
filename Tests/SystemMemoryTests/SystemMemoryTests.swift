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

    /// The allocator is the process's: other tests allocate and free beside
    /// this one, so it checks what no other thread can take away, a block it holds.
    @Test func theAllocatorCountsWhatTheProgramHolds() {
        // Past glibc's largest mapping threshold (32 MiB), so it is a mapping of its own whatever the threshold is now.
        let size = 64 << 20
        let held = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        held.initializeMemory(as: UInt8.self, repeating: 1, count: size)
        let during = Allocator.usage
        held.deallocate()
        #expect(during.mappedBytes >= size)
        #expect(during.inUseBytes >= size)
        // Trimming gives back only free memory: what is in use stays counted.
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
