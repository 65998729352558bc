import Foundation
import Testing

/// The rules that keep the feature modules a house and not a heap
/// (ARCHITECTURE.md): a feature imports a sibling feature only where the
/// design allows (pre-warm uses pages and thumbnails), the operator's views
/// import no feature, and only the root imports them all. Read from the
/// sources' own `import` lines, so a new import that breaks a rule fails here;
/// and `Package.swift` declares no dependency its target does not import.
@Suite struct ModuleRulesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sources = root.appendingPathComponent("Sources")

    static let features: Set<String> = ["Thumbnails", "FeedPages", "Prewarm", "FeedIngest", "Operations", "DemoOrigin", "SQLiteStore", "PostgresStore"]

    /// The sibling features each feature may import.
    static let allowed: [String: Set<String>] = ["Prewarm": ["FeedPages", "Thumbnails"]]

    /// The modules `module`'s sources import (or those of `folder`, under the package's root).
    static func imports(of module: String, in folder: String? = nil) throws -> Set<String> {
        let folder = folder.map { root.appendingPathComponent($0) } ?? sources.appendingPathComponent(module)
        var found: Set<String> = []
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                // `import X`, `@preconcurrency import X`, `package import X`, `import struct X.Y`.
                let words = line.split(separator: " ").drop { $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) }
                guard words.first == "import", let name = words.dropFirst().last else { continue }
                found.insert(String(name.split(separator: ".").first ?? name))
            }
        }
        return found
    }

    /// A target of `Package.swift`: its name, its folder and the modules of what it depends on.
    struct Target {
        var name: String
        var folder: String
        var dependencies: [String]
    }

    /// The modules a product of a package dependency brings, where they are not the product's name.
    static let productModules: [String: Set<String>] = ["Metrics": ["Metrics", "CoreMetrics"]]

    /// The Swift targets `Package.swift` declares (not the C shims), read from its text.
    static func targets() throws -> [Target] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let uncommented = manifest.split(separator: "\n").map { $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .joined(separator: "\n")
        var targets: [Target] = []
        for kind in [".target(", ".testTarget(", ".executableTarget("] {
            for declaration in uncommented.components(separatedBy: kind).dropFirst() {
                // A declaration runs to its first closing parenthesis after the dependency list (or after its name).
                guard let name = Self.quoted(after: "name:", in: declaration) else { continue }
                var dependencies: [String] = []
                if let start = declaration.range(of: "dependencies: ["), let end = declaration[start.upperBound...].range(of: "]") {
                    let list = declaration[start.upperBound..<end.lowerBound]
                    // `.product(name: "P", package: "Q")` splits in two: the package's half names no module.
                    let entries = list.components(separatedBy: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                    for entry in entries where entry.contains("\"") && !entry.hasPrefix("package:") {
                        if let product = Self.quoted(after: ".product(name:", in: entry) {
                            dependencies.append(product)
                        } else if let module = Self.quoted(after: "", in: entry) {
                            dependencies.append(module)
                        }
                    }
                }
                let folder =
                    Self.quoted(after: "path:", in: declaration.components(separatedBy: ")").first ?? "")
                    ?? (kind == ".testTarget(" ? "Tests/" : "Sources/") + name
                targets.append(Target(name: name, folder: folder, dependencies: dependencies))
            }
        }
        return targets
    }

    /// The first quoted word after `marker` in `text`.
    private static func quoted(after marker: String, in text: some StringProtocol) -> String? {
        let text = String(text)
        guard let at = marker.isEmpty ? text.startIndex..<text.startIndex : text.range(of: marker),
            let open = text[at.upperBound...].firstIndex(of: "\""),
            let close = text[text.index(after: open)...].firstIndex(of: "\"")
        else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    @Test func everyDependencyPackageSwiftDeclaresIsImportedByItsTarget() throws {
        let targets = try Self.targets()
        // The manifest read is the one the build uses: every module the rules name is in it.
        #expect(Set(targets.map(\.name)).isSuperset(of: Self.features.union(["WarmfeedCore", "Warmfeed", "WarmfeedCLI", "WarmfeedTests"])))
        #expect(targets.first { $0.name == "FeedPages" }?.dependencies.contains("WarmfeedCore") == true)
        for target in targets {
            let imported = try Self.imports(of: target.name, in: target.folder)
            let unused = target.dependencies.filter { imported.isDisjoint(with: Self.productModules[$0] ?? [$0]) }
            #expect(unused.isEmpty, "\(target.name) declares \(unused) and imports none of it")
        }
    }

    /// Each C library sits behind one shim and one small module: no other
    /// module of the server imports a shim (a feature that tuned glibc's
    /// allocator through `CMalloc` was one).
    @Test func eachCShimIsImportedByOneModuleOnly() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).sorted()
        let shims = Set(folders.filter { FileManager.default.fileExists(atPath: Self.sources.appendingPathComponent("\($0)/module.modulemap").path) })
        var importers: [String: [String]] = [:]
        for module in folders where !shims.contains(module) {
            for shim in try Self.imports(of: module).intersection(shims) { importers[shim, default: []].append(module) }
        }
        #expect(shims.count >= 8, "the shims were found")
        for (shim, modules) in importers.sorted(by: { $0.key < $1.key }) {
            #expect(modules.count == 1, "\(shim) is imported by \(modules)")
        }
        #expect(importers["CMalloc"] == ["SystemMemory"])
    }

    @Test func featuresImportNoSiblingBeyondWhatTheDesignAllows() throws {
        for feature in Self.features {
            let siblings = try Self.imports(of: feature).intersection(Self.features.subtracting([feature]))
            let extra = siblings.subtracting(Self.allowed[feature] ?? [])
            #expect(extra.isEmpty, "\(feature) imports \(extra.sorted())")
        }
    }

    /// The concrete types a feature may not name in a sibling it uses: it goes
    /// through the protocols that sibling owns (its front door).
    static let frontDoors: [String: [String: [String]]] = [
        "Prewarm": [
            "Thumbnails": ["ThumbnailService", "SharedTier", "ThumbnailCacheState", "ThumbnailRoutes"],
            "FeedPages": ["PageService", "PageCache", "PageRenderer", "FeedRoutes"],
        ]
    ]

    @Test func aFeatureReachesASiblingOnlyThroughTheProtocolsTheSiblingOwns() throws {
        for (feature, siblings) in Self.frontDoors {
            let folder = Self.sources.appendingPathComponent(feature)
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                // Code only: what comments say of a sibling is no reach into it.
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                for (sibling, types) in siblings {
                    for type in types {
                        let named = code.contains { line in
                            line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).contains { $0 == type }
                        }
                        #expect(!named, "\(feature)/\(file) names \(sibling)'s \(type)")
                    }
                }
            }
        }
    }

    @Test func theCoreAndTheOperatorsViewsImportNoFeatureAndTheRootImportsThemAll() throws {
        #expect(try Self.imports(of: "WarmfeedCore").isDisjoint(with: Self.features))
        #expect(try Self.imports(of: "Operations").isDisjoint(with: Self.features.subtracting(["Operations"])))
        let root = try Self.imports(of: "Warmfeed")
        #expect(Self.features.isSubset(of: root), "the root misses \(Self.features.subtracting(root).sorted())")
    }
}
