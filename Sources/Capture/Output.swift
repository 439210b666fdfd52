import Glibc
import OrientCore
import SystemKit

/// An output file name template (`-o`): strftime(3) fields (`%Y%m%d-%H%M%S`), `{n}` (a counter)
/// and `{orientation}` (normal, left-up, ...). `%%`, `{{` and `}}` are literal.
public struct OutputTemplate: Equatable, Sendable {
  enum Part: Equatable, Sendable {
    case text(String)  // passed through strftime
    case counter
    case orientation
  }

  let parts: [Part]
  /// The template as given.
  public let text: String

  /// The default: `%Y%m%d-%H%M%S-{n}.jpg` in the current folder.
  public static let standard = OutputTemplate(
    text: "%Y%m%d-%H%M%S-{n}.jpg", parts: [.text("%Y%m%d-%H%M%S-"), .counter, .text(".jpg")])

  private init(text: String, parts: [Part]) {
    self.text = text
    self.parts = parts
  }

  /// Parses a template.
  ///
  /// - Throws: `CaptureError.usage` for an unknown `{field}`, an unclosed brace or an empty
  ///   template.
  public init(_ text: String) throws(CaptureError) {
    guard !text.isEmpty, !text.hasSuffix("/") else {
      throw CaptureError(.usage, "-o needs a file name template, e.g. photos/%Y%m%d-{n}.jpg")
    }
    self.text = text
    var parts: [Part] = []
    var literal = ""
    let chars = Array(text)
    var i = 0
    func flush() {
      if !literal.isEmpty { parts.append(.text(literal)) }
      literal = ""
    }
    while i < chars.count {
      let c = chars[i]
      if c == "{" && i + 1 < chars.count && chars[i + 1] == "{" {
        literal.append("{")
        i += 2
      } else if c == "}" && i + 1 < chars.count && chars[i + 1] == "}" {
        literal.append("}")
        i += 2
      } else if c == "{" {
        guard let close = chars[i...].firstIndex(of: "}") else {
          throw CaptureError(.usage, "-o \(text): unclosed \"{\" (write {{ for a literal brace)")
        }
        let name = String(chars[(i + 1)..<close])
        switch name {
        case "n":
          flush()
          parts.append(.counter)
        case "orientation":
          flush()
          parts.append(.orientation)
        default:
          throw CaptureError(
            .usage, "-o \(text): unknown field {\(name)}; the fields are {n} and {orientation}")
        }
        i = close + 1
      } else if c == "}" {
        throw CaptureError(.usage, "-o \(text): stray \"}\" (write }} for a literal brace)")
      } else {
        literal.append(c)
        i += 1
      }
    }
    flush()
    self.parts = parts
  }

  /// Whether the name has a `{n}` counter (then existing names are skipped, not overwritten).
  public var hasCounter: Bool { parts.contains(.counter) }

  /// The file name for photo number `counter`, taken at `realtimeNanoseconds` (local time) in
  /// `orientation`.
  public func expand(counter: Int, orientation: Orientation, realtimeNanoseconds: Int64) -> String {
    var seconds = time_t(realtimeNanoseconds / 1_000_000_000)
    var local = tm()
    localtime_r(&seconds, &local)
    var out = ""
    for part in parts {
      switch part {
      case .counter: out += String(counter)
      case .orientation: out += orientation.rawValue
      case .text(let format): out += OutputTemplate.strftime(format, &local)
      }
    }
    return out
  }

  static func strftime(_ format: String, _ time: inout tm) -> String {
    guard format.contains("%") else { return format }
    var size = 256 + format.utf8.count * 8
    while size < 1 << 16 {
      var buffer = [CChar](repeating: 0, count: size)
      let n = Glibc.strftime(&buffer, size, format, &time)
      if n > 0 || format.isEmpty {
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      }
      size *= 4  // 0 can mean "did not fit"
    }
    return format
  }
}
