#if canImport(Glibc)
import Glibc
#endif

/// glibc's allocator gives threads that allocate at the same time arenas of
/// their own, up to eight per core, and each arena keeps the memory freed into
/// it. With libmicrohttpd's, libvips', libcurl's and Swift's threads all
/// allocating, that held 180 MB more than two arenas did through the same
/// 60 s of mixed load (bench/mixed.sh, 501 MB against 323 MB resident).
///
/// `mallopt` is declared in `<malloc.h>`, which Swift's Glibc module leaves
/// out, so it is looked up by name rather than given a shim target of its own.
enum MallocArenas {
    /// glibc's `M_ARENA_MAX` parameter (`<malloc.h>`).
    private static let arenaMax: Int32 = -8

    /// Caps the arenas at `count`, unless the operator set `MALLOC_ARENA_MAX`.
    static func limit(to count: Int32 = 2) {
        #if canImport(Glibc)
        guard getenv("MALLOC_ARENA_MAX") == nil, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, count)
        #endif
    }
}
