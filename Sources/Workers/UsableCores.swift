import Foundation

/// How many cores the process can keep busy at once, which its threads are
/// sized by (one HTTP worker a core, the thumbnailer's libvips threads).
///
/// The cores online, but no more than its CPU affinity allows (`taskset`, a
/// container's cpuset, Kubernetes' static CPU manager) and no more than its
/// cgroup's CPU quota gives time for, rounded up (`docker run --cpus`,
/// Kubernetes' CPU limits); at least one. `sysconf(_SC_NPROCESSORS_ONLN)`
/// and Foundation's `activeProcessorCount` count every core online; nginx's
/// `worker_processes auto` counts the affinity at most, which is why its
/// official image tunes it from the cpuset and quota in a start script; Go's
/// runtime reads the affinity and, since 1.25, the quota, as this does.
///
/// More event loops than cores buy nothing and cost switches: on two cores
/// shared with wrk, eight HTTP workers made 0.24–0.42 voluntary switches a
/// request in every round, each an idle worker going back to `epoll_wait`;
/// two made 0.007–0.21, half the rounds under 0.02, at about the same CPU a
/// request (BENCHMARKS.md, "Threads and cores").
public enum UsableCores {
    /// Reckoned once, when first read.
    public static let count: Int = {
        let online = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let allowed = readFile("/proc/self/status").flatMap(allowedCores(status:))
        let quota = quotaCores(
            cgroups: readFile("/proc/self/cgroup") ?? "", mountinfo: readFile("/proc/self/mountinfo") ?? "", read: readFile)
        return usable(online: online, allowed: allowed, quota: quota)
    }()

    /// The smallest of what is online, allowed, and the quota rounded up; at least one.
    static func usable(online: Int, allowed: Int?, quota: Double?) -> Int {
        var cores = max(1, online)
        if let allowed, allowed > 0 { cores = min(cores, allowed) }
        if let quota, quota > 0, quota.isFinite { cores = min(cores, Int(quota.rounded(.up))) }
        return max(1, cores)
    }

    /// The cores in `/proc/self/status`'s `Cpus_allowed_list` ("0-3,8,10-11"): the affinity
    /// of the process's first thread, which is what `taskset` and a cpuset set.
    static func allowedCores(status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            var count = 0
            for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
                let bounds = range.split(separator: "-").map { Int($0.filter { !$0.isWhitespace }) }
                switch bounds.count {
                case 1:
                    guard bounds[0] != nil else { return nil }
                    count += 1
                case 2:
                    guard let low = bounds[0], let high = bounds[1], high >= low else { return nil }
                    count += high - low + 1
                default: return nil
                }
            }
            return count > 0 ? count : nil
        }
        return nil
    }

    /// The tightest CPU quota, in cores, on the process's cgroup and the cgroups above it
    /// (up to the hierarchy's mount): cgroup v2's `cpu.max` ("150000 100000" is 1.5 cores,
    /// "max 100000" none) or v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us` (−1 is none).
    /// Nil when no cgroup sets one. `cgroups` is `/proc/self/cgroup`, `mountinfo`
    /// `/proc/self/mountinfo`; `read` reads a file of the hierarchy.
    static func quotaCores(cgroups: String, mountinfo: String, read: (String) -> String?) -> Double? {
        var tightest: Double?
        for mount in cpuMounts(mountinfo) {
            // "0::/a/b" (v2), "4:cpu,cpuacct:/a/b" (v1): the process's place in that hierarchy.
            var place: [Substring]?
            for line in cgroups.split(separator: "\n") {
                let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count == 3 else { continue }
                let matches = mount.isV2 ? fields[0] == "0" && fields[1].isEmpty : fields[1].split(separator: ",").contains("cpu")
                if matches {
                    place = fields
                    break
                }
            }
            guard let place else { continue }
            var path = String(place[2])
            // A mount of part of the hierarchy (a container's) holds the cgroups below its root.
            if mount.root != "/" {
                guard path == mount.root || path.hasPrefix(mount.root + "/") else { continue }
                path = String(path.dropFirst(mount.root.count))
            }
            var components = path.split(separator: "/").map(String.init)
            while true {
                let folder = ([mount.point] + components).joined(separator: "/")
                let cores: Double?
                if mount.isV2 {
                    cores = v2Quota(read(folder + "/cpu.max"))
                } else {
                    cores = v1Quota(read(folder + "/cpu.cfs_quota_us"), read(folder + "/cpu.cfs_period_us"))
                }
                if let cores {
                    tightest = min(tightest ?? cores, cores)
                }
                guard !components.isEmpty else { break }
                components.removeLast()
            }
        }
        return tightest
    }

    private struct Mount {
        var root: String
        var point: String
        var isV2: Bool
    }

    /// The cgroup2 mount and the cgroup v1 mount with the `cpu` controller, from mountinfo's lines:
    /// "36 25 0:31 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu,cpuacct".
    private static func cpuMounts(_ mountinfo: String) -> [Mount] {
        mountinfo.split(separator: "\n").compactMap { line in
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2 else { return nil }
            let before = halves[0].split(separator: " ")
            let after = halves[1].split(separator: " ")
            guard before.count >= 5, after.count >= 3 else { return nil }
            let root = String(before[3])
            let point = String(before[4])
            if after[0] == "cgroup2" { return Mount(root: root, point: point, isV2: true) }
            if after[0] == "cgroup", after[2].split(separator: ",").contains("cpu") { return Mount(root: root, point: point, isV2: false) }
            return nil
        }
    }

    private static func v2Quota(_ text: String?) -> Double? {
        guard let fields = text?.split(whereSeparator: { $0 == " " || $0 == "\n" }), fields.count >= 2,
            let quota = Double(fields[0]), let period = Double(fields[1]), quota > 0, period > 0, (quota / period).isFinite
        else { return nil }
        return quota / period
    }

    private static func v1Quota(_ quota: String?, _ period: String?) -> Double? {
        guard let quota = quota.flatMap({ Double($0.filter { !$0.isWhitespace }) }), let period = period.flatMap({ Double($0.filter { !$0.isWhitespace }) }),
            quota > 0, period > 0, (quota / period).isFinite
        else { return nil }
        return quota / period
    }

    /// A small file's text (procfs and cgroupfs files read whole), nil if it cannot be read.
    static func readFile(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}
