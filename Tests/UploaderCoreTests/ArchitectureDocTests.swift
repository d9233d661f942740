import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// `docs/architecture.md` tabulates a file's stages and their changes; these tests hold the two
/// tables to `FileStage`, `RetryStage` and their `successors`, and its section on events and effects
/// to the cases of `ProfileEvent` and `ProfileEffect`, so the page cannot drift from the code.
@Suite struct ArchitectureDocTests {
    static let heading = "## One stage per file"
    static let fileStages = Set(FileStage.Kind.allCases.map(\.rawValue))
    static let retryStages = Set(RetryStage.Kind.allCases.map(\.rawValue))

    /// The rows of the tables in the page's section on stages, each as its cells (header and rule left out).
    static func tables() throws -> [[[String]]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "docs/architecture.md has no section \(heading)")
        let section = lines[(start + 1)...].prefix { !$0.hasPrefix("## ") }
        var tables: [[[String]]] = []
        var current: [[String]] = []
        for line in section {
            guard line.hasPrefix("|") else {
                if !current.isEmpty { tables.append(current); current = [] }
                continue
            }
            current.append(line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) })
        }
        if !current.isEmpty { tables.append(current) }
        return tables.map { Array($0.dropFirst(2)) }
    }

    /// A stage named in a cell: the code name in backticks, or nil for "none".
    static func stage(_ cell: String) -> String?? {
        if cell == "none" { return .some(nil) }
        guard cell.hasPrefix("`"), cell.hasSuffix("`"), cell.count > 2 else { return nil }
        return .some(String(cell.dropFirst().dropLast()))
    }

    @Test func theSectionHasATableOfStagesAndOneOfTheirChanges() throws {
        #expect(try Self.tables().count == 2)
    }

    @Test func theStageTableNamesEveryStageOfTheCodeAndNoOther() throws {
        let table = try #require(try Self.tables().first, "no table of stages")
        let named = table.map { Self.stage($0[0]) }
        #expect(!named.contains { $0 == nil }, "a row names no stage: \(table.map { $0[0] })")
        #expect(!named.contains { $0 == .some(nil) }, "a row for none")
        let names = named.compactMap { $0 ?? nil }
        #expect(names.count == Set(names).count, "a stage twice: \(names)")
        #expect(Set(names) == Self.fileStages.union(Self.retryStages))
    }

    @Test func theTableOfChangesIsTheCodesSuccessorsExactly() throws {
        let tables = try Self.tables()
        try #require(tables.count == 2, "no table of changes")
        struct Change: Hashable, CustomStringConvertible {
            var from: String?
            var to: String?
            var description: String { "\(from ?? "none") → \(to ?? "none")" }
        }
        var documented = Set<Change>()
        for row in tables[1] {
            guard row.count == 3, let from = Self.stage(row[0]), let to = Self.stage(row[1]) else {
                Issue.record("a row that is not `from` | `to` | on: \(row)")
                continue
            }
            #expect(documented.insert(Change(from: from, to: to)).inserted, "listed twice: \(row)")
        }
        var coded = Set<Change>()
        for from in [nil] + FileStage.Kind.allCases.map(Optional.some) {
            for to in FileStage.successors(of: from) { coded.insert(Change(from: from?.rawValue, to: to?.rawValue)) }
        }
        for from in [nil] + RetryStage.Kind.allCases.map(Optional.some) {
            for to in RetryStage.successors(of: from) { coded.insert(Change(from: from?.rawValue, to: to?.rawValue)) }
        }
        #expect(documented.subtracting(coded).isEmpty, "documented, not in the code: \(documented.subtracting(coded).sorted { $0.description < $1.description })")
        #expect(coded.subtracting(documented).isEmpty, "in the code, not documented: \(coded.subtracting(documented).sorted { $0.description < $1.description })")
    }

    /// The cases of `enum` as its source declares them (`case name` lines at its top level).
    static func cases(of name: String, in file: String) throws -> [String] {
        let source = try String(contentsOf: root.appendingPathComponent("Sources/UploaderDecisions/\(file)"), encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.hasPrefix("package enum \(name):") }, "no enum \(name) in \(file)")
        return lines[(start + 1)...].prefix { $0 != "}" }.compactMap { line in
            guard line.hasPrefix("    case ") else { return nil }
            return String(line.dropFirst(9).prefix { $0.isLetter || $0.isNumber })
        }
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test func theSectionOnEventsAndEffectsNamesEveryCaseOfTheCode() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "## Events and effects"))
        let section = lines[(start + 1)...].prefix { !$0.hasPrefix("## ") }.joined(separator: "\n")
        let events = try Self.cases(of: "ProfileEvent", in: "ProfileEvent.swift")
        let effects = try Self.cases(of: "ProfileEffect", in: "ProfileEffect.swift")
        #expect(events.count > 10 && effects.count > 10, "the enums were not read: \(events), \(effects)")
        for name in events + effects {
            #expect(section.contains("`\(name)`") || section.contains("`\(name)("), "docs/architecture.md's events and effects omit \(name)")
        }
    }
}
