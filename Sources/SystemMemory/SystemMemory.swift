import CMalloc
import Foundation

// SystemMemory: the process's memory as glibc's allocator and the kernel see
// it, behind the one C shim it needs (CMalloc). It knows nothing of feeds:
// the server tunes the allocator at start (`Allocator.configure`), and the
// operator's views read `Allocator.usage` and `ProcessMemory.now()`.

/// glibc's allocator, as the server sets it up and as the operator's views show it.
///
/// Arenas: glibc gives threads that allocate at the same time arenas of their
/// own, up to eight per core, and each arena keeps the memory freed into it.
/// With the HTTP workers', libvips', libcurl's and Swift's threads all
/// allocating, that held 180 MB more than two arenas did through the same 60 s
/// of mixed load (bench/mixed.sh, 501 MB against 323 MB resident). But
/// threads that share an arena take its lock in turn: with two arenas for 8
/// server threads, the arenas' locks were 85% of the futex calls of random
/// deep pages (perf, `DEEP=1 bench/contention.sh`; 2.0 calls a request,
/// 0.30 with eight arenas). So the server asks for as many arenas as it has
/// server threads: the HTTP workers (`--threads`) and the handler threads (8),
/// which render and read cold pages. Counting only the first, two arenas
/// served ten threads by default: a deep page cost 127.6–132.3 µs of CPU
/// against 106.7–111.5 µs with ten (`THREADS=2 DEEP=1 bench/contention.sh`,
/// two runs each, 2026-11-25).
///
/// But more arenas hold more memory freed between the caches' long-lived
/// blocks: through the 10-minute soak (`DURATION=600s bench/mixed.sh`, 2
/// cores, 10 server threads) the heaps grew from 70 to 127 MB while the
/// memory in use stayed at ~100 MB, and RSS reached 203 MB; with four arenas
/// the heaps stayed at 105 MB and RSS at 190. Deep pages since the page index
/// allocate less: at `--threads 8` on two cores four arenas cost 0.37 futex
/// calls a request against ten arenas' 0.27, at the same CPU (48.2 against
/// 52.6 µs, `DEEP=1 bench/contention.sh`, 2026-11-28). So the count is capped
/// at two a core (`arenas(serverThreads:cores:)`).
public enum Allocator {
    /// Arenas for `serverThreads` threads that allocate on every request, on
    /// `cores` cores: one each, at least two, at most two a core.
    public static func arenas(serverThreads: Int, cores: Int) -> Int32 {
        Int32(clamping: max(2, min(serverThreads, 2 * max(1, cores))))
    }

    ///
    /// Large blocks: glibc serves a block over `M_MMAP_THRESHOLD` as a mapping
    /// of its own, returned to the system when freed, but it raises that
    /// threshold to the size of each such block freed (up to 32 MB), so after
    /// the first original (1-3 MB) every later one came from the arenas' heaps,
    /// where freed originals stayed: `mallinfo2` showed 0 bytes mapped and the
    /// heaps ever larger through bench/mixed.sh. A fixed threshold of 64 KiB
    /// keeps the originals (bench/mixed.sh's are 118 KB), the decoded pictures
    /// and the bodies of large responses out of the heaps; thumbnails and
    /// pages (5-30 KB) stay in them.
    ///
    /// Each setting is left alone when the operator set its glibc variable.
    public static func configure(arenas: Int32 = 2, mmapThreshold: Int32 = 64 << 10) {
        if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(WF_M_ARENA_MAX, arenas) }
        if getenv("MALLOC_MMAP_THRESHOLD_") == nil { _ = mallopt(WF_M_MMAP_THRESHOLD, mmapThreshold) }
    }

    /// Gives back to the system the free memory the arenas hold (whole free
    /// pages inside the heaps as well as at their tops). It walks the arenas
    /// under their locks, so it runs now and then from a service's thread,
    /// never on a request.
    public static func trim() {
        _ = malloc_trim(0)
    }

    /// What the allocator holds, in bytes.
    public struct Usage: Sendable, Equatable, Codable {
        public init() {}

        /// Taken from the system for the arenas' heaps (brk and the heaps of the other arenas).
        public var heapBytes = 0
        /// Taken as mappings of their own (the largest blocks).
        public var mappedBytes = 0
        /// In use by the program.
        public var inUseBytes = 0
        /// Free, but kept by the arenas for later allocations.
        public var freeBytes = 0
    }

    /// The allocator's counts now (`mallinfo2`; it walks every arena's free lists, so it is for the admin view, not a request).
    public static var usage: Usage {
        let info = mallinfo2()
        var usage = Usage()
        usage.heapBytes = Int(info.arena)
        usage.mappedBytes = Int(info.hblkhd)
        usage.inUseBytes = Int(info.uordblks) + Int(info.hblkhd)
        usage.freeBytes = Int(info.fordblks)
        return usage
    }
}

/// The process's memory as the kernel counts it (`/proc/self/status`).
public struct ProcessMemory: Sendable, Equatable {
    /// Resident set size (VmRSS): anonymous memory, plus the pages of files mapped (the binary, its libraries).
    public var residentBytes: Int?
    /// Of which anonymous (RssAnon): the heap, the stacks, every buffer.
    public var anonymousBytes: Int?
    /// Of which file-backed (RssFile): code and data of the binary and its libraries.
    public var fileBytes: Int?
    /// Threads of the process.
    public var threads: Int?

    /// Read now; fields the kernel does not give stay nil.
    public static func now() -> ProcessMemory {
        var memory = ProcessMemory()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return memory }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let words = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let number = words.first.flatMap({ Int($0) }) else { continue }
            let bytes = words.count > 1 && words[1] == "kB" ? number * 1024 : number
            switch parts[0] {
            case "VmRSS": memory.residentBytes = bytes
            case "RssAnon": memory.anonymousBytes = bytes
            case "RssFile": memory.fileBytes = bytes
            case "Threads": memory.threads = number
            default: break
            }
        }
        return memory
    }
}
