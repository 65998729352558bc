import Foundation

/// A test's sockets and the programs it starts: a daemon a test starts
/// (`redis-server`, PostgreSQL) must hold none of the test process's sockets.
/// One that did would keep a connection open after the test's origin closed
/// it, so the reset a test made never reached the client (libcurl then waited
/// out its whole timeout: `IdleOriginTests`, under a full run's parallel suites).

/// `accept`, with the new socket closed on exec (Swift's Glibc has no `accept4`).
public func acceptClosingOnExec(_ listener: Int32) -> Int32 {
    let socket = accept(listener, nil, nil)
    if socket >= 0 { _ = fcntl(socket, F_SETFD, FD_CLOEXEC) }
    return socket
}

/// Adds to `actions` a close of every descriptor above standard error that
/// this process holds without close-on-exec, so the child inherits none
/// (glibc's `posix_spawn_file_actions_addclosefrom_np` is not in Swift's Glibc;
/// a descriptor closed meanwhile is no failure: glibc ignores `EBADF` there).
public func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
        let flags = fcntl(descriptor, F_GETFD)
        if flags >= 0, flags & FD_CLOEXEC == 0 { posix_spawn_file_actions_addclose(&actions, descriptor) }
    }
}
