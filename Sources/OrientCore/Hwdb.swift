import TextFormats

/// One record of a udev hwdb file: match lines and the properties they set.
///
/// The format is systemd's hwdb(7): a record is one or more match lines (globs, matched with
/// fnmatch(3) against the lookup key) followed by property lines that start with exactly one
/// space, `KEY=VALUE`; records are separated by blank lines; `#` starts a comment line.
public struct HwdbRecord: Equatable, Sendable {
  /// The match globs.
  public var matches: [String]
  /// The properties, in file order.
  public var properties: [(key: String, value: String)]
  /// The 1-based line of the first match line.
  public var line: Int

  /// Creates a record.
  public init(matches: [String], properties: [(key: String, value: String)], line: Int = 1) {
    self.matches = matches
    self.properties = properties
    self.line = line
  }

  /// The value of `key`, if set.
  public func property(_ key: String) -> String? {
    properties.last { $0.key == key }?.value
  }

  /// The record as hwdb text (no trailing blank line).
  public var text: String {
    (matches + properties.map { " \($0.key)=\($0.value)" }).joined(separator: "\n")
  }

  /// Compares matches, properties and line.
  public static func == (lhs: HwdbRecord, rhs: HwdbRecord) -> Bool {
    lhs.matches == rhs.matches && lhs.line == rhs.line
      && lhs.properties.map(\.key) == rhs.properties.map(\.key)
      && lhs.properties.map(\.value) == rhs.properties.map(\.value)
  }

  /// Parses a hwdb file.
  ///
  /// - Throws: `HwdbError` at the line of the first mistake: a property with no match line
  ///   above it, a match line directly after properties, a property line not indented by
  ///   exactly one space, or one without `=`.
  public static func parse(_ text: String) throws(HwdbError) -> [HwdbRecord] {
    var records: [HwdbRecord] = []
    var current: HwdbRecord?
    var number = 0
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
      number += 1
      var line = raw
      if line.last == "\r" { line.removeLast() }
      if line.first == "#" { continue }
      if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
        if let record = current { records.append(record) }
        current = nil
        continue
      }
      if line.first == " " || line.first == "\t" {
        guard var record = current else {
          throw HwdbError(line: number, reason: "a property line with no match line above it")
        }
        guard line.first == " ", line.dropFirst().first != " ", line.dropFirst().first != "\t"
        else {
          throw HwdbError(line: number, reason: "a property line must start with exactly one space")
        }
        let body = line.dropFirst()
        guard let equals = body.firstIndex(of: "="), equals != body.startIndex else {
          throw HwdbError(line: number, reason: "a property line must be KEY=VALUE")
        }
        record.properties.append(
          (String(body[..<equals]), String(body[body.index(after: equals)...])))
        current = record
        continue
      }
      if var record = current {
        guard record.properties.isEmpty else {
          throw HwdbError(
            line: number,
            reason: "a match line directly after properties; separate records by a blank line")
        }
        record.matches.append(String(line))
        current = record
      } else {
        current = HwdbRecord(matches: [String(line)], properties: [], line: number)
      }
    }
    if let record = current { records.append(record) }
    for record in records where record.properties.isEmpty {
      throw HwdbError(line: record.line, reason: "a match line with no properties")
    }
    return records
  }
}

/// A mistake in a hwdb file, at a line.
public struct HwdbError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The 1-based line.
  public var line: Int
  /// What is wrong.
  public var reason: String

  /// `line N: reason`.
  public var description: String { "line \(line): \(reason)" }
}

/// Building the hwdb match line for one sensor, the way systemd's own 60-sensor.hwdb entries
/// are written.
public enum SensorHwdbMatch {
  /// The parts of a 60-sensor.rules lookup key
  /// `sensor:[<label>:]modalias:<bus modalias>:<DMI modalias>`.
  public struct Key: Equatable, Sendable {
    /// `accel-display:` and the like, or empty.
    public var prefix: String
    /// The modalias of the sensor's bus device, e.g. `acpi:MXC6655:MXC6655:`.
    public var modalias: String
    /// `/sys/class/dmi/id/modalias`, or `nil` when the machine has none.
    public var dmi: String?
  }

