import Glibc
import Testing

@testable import Workers

@Suite("The cores the process can use")
struct UsableCoresTests {
    @Test("The affinity list counts single cores and ranges, and refuses what it cannot read")
    func affinityList() {
        #expect(UsableCores.allowedCores(status: "Name:\twarmfeed\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(UsableCores.allowedCores(status: "Cpus_allowed_list:\t0-3,8,10-11\n") == 7)
        #expect(UsableCores.allowedCores(status: "Cpus_allowed_list:\t5\n") == 1)
        #expect(UsableCores.allowedCores(status: "Cpus_allowed_list:\t3-1\n") == nil)
        #expect(UsableCores.allowedCores(status: "Cpus_allowed_list:\tzero\n") == nil)
        #expect(UsableCores.allowedCores(status: "Cpus_allowed_list:\t\n") == nil)
        #expect(UsableCores.allowedCores(status: "Name:\twarmfeed\n") == nil)
    }

    @Test("The smallest of online, allowed and the quota rounded up, and never less than one")
    func smallest() {
        #expect(UsableCores.usable(online: 64, allowed: nil, quota: nil) == 64)
        #expect(UsableCores.usable(online: 64, allowed: 2, quota: nil) == 2)
        #expect(UsableCores.usable(online: 64, allowed: 8, quota: 1.5) == 2)
        #expect(UsableCores.usable(online: 2, allowed: 2, quota: 16) == 2)
        #expect(UsableCores.usable(online: 4, allowed: 0, quota: 0.1) == 1)
        #expect(UsableCores.usable(online: 4, allowed: nil, quota: .infinity) == 4)
        #expect(UsableCores.usable(online: 0, allowed: nil, quota: nil) == 1)
    }

    static let v2Mounts = """
        24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
        29 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
        """

    @Test("cgroup v2: the tightest cpu.max from the process's cgroup up to the hierarchy's root")
    func cgroupV2() {
        let files = [
            "/sys/fs/cgroup/system.slice/warmfeed.service/cpu.max": "150000 100000\n",
            "/sys/fs/cgroup/system.slice/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/cpu.max": "400000 100000\n",
        ]
        let quota = UsableCores.quotaCores(
            cgroups: "0::/system.slice/warmfeed.service\n", mountinfo: Self.v2Mounts, read: { files[$0] })
        #expect(quota == 1.5)
        // A parent's tighter quota wins over the service's own.
        let tighter = files.merging(["/sys/fs/cgroup/system.slice/cpu.max": "50000 100000\n"]) { $1 }
        #expect(UsableCores.quotaCores(cgroups: "0::/system.slice/warmfeed.service\n", mountinfo: Self.v2Mounts, read: { tighter[$0] }) == 0.5)
        // No quota anywhere: none.
        #expect(UsableCores.quotaCores(cgroups: "0::/user.slice\n", mountinfo: Self.v2Mounts, read: { _ in "max 100000\n" }) == nil)
    }

    @Test("A container's cgroup namespace: the process sits at the mount's root, whose cpu.max is the container's")
    func container() {
        let quota = UsableCores.quotaCores(cgroups: "0::/\n", mountinfo: Self.v2Mounts, read: { $0 == "/sys/fs/cgroup/cpu.max" ? "200000 100000" : nil })
        #expect(quota == 2)
    }

    @Test("cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us, with -1 for none, below a mount of part of the hierarchy")
    func cgroupV1() {
        let mounts = """
            35 25 0:30 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:12 - cgroup cgroup rw,cpu,cpuacct
            36 25 0:31 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory
            """
        let cgroups = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc/inner\n0::/\n"
        let files = [
            "/sys/fs/cgroup/cpu,cpuacct/inner/cpu.cfs_quota_us": "-1\n",
            "/sys/fs/cgroup/cpu,cpuacct/inner/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "250000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            // The memory hierarchy is not the CPU's: its files are never read for a quota.
            "/sys/fs/cgroup/memory/cpu.cfs_quota_us": "10000\n",
            "/sys/fs/cgroup/memory/cpu.cfs_period_us": "100000\n",
        ]
        #expect(UsableCores.quotaCores(cgroups: cgroups, mountinfo: mounts, read: { files[$0] }) == 2.5)
        // A cgroup outside the mount's part of the hierarchy is not guessed at.
        #expect(UsableCores.quotaCores(cgroups: "4:cpu,cpuacct:/elsewhere\n", mountinfo: mounts, read: { files[$0] }) == nil)
    }

    @Test("Files that say nothing readable give no quota, and never a crash")
    func unreadable() {
        for text in ["", "max", "0 100000", "-5 100000", "100000 0", "nan nan", "1e400 1", "\u{0}\u{0}"] {
            #expect(UsableCores.quotaCores(cgroups: "0::/\n", mountinfo: Self.v2Mounts, read: { _ in text }) == nil, "\(text)")
        }
        #expect(UsableCores.quotaCores(cgroups: "garbage", mountinfo: "garbage - too short", read: { _ in "100000 100000" }) == nil)
    }

    @Test("On this machine: at least one, at most the cores online, and no more than the affinity allows")
    func here() throws {
        let online = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect(UsableCores.count >= 1)
        #expect(UsableCores.count <= online)
        let status = try #require(UsableCores.readFile("/proc/self/status"))
        let allowed = try #require(UsableCores.allowedCores(status: status))
        #expect(UsableCores.count <= allowed)
    }
}
