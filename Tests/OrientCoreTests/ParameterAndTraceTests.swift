import Testing
import TextFormats

@testable import OrientCore

@Suite struct DetectorParameterTests {
  @Test func everyKeyRoundTripsThroughTheSetter() throws {
    var parameters = DetectorParameters()
    for key in DetectorParameters.Key.allCases {
      let value = (key.range.lowerBound + key.range.upperBound) / 2
      try parameters.set(key: key.rawValue, value: shortDecimal(value), source: "t", line: 1)
      #expect(parameters[key] == value, "\(key.rawValue)")
    }
  }

  @Test func defaultsAreValidAndInRange() throws {
    let defaults = DetectorParameters()
    try defaults.validate(source: "defaults")
    for key in DetectorParameters.Key.allCases {
      #expect(key.range.contains(defaults[key]), "\(key.rawValue) = \(defaults[key])")
    }
  }

  @Test(arguments: [
    ("filter-timeconstant", "0.05", "unknown key 'filter-timeconstant' in [detector]"),
    ("hysteresis", "12deg", "'12deg': not a decimal number"),
    ("hysteresis", "", "empty value"),
    ("hysteresis", "nan", "not a finite number"),
    ("hysteresis", "41", "hysteresis 41 degrees is outside 0 ... 40 degrees"),
    ("filter-time-constant", "-0.1", "filter-time-constant -0.1 s is outside 0 ... 2 s"),
    ("motion-threshold", "2", "is outside 0.01 ... 0.95"),
  ])
  func setterRejectsWithAReason(key: String, value: String, reason: String) {
    var parameters = DetectorParameters()
    #expect {
      try parameters.set(key: key, value: value, source: "/etc/orientd.conf", line: 7)
    } throws: { error in
      guard let error = error as? ConfigError else { return false }
      return error.line == 7 && error.reason.contains(reason)
        && error.description.hasPrefix("/etc/orientd.conf:7: ")
    }
    #expect(parameters == DetectorParameters(), "a rejected value changes nothing")
  }

  @Test func unknownKeyListsTheValidOnes() {
    var parameters = DetectorParameters()
    do {
      try parameters.set(key: "speed", value: "1", source: "--set", line: 0)
      Issue.record("accepted an unknown key")
    } catch {
      for key in DetectorParameters.Key.allCases {
        #expect(error.reason.contains(key.rawValue))
      }
      #expect(error.description.hasPrefix("--set: "))
    }
  }

  @Test(arguments: [
    ("flat-leave = 80", "flat-leave (80) must be below flat-enter (75)"),
    ("vertical-limit = 64", "vertical-limit (64) must be more than 3 degrees below flat-leave"),
    ("decisive-angle = 10", "decisive-angle (10) must be above hysteresis (14)"),
    ("settle-time-slow = 0.01", "settle-time-slow (0.01) must be at least settle-time-fast"),
    ("motion-threshold = 0.45", "motion-threshold (0.45) must not exceed impact-threshold (0.4)"),
    ("impact-threshold = 0.6", "must not exceed magnitude-tolerance"),
    ("turn-time-constant = 0.01", "must not be below filter-time-constant"),
  ])
  func conflictingValuesAreReportedAtTheSection(line: String, reason: String) {
    let text = "# orientd\n\n[detector]\n\(line)\n"
    #expect {
      _ = try DetectorParameters(config: ConfigFile(parsing: text, source: "my.conf"))
    } throws: { error in
      guard let error = error as? ConfigError else { return false }
      return error.reason.contains(reason) && error.line == 3
    }
  }

  @Test func readsTheDetectorSectionsOfAConfigFile() throws {
    let text = """
      [detector]
      hysteresis = 10
      [device "tablet"]
      mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1
      [detector]
      filter-time-constant = 0.08
      turn-time-constant = 0.3
      """
    let config = try ConfigFile(parsing: text, source: "orientd.conf")
    let parameters = try DetectorParameters(config: config)
    #expect(parameters.hysteresis == 10)
    #expect(parameters.filterTimeConstant == 0.08)
    let section = try #require(config.sections(named: "detector").first)
    #expect(try DetectorParameters(section: section, source: "orientd.conf").hysteresis == 10)
    let bad = try ConfigFile(parsing: "[detector]\n\nhysterisis = 3\n", source: "x.conf")
    #expect {
      _ = try DetectorParameters(config: bad)
    } throws: { error in
      (error as? ConfigError)?.description.hasPrefix(
        "x.conf:3: unknown key 'hysterisis' in [detector]") == true
    }
  }
}

@Suite struct TraceParserTests {
  func parse(_ text: String, source: String = "trace.csv") throws(TraceError) -> [Sample] {
    var parser = TraceParser(source: source)
    var samples: [Sample] = []
    // Split bytes, as LineReader does: "\r\n" is one Character, so String.split would not.
    for line in Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false) {
      if let s = try parser.parse(line: line) { samples.append(s) }
    }
    return samples
  }

  @Test func acceptsHeaderCommentsBlanksAndSpaces() throws {
    let samples = try parse(
      "# recorded on a tablet\nt,x,y,z\n\n0, 0.1, -9.8, 0.2\r\n0.02,1e-1,-9.81,+0\n0.02,0,-9.8,0\n")
    #expect(samples.count == 3)
    #expect(samples[0] == Sample(time: 0, 0.1, -9.8, 0.2))
    #expect(samples[1] == Sample(time: 0.02, 0.1, -9.81, 0))
  }

  @Test(arguments: [
    ("0,0,-9.8,0\n0.1,0,-9.8\n", 2, "expected 4 comma-separated values t,x,y,z, found 3"),
    ("0,0,-9.8,0,1\n", 1, "found 5"),
    ("# c\n0,0,-9.8,0\n0.1,0,abc,0\n", 3, "y 'abc' is not a decimal number"),
    ("0,0,-9.8,nan\n", 1, "z 'nan' is not a finite number"),
    ("0,0,-9.8,0\n0.2,0,-9.8,0\n0.1,0,-9.8,0\n", 3, "time 0.1 is before the previous sample's 0.2"),
    ("0,0,-9.8,0\nt,x,y,z\n", 2, "t 't' is not a decimal number"),
    ("0;0;-9.8;0\n", 1, "found 1"),
    ("0,,-9.8,0\n", 1, "x '' is empty value"),
  ])
  func malformedLinesNameSourceAndLine(text: String, line: Int, reason: String) {
    #expect {
      _ = try parse(text, source: "rec.csv")
    } throws: { error in
      guard let error = error as? TraceError else { return false }
      return error.line == line && error.reason.contains(reason)
        && error.description.hasPrefix("rec.csv:\(line): ")
    }
  }

  @Test func overlongLinesAndBadUTF8AreErrors() {
    var parser = TraceParser(source: "big.csv")
    let long = [UInt8](repeating: UInt8(ascii: "1"), count: TraceParser.maxLineLength + 1)
    #expect(throws: TraceError.self) { try parser.parse(line: long) }
    #expect(parser.lineNumber == 1)
    #expect(throws: TraceError.self) { try parser.parse(line: [0x30, 0xFF, 0x2C]) }
  }
}