  /// Splits a lookup key (as `orientd --list-sensors` prints it), or `nil` if it is not one.
  public static func split(key: String) -> Key? {
    guard key.hasPrefix("sensor:") else { return nil }
    let rest = key.dropFirst("sensor:".count)
    guard let modaliasTag = rest.firstTextRange(of: "modalias:") else { return nil }
    let prefix = String(rest[..<modaliasTag.lowerBound])
    let tail = rest[modaliasTag.upperBound...]
    if let dmi = tail.firstTextRange(of: ":dmi:") {
      let dmiText = String(tail[tail.index(after: dmi.lowerBound)...])
      // "dmi:*" is what orientd writes when the machine has no DMI data.
      return Key(
        prefix: prefix, modalias: String(tail[..<dmi.lowerBound]),
        dmi: dmiText == "dmi:*" ? nil : dmiText)
    }
    return Key(prefix: prefix, modalias: String(tail), dmi: nil)
  }

  /// The match glob: the label prefix, the bus and device id of the modalias followed by `*`
  /// (`acpi:MXC6655*`), and the DMI system vendor and product name fields
  /// (`dmi:*:svnVendor:pnProduct:*`); with no DMI data the modalias glob ends the line, so the
  /// entry matches this sensor on any machine.
  public static func pattern(for key: Key) -> String {
    let parts = key.modalias.split(separator: ":", omittingEmptySubsequences: false)
    let device = parts.count >= 2 ? "\(parts[0]):\(parts[1])" : key.modalias
    var line = "sensor:\(key.prefix)modalias:\(escaped(device))*"
    guard let dmi = key.dmi else { return line }
    let fields = dmi.split(separator: ":").filter { $0.hasPrefix("svn") || $0.hasPrefix("pn") }
    line +=
      fields.isEmpty ? ":dmi:*" : ":dmi:*:" + fields.map(escaped).joined(separator: ":") + ":*"
    return line
  }

  /// The DMI vendor and product (`svn`, `pn` fields) for a comment, or `nil`.
  public static func machine(_ dmi: String?) -> String? {
    guard let dmi else { return nil }
    let fields = dmi.split(separator: ":")
    let vendor = fields.first { $0.hasPrefix("svn") }?.dropFirst(3)
    let product = fields.first { $0.hasPrefix("pn") }?.dropFirst(2)
    let text = [vendor, product].compactMap { $0.map(String.init) }.joined(separator: " ")
    return text.isEmpty ? nil : text
  }

  /// A sysfs value as udev substitutes it for `$attr{...}` in a rule (so as it appears in the
  /// lookup key 60-sensor.rules builds): trailing whitespace removed, and every character other
  /// than ASCII letters, digits, `#+-.:=@_/ $%?,`, `\x` escapes and multi-byte UTF-8 replaced by
  /// `_` (systemd's udev_replace_chars with UDEV_ALLOWED_CHARS_INPUT); other whitespace becomes
  /// a space. QEMU's DMI product `StandardPC(i440FX+PIIX,1996)` is looked up as
  /// `StandardPC_i440FX+PIIX,1996_`.
  public static func udevSubstituted(_ value: String) -> String {
    var bytes = Array(value.utf8)
    while let last = bytes.last, last == 0x20 || (0x09...0x0D).contains(last) { bytes.removeLast() }
    let allowed = Set("#+-.:=@_/ $%?,".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = 0
    while i < bytes.count {
      let b = bytes[i]
      let isAlphanumeric =
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
      if isAlphanumeric || allowed.contains(b) {
        out.append(b)
        i += 1
      } else if b == 0x5C, i + 1 < bytes.count, bytes[i + 1] == 0x78 {
        out += [b, bytes[i + 1]]
        i += 2
      } else if b >= 0xC2, let length = utf8Length(bytes, at: i) {
        out += bytes[i..<(i + length)]
        i += length
      } else {
        out.append((0x09...0x0D).contains(b) ? 0x20 : 0x5F)
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The length of a valid multi-byte UTF-8 sequence starting at `index`, or `nil`.
  private static func utf8Length(_ bytes: [UInt8], at index: Int) -> Int? {
    let lead = bytes[index]
    let length = lead >= 0xF0 ? 4 : (lead >= 0xE0 ? 3 : 2)
    guard lead <= 0xF4, index + length <= bytes.count else { return nil }
    for k in 1..<length where bytes[index + k] & 0xC0 != 0x80 { return nil }
    return length
  }

  /// Glob characters in a value stand for themselves only through `?`.
  private static func escaped(_ text: some StringProtocol) -> String {
    String(text.map { "*?[]\\".contains($0) ? "?" : $0 })
  }
}
