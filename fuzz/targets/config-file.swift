// The configuration file, /etc/orientd.conf: `TextFormats.ConfigFile(parsing:source:)`, then
// the consumers of its sections, `DetectorParameters(config:)` ([detector]) and
// `AccelerometerConfiguration` ([sampling], [device "NAME"]).
//
// Invariants: ConfigFile never accepts a line it cannot attribute to a line number: every
// section and entry has a line number inside the file, in increasing order, and that line of
// the text holds the section's header or the entry's key and value; keys and values hold no
// line break; written back out, the sections parse to the same sections. Every error names a
// line inside the file (or 0 for the whole file). What the consumers accept is inside the
// documented ranges.
import OrientCore
import Sensors
import TextFormats

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let text = inputText(data, size)
  // Lines as a person (or an editor) counts them: split at every line feed byte.
  let lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map {
    String(decoding: $0, as: UTF8.self)
  }
  let file: ConfigFile
  do {
    file = try ConfigFile(parsing: text, source: "fuzz.conf")
  } catch {
    require(
      error.line >= 0 && error.line <= lines.count, "error at line \(error.line) of \(lines.count)")
    require(error.source == "fuzz.conf", "error names \(error.source)")
    return 0
  }
  var last = -1
  for section in file.sections {
    if section.line > 0 || !section.name.isEmpty {
      require(section.line >= 1 && section.line <= lines.count, "header line \(section.line)")
      require(section.line > last, "sections out of line order")
      require(
        lines[section.line - 1].contains(section.name),
        "line \(section.line) does not hold [\(section.name)]")
      last = section.line
    }
    for entry in section.entries {
      require(entry.line >= 1 && entry.line <= lines.count, "entry line \(entry.line)")
      require(entry.line > last, "entries out of line order at \(entry.line)")
      last = entry.line
      let line = lines[entry.line - 1]
      require(!entry.key.isEmpty, "an empty key at line \(entry.line)")
      for part in [entry.key, entry.value] {
        require(
          !part.unicodeScalars.contains { $0 == "\n" || $0 == "\r" },
          "line \(entry.line): \(part.debugDescription) holds a line break")
        require(line.contains(part), "line \(entry.line) does not hold \(part.debugDescription)")
      }
    }
  }

  // Written back out, it reads the same.
  var out = ""
  for section in file.sections {
    if !section.name.isEmpty || section.line > 0 {
      out += "[\(section.name)\(section.argument.map { " \"\($0)\"" } ?? "")]\n"
    }
    // A tab, not a space, before the value: a value may start with a combining mark, which
    // would merge with a space into one Character (and then not be trimmed), never with a tab.
    for entry in section.entries { out += "\(entry.key) =\t\(entry.value)\n" }
  }
  guard let again = try? ConfigFile(parsing: out, source: "again") else {
    require(false, "the written-back file does not parse:\n\(out)")
    return 0
  }
  require(again.sections.count == file.sections.count, "written back: section count")
  for (a, b) in zip(again.sections, file.sections) {
    require(a.name == b.name && a.argument == b.argument, "written back: [\(a.name)]")
    require(
      a.entries.map(\.key) == b.entries.map(\.key)
        && a.entries.map(\.value) == b.entries.map(\.value), "written back: entries of [\(a.name)]")
  }

  // The consumers.
  do {
    let parameters = try DetectorParameters(config: file)
    for key in DetectorParameters.Key.allCases {
      require(key.range.contains(parameters[key]), "\(key.rawValue) = \(parameters[key])")
    }
    try parameters.validate(source: "fuzz.conf")
  } catch {
    require(error.line >= 0 && error.line <= lines.count, "detector error line \(error.line)")
  }
  do {
    let configuration = try AccelerometerConfiguration(file)
    let sampling = configuration.sampling
    require((0.1...1000).contains(sampling.pollRate), "poll rate \(sampling.pollRate)")
    require((0.1...1000).contains(sampling.bufferedRate), "buffered rate \(sampling.bufferedRate)")
    require((2...4096).contains(sampling.bufferLength), "buffer length \(sampling.bufferLength)")
    for device in configuration.devices {
      require(
        device.matchName != nil || device.matchLabel != nil || device.matchModalias != nil,
        "[device \(device.title)] without a match key")
      if let matrix = device.mountMatrix {
        require((try? MountMatrix(parsing: matrix.text)) != nil, "bad matrix \(matrix.text)")
      }
      _ = device.matches(name: "mxc4005", label: "accel-display", modalias: "acpi:MXC6655:")
    }
  } catch {
    require(error.line >= 0 && error.line <= lines.count, "sampling error line \(error.line)")
  }
  return 0
}
