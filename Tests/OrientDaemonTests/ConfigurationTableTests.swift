import OrientCore
import OrientDaemon
import Sensors
import TestSupport
import TestThreads
import Testing
import TextFormats

/// The declaration table: its reference, reload semantics and the documentation it must match.
@Suite(.ownThreads) struct ConfigurationTableTests {
  /// The text of each section of a file whose section headers start with `prefix` (`[` for
  /// the example, `# [` for the man page), keyed by section name.
  static func sections(of text: String, headerPrefix prefix: String) -> [String: String] {
    var result: [String: String] = [:]
    var current: String?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      var header = Substring(line)
      if header.hasPrefix("#"), prefix == "[" { header = header.dropFirst() }
      if header.hasPrefix(prefix) {
        let rest = header.dropFirst(prefix.count)
        current = String(rest.prefix { $0.isLetter || $0 == "-" })
      } else if header.hasPrefix("# ") && prefix != "[" {
        current = nil
      }
      if let current { result[current, default: ""] += line + "\n" }
    }
    return result
  }

  @Test func theReferenceListsEverySectionAndKeyWithItsDefault() {
    let reference = DaemonConfiguration.schema.reference
    for section in DaemonConfiguration.schema.sections {
      #expect(reference.contains(section.header))
      for key in section.keys { #expect(reference.contains("\n\(key) = "), "\(key)") }
    }
    #expect(reference.contains("poll-rate = 30"))
    #expect(reference.contains("timeout = 700"))
    #expect(reference.contains("hysteresis = 14 "))
    #expect(reference.contains("hysteresis = auto "))
    #expect(reference.contains("light-interval = 0.5 "))
    #expect(reference.contains("tablet-mode-switch = auto "))
  }

  /// Every key is in the installed example, in its section, and every value the example
  /// shows (commented out or not) is the table's default.
  @Test func theExampleFileListsExactlyTheTablesKeysWithTheirDefaults() throws {
    let text = readFile("\(Built.packageRoot)/docs/orientd.conf.example")
    let sections = Self.sections(of: text, headerPrefix: "[")
    let defaults = DaemonConfiguration()
    for section in DaemonConfiguration.schema.sections {
      let body = try #require(sections[section.name], "no [\(section.name)] in the example")
      for key in section.keys { #expect(body.contains(key), "[\(section.name)] \(key)") }
    }
    let tables: [String: [(String, String)]] = [
      "detector": DetectorParameters.table.keys.map { ($0.name, $0.value(in: defaults.detector)) },
      "sampling": SensorsConfiguration.samplingTable.keys.map {
        ($0.name, $0.value(in: defaults.sensors))
      },
      "posture": PostureSettings.table.keys.map { ($0.name, $0.value(in: defaults.posture)) },
      "face": FaceSettings.table.keys.map { ($0.name, $0.value(in: defaults.face)) },
      "motion": MotionSettings.table.keys.map { ($0.name, $0.value(in: defaults.motion)) },
    ]
    for (name, rows) in tables {
      let body = sections[name] ?? ""
      for line in body.split(separator: "\n") {
        let entry = line.drop { $0 == "#" || $0 == " " }
        guard let equals = entry.firstIndex(of: "="),
          let row = rows.first(where: { $0.0 == entry[..<equals].trimming() })
        else { continue }
        let shown = entry[entry.index(after: equals)...].trimming()
        if row.0 == "program" { continue }  // shows where it is usually installed
        #expect(shown == row.1, "[\(name)] \(row.0) shows \(shown), the default is \(row.1)")
      }
    }
  }

  /// Every key has its entry (`*key*`) in its section of orientd.conf(5).
  @Test func theManualDescribesEveryKey() throws {
    let text = readFile("\(Built.packageRoot)/man/orientd.conf.5.scd")
    let sections = Self.sections(of: text, headerPrefix: "# [")
    for section in DaemonConfiguration.schema.sections {
      let body = try #require(sections[section.name], "no [\(section.name)] in the manual")
      for key in section.keys { #expect(body.contains("*\(key)*"), "[\(section.name)] \(key)") }
    }
  }

  /// The fusion's rows read through the same table: its messages and defaults.
  @Test func theMotionFusionRowsAreAConfigTable() throws {
    var parameters = MotionFusion.Parameters()
    let table = MotionFusion.Parameters.table
    #expect(table.names == MotionFusion.Parameters.keys)
    try table.set("maximum-bias", "10", in: &parameters, source: "m.conf", line: 4)
    #expect(abs((parameters.value(of: "maximum-bias") ?? 0) - 10) < 1e-9)
    #expect(table.key("maximum-bias")?.value(in: parameters) == "10")
    #expect {
      try table.set("rest-time", "0", in: &parameters, source: "m.conf", line: 5)
    } throws: { "\($0)".contains("m.conf:5: rest-time 0 s is outside 0.1 ... 60 s") }
  }

  /// A reload reads the file on top of the defaults: a section the new file lacks is back at
  /// its defaults, the ambient intervals included (they were once masked).
  @Test func aSectionAbsentOnReloadGetsItsDefaults() throws {
    let first = try DaemonConfiguration(
      parsing: "[sampling]\nlight-interval = 2\npoll-rate = 10\n[face]\nenabled = yes\n",
      source: "a.conf")
    #expect(first.ambient.lightInterval == .seconds(2))
    #expect(first.face.enabled)
    let second = try DaemonConfiguration(parsing: "[detector]\nhysteresis = 10\n", source: "b.conf")
    #expect(second.ambient == AmbientConfiguration())
    #expect(second.accelerometer == AccelerometerConfiguration())
    #expect(second.face == FaceSettings())
  }

  @Test(arguments: [
    ("[sampling]\nspeed = 1\n", "x.conf:2: unknown key 'speed' in [sampling] (known: mode, rate,"),
    (
      "[posture]\nfoo = 1\n", "x.conf:2: unknown key 'foo' in [posture] (known: tablet-mode-switch,"
    ),
    (
      "[device \"a\"]\ncolour = red\n",
      "x.conf:2: unknown key 'colour' in [device \"a\"] (known: match-name"
    ),
    ("[detector \"a\"]\n", "x.conf:1: [detector] takes no argument"),
    ("[device]\nmatch-name = x\n", "x.conf:1: a device section needs a name"),
    (
      "[posture]\nposture-hysteresis = 31\n",
      "x.conf:2: posture-hysteresis 31 degrees is outside 0 ... 30"
    ),
    ("[face]\nframes = 11\n", "x.conf:2: frames '11' must be a whole number from 1 to 10"),
    (
      "[posture]\ntablet-mode-switch = maybe\n",
      "tablet-mode-switch 'maybe' is not one of auto, on, off"
    ),
  ])
  func everySectionReportsTheSameWay(text: String, message: String) {
    #expect {
      _ = try DaemonConfiguration(parsing: text, source: "x.conf")
    } throws: { error in
      "\(error)".contains(message)
    }
  }
}
