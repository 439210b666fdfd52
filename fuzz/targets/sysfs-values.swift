// The scalars the kernel writes in IIO sysfs attributes: raw values (`in_accel_x_raw`,
// `Sensors.SysfsValue.parseRaw`, and `parseReading`, which also reads decimals),
// decimals (`in_accel_scale`, `sampling_frequency`, `OrientCore.DecimalText`), integers and
// flags, `*_available` lists and ranges (`AvailableValues`), the timestamp clock, and the
// fixed-point text written back.
//
// Invariants: the raw parser agrees with `DecimalText.parseInteger` wherever the latter
// accepts, and its value prints and re-parses unchanged; an accepted decimal is finite, is what
// Swift's own `Double(_:)` reads from the same text, and its short form re-parses to it; a
// parsed list keeps every item's text and re-parses from its own text; the value chosen from a
// list or range is one the device accepts; fixed-point text is within half a unit of the value.
import OrientCore
import Sensors
import TextFormats

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSysfsValues(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  let text = String(decoding: bytes, as: UTF8.self)

  // Raw channel values.
  let raw = SysfsValue.parseRaw(bytes)
  if bytes.count <= SysfsValue.maxBytes, let simple = DecimalText.parseInteger(bytes) {
    require(raw == .success(simple), "parseRaw \(raw) but parseInteger \(simple) for \(bytes)")
  }
  if case .success(let value) = raw {
    require(
      SysfsValue.parseRaw(Array("\(value)\n".utf8)) == .success(value), "\(value) does not re-read")
    // The String entry points see the same bytes when they are valid UTF-8.
    if String(validating: bytes, as: UTF8.self) != nil {
      require(SysfsValue.parseInteger(text) == value, "parseInteger disagrees on \(value)")
      require(SysfsValue.parseFlag(text) == (value != 0), "parseFlag disagrees on \(value)")
    }
  }
  if case .failure(.notANumber(let shown)) = raw {
    require(shown.utf8.count <= 32, "the shown garbage is \(shown.utf8.count) bytes long")
  }
  // Polled readings: an integer reads as parseRaw does; a decimal (`-25.6`) is finite.
  let reading = SysfsValue.parseReading(bytes)
  if case .success(let value) = raw {
    require(reading == .success(Double(value)), "parseReading \(reading) but parseRaw \(value)")
  }
  if case .success(let value) = reading {
    require(value.isFinite, "parseReading gave \(value) for \(bytes)")
  }

  // Decimals.
  if let value = try? SysfsValue.parseDecimal(text) {
    require(value.isFinite, "non-finite \(value) from \(text.debugDescription)")
    let trimmed = text.trimmingCharacters()
    require(Double(trimmed) == value, "Double(\(trimmed.debugDescription)) is not \(value)")
    require(
      (try? DecimalText.parseDouble(shortDecimal(value))) == value,
      "shortDecimal(\(value)) = \(shortDecimal(value)) does not re-parse")
    for decimals in [0, 3, 6, 9] {
      let fixed = FixedPoint.format(value, decimals: decimals, trimZeros: decimals == 6)
      guard abs(value) < 1e15, let back = try? DecimalText.parseDouble(fixed) else {
        require(abs(value) >= 1e15, "FixedPoint text \(fixed) of \(value) does not parse")
        continue
      }
      var unit = 1.0
      for _ in 0..<decimals { unit /= 10 }
      require(
        abs(back - value) <= unit / 2 + abs(value) * 1e-15 + 1e-300,
        "FixedPoint \(fixed) is not within half of \(unit) of \(value)")
    }
  }

  // `*_available`.
  if let available = AvailableValues(parsing: text) {
    switch available {
    case .list(let items):
      require(!items.isEmpty, "an empty list from \(text.debugDescription)")
      for item in items {
        require(item.value.isFinite, "non-finite item \(item.text)")
        require((try? DecimalText.parseDouble(item.text)) == item.value, "item \(item.text)")
      }
      require(AvailableValues(parsing: available.text) == available, "list text does not re-parse")
    case .range(let lo, let step, let hi):
      require(lo.isFinite && step.isFinite && hi.isFinite, "non-finite range")
      require(lo <= hi && step >= 0, "range \(lo) \(step) \(hi) accepted")
    }
    for target in [-1.0, 0, 1, 12.5, 20, 200, 1e9] + available.displayValues {
      let chosen = available.smallest(atLeast: target)
      switch available {
      case .list(let items):
        require(
          items.contains { $0.text == chosen.text && $0.value == chosen.value },
          "chose \(chosen) for \(target), not in the list")
        if chosen.value < target {
          require(items.allSatisfy { $0.value < target }, "chose \(chosen) below \(target)")
        }
      case .range(let lo, _, let hi):
        require(chosen.value >= lo && chosen.value <= hi, "chose \(chosen) outside \(lo)...\(hi)")
        require(
          (try? DecimalText.parseDouble(chosen.text)) != nil, "chosen text \(chosen.text) unusable")
      }
    }
  }

  // The timestamp clock and flags never trap; a known clock names itself.
  if let clock = TimestampClock(attribute: text) {
    require(TimestampClock(attribute: clock.rawValue + "\n") == clock, "clock \(clock) text")
  }
  return 0
}

extension String {
  /// Without the blanks `DecimalText` allows around a number.
  fileprivate func trimmingCharacters() -> Substring {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }),
      let last = lastIndex(where: { !isSpace($0) })
    else { return self[endIndex...] }
    return self[first...last]
  }
}
