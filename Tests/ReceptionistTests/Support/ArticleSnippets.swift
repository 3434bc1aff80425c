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
        try blocks(inFile: "Sources/Receptionist/Receptionist.docc/\(article)", besideTestFile: testFile)
    }

    /// The ```swift blocks of the Markdown file at `path` (relative to the repository), without
    /// their leading `import` lines. A block indented under a list item loses that indentation.
    static func blocks(inFile path: String, besideTestFile testFile: String) throws -> [String] {
        var root = URL(fileURLWithPath: testFile)
        while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
        let text = try String(
            contentsOf: root.deletingLastPathComponent().appendingPathComponent(path), encoding: .utf8)
        var blocks: [String] = []
        var open: (indent: Substring, lines: [Substring])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let block = open {
                if line == block.indent + "```" {
                    var lines = block.lines[...]
                    if lines.first?.hasPrefix("import ") == true {
                        lines = lines.drop { $0.hasPrefix("import ") }.drop { $0.isEmpty }
                    }
                    blocks.append(lines.map { $0 + "\n" }.joined())
                    open = nil
                } else {
                    open?.lines.append(line.hasPrefix(block.indent) ? line.dropFirst(block.indent.count) : line)
                }
            } else if line.drop(while: { $0 == " " }) == "```swift" {
                open = (line.prefix { $0 == " " }, [])
            }
        }
        return blocks
    }

    /// The names whose marked code in `testFile` is not a block of `article`.
    static func missing(from article: String, testFile: String) throws -> [String] {
        try missing(fromBlocks: blocks(ofArticle: article, besideTestFile: testFile), testFile: testFile)
    }

    /// The names whose marked code in `testFile` is not a block of the Markdown file at `path`.
    static func missing(fromFile path: String, testFile: String) throws -> [String] {
        try missing(fromBlocks: blocks(inFile: path, besideTestFile: testFile), testFile: testFile)
    }

    /// A file with nothing marked is reported too (as `"(nothing marked)"`): a check of no code
    /// would pass whatever the document says.
    private static func missing(fromBlocks blocks: [String], testFile: String) throws -> [String] {
        let marked = try marked(in: testFile)
        if marked.isEmpty { return ["(nothing marked)"] }
        return marked.filter { !blocks.contains($0.code) }.map(\.name)
    }
}
