import Foundation

/// The code a test file shares with a DocC article, so that the article shows code that compiles.
///
/// A test file marks each piece of an article's code block between `// article: NAME` and
/// `// article: end` (at any indentation: the lines lose that of their begin marker). The
/// pieces of one NAME, joined in file order by a blank line, must be one ```swift block of the
/// article, after the block's leading `import` lines and the blank line after them.
enum ArticleSnippets {
    /// The marked code of `testFile`, by name.
    static func marked(in testFile: String) throws -> [(name: String, code: String)] {
        var pieces: [(name: String, lines: [Substring])] = []
        var open: (name: String, indent: Int)?
        for line in try String(contentsOfFile: testFile, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("// article: ") {
                let name = String(trimmed.dropFirst("// article: ".count))
                if name == "end" {
                    open = nil
                } else {
                    open = (name, line.count - trimmed.count)
                    pieces.append((name, []))
                }
            } else if let open {
                pieces[pieces.count - 1].lines.append(line.dropFirst(open.indent))
            }
        }
        var order: [String] = []
        var code: [String: String] = [:]
        for piece in pieces {
            let text = piece.lines.map { $0 + "\n" }.joined()
            if let joined = code[piece.name] {
                code[piece.name] = joined + "\n" + text
            } else {
                order.append(piece.name)
                code[piece.name] = text
            }
        }
        return order.map { ($0, code[$0]!) }
    }

    /// The ```swift blocks of the DocC article `article` (a file name in the catalog), without
    /// their leading `import` lines.
    static func blocks(ofArticle article: String, besideTestFile testFile: String) throws -> [String] {
        var catalog = URL(fileURLWithPath: testFile)
        while catalog.lastPathComponent != "Tests" { catalog.deleteLastPathComponent() }
        let url = catalog.deletingLastPathComponent()
            .appendingPathComponent("Sources/Receptionist/Receptionist.docc/\(article)")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.components(separatedBy: "```swift\n").dropFirst().map { block in
            var lines = block.components(separatedBy: "\n```")[0].split(
                separator: "\n", omittingEmptySubsequences: false)
            if lines.first?.hasPrefix("import ") == true {
                lines = Array(lines.drop { $0.hasPrefix("import ") }.drop { $0.isEmpty })
            }
            return lines.map { $0 + "\n" }.joined()
        }
    }

    /// The names whose marked code in `testFile` is not a block of `article`.
    static func missing(from article: String, testFile: String) throws -> [String] {
        let blocks = try Self.blocks(ofArticle: article, besideTestFile: testFile)
        return try marked(in: testFile).filter { !blocks.contains($0.code) }.map(\.name)
    }
}
