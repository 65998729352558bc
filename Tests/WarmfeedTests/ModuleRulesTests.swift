import Foundation
import Testing

/// The rules that keep the feature modules a house and not a heap
/// (ARCHITECTURE.md): a feature imports a sibling feature only where the
/// design allows (pre-warm uses pages and thumbnails), the operator's views
/// import no feature, and only the root imports them all. Read from the
/// sources' own `import` lines, so a new import that breaks a rule fails here.
@Suite struct ModuleRulesTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    static let features: Set<String> = ["Thumbnails", "FeedPages", "Prewarm", "FeedIngest", "Operations", "DemoOrigin", "SQLiteStore", "PostgresStore"]

    /// The sibling features each feature may import.
    static let allowed: [String: Set<String>] = ["Prewarm": ["FeedPages", "Thumbnails"]]

    /// The modules `module`'s sources import.
    static func imports(of module: String) throws -> Set<String> {
        let folder = sources.appendingPathComponent(module)
        var found: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                if let name = line.split(separator: " ").last { found.insert(String(name)) }
            }
        }
        return found
    }

    @Test func featuresImportNoSiblingBeyondWhatTheDesignAllows() throws {
        for feature in Self.features {
            let siblings = try Self.imports(of: feature).intersection(Self.features.subtracting([feature]))
            let extra = siblings.subtracting(Self.allowed[feature] ?? [])
            #expect(extra.isEmpty, "\(feature) imports \(extra.sorted())")
        }
    }

    @Test func theCoreAndTheOperatorsViewsImportNoFeatureAndTheRootImportsThemAll() throws {
        #expect(try Self.imports(of: "WarmfeedCore").isDisjoint(with: Self.features))
        #expect(try Self.imports(of: "Operations").isDisjoint(with: Self.features.subtracting(["Operations"])))
        let root = try Self.imports(of: "Warmfeed")
        #expect(Self.features.isSubset(of: root), "the root misses \(Self.features.subtracting(root).sorted())")
    }
}
