import Glibc
import TestSupport
import TestThreads
import Testing

/// The README and docs/ as a newcomer follows them: the two commands are where the README
/// promises them, and every relative link leads to a file (and a heading) that exists.
@Suite(.ownThreads) struct DocumentationTests {
  static let root = Built.packageRoot

  /// README.md and every docs/*.md, as paths relative to the package.
  static var pages: [String] {
    var pages = ["README.md"]
    guard let dir = opendir("\(root)/docs") else { return pages }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name.hasSuffix(".md") { pages.append("docs/\(name)") }
    }
    return pages.sorted()
  }

  @Test func readmeShowsTheTwoCommands() {
    let readme = readFile("\(Self.root)/README.md")
    #expect(readme.contains("\nscripts/demo.sh "))
    #expect(readme.contains("\nscripts/test.sh "))
  }

  @Test func relativeLinksLeadToFilesAndHeadings() throws {
    var broken: [String] = []
    for page in Self.pages {
      let text = readFile("\(Self.root)/\(page)")
      try #require(!text.isEmpty, "\(page) is empty or unreadable")
      let folder =
        page.contains("/") ? String(page[..<(page.lastIndex(of: "/") ?? page.endIndex)]) : ""
      for target in Self.links(in: text) where !target.hasPrefix("http") {
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0])
        let file =
          path.isEmpty ? page : Self.normalised(folder.isEmpty ? path : "\(folder)/\(path)")
        guard access("\(Self.root)/\(file)", F_OK) == 0 else {
          broken.append("\(page): \(target): no file \(file)")
          continue
        }
        if parts.count == 2, file.hasSuffix(".md") {
          let anchors = Self.anchors(in: readFile("\(Self.root)/\(file)"))
          if !anchors.contains(String(parts[1])) {
            broken.append("\(page): \(target): no heading #\(parts[1]) in \(file)")
          }
        }
      }
    }
    #expect(broken == [])
  }

  /// The targets of `[text](target)` links outside code blocks.
  static func links(in text: String) -> [String] {
    var targets: [String] = []
    var inCode = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") { inCode.toggle() }
      if inCode { continue }
      var rest = line[...]
      while let open = rest.firstRange(of: "](") {
        let after = rest[open.upperBound...]
        guard let close = after.firstIndex(of: ")") else { break }
        let target = after[..<close]
        if !target.contains(" ") { targets.append(String(target)) }
        rest = after[after.index(after: close)...]
      }
    }
    return targets
  }

  /// GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as `-`.
  static func anchors(in text: String) -> Set<String> {
    var anchors: Set<String> = []
    var inCode = false
    for line in text.split(separator: "\n") {
      if line.hasPrefix("```") { inCode.toggle() }
      guard !inCode, line.hasPrefix("#") else { continue }
      let title = line.drop { $0 == "#" }.drop { $0 == " " }
      anchors.insert(
        String(
          title.lowercased().compactMap { c -> Character? in
            if c == " " { return "-" }
            return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
          }))
    }
    return anchors
  }

  /// `a/../b` as `b`.
  static func normalised(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") {
      if part == "..", !parts.isEmpty {
        parts.removeLast()
      } else if part != "." {
        parts.append(part)
      }
    }
    return parts.joined(separator: "/")
  }
}
