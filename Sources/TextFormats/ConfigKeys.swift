/// Why a configuration value was rejected: the whole reason, naming the key and the value
/// (`mode 'sometimes' is not one of auto, buffered, polled`); the table adds the file and line.
public struct ConfigValueError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong and what would be right.
  public var reason: String
  /// Creates an error.
  public init(_ reason: String) { self.reason = reason }
  /// The reason.
  public var description: String { reason }
}

/// One configuration key, declared once (anchor: systemd's `*-gperf.gperf`, one row per key
/// with its parser and place): from the row come parsing, the messages, `--help`, the
/// reference (`orientd --config-keys`) and the check of the documentation.
public struct ConfigKey<Settings>: Sendable {
  /// The kebab-case key (`poll-rate`).
  public let name: String
  /// The unit of a numeric key (`Hz`, `s`, `degrees`), empty otherwise.
  public let unit: String
  /// The accepted range of a numeric key (inclusive), `nil` otherwise.
  public let range: ClosedRange<Double>?
  /// What it accepts, for the reference (`0.1 ... 1000 Hz`, `auto | buffered | polled`).
  public let accepts: String
  /// What it does, one line.
  public let summary: String
  private let show: @Sendable (Settings) -> String
  private let store: @Sendable (inout Settings, String, String) throws(ConfigValueError) -> Void

  /// Declares a key.
  ///
  /// - Parameters:
  ///   - show: the value as the file would spell it (the default, shown on the defaults).
  ///   - store: parses the text and stores it; the third argument is where it was written
  ///     (`path:line`), for values checked later. Throws the whole reason.
  public init(
    _ name: String, unit: String = "", range: ClosedRange<Double>? = nil, accepts: String,
    summary: String, show: @escaping @Sendable (Settings) -> String,
    store: @escaping @Sendable (inout Settings, String, String) throws(ConfigValueError) -> Void
  ) {
    self.name = name
    self.unit = unit
    self.range = range
    self.accepts = accepts
    self.summary = summary
    self.show = show
    self.store = store
  }

  /// The value in `settings`, spelt as in the file.
  public func value(in settings: Settings) -> String { show(settings) }

  /// Parses `text` into `settings`; nothing changes when it is rejected.
  ///
  /// - Parameter origin: where the value was written (`path:line`).
  /// - Throws: `ConfigValueError` naming the key, the value and what is accepted.
  public func set(_ text: String, in settings: inout Settings, origin: String = "")
    throws(ConfigValueError)
  {
    try store(&settings, text, origin)
  }

  /// The same key on a value that holds `Settings` at `path`.
  public func lifted<Root>(_ path: WritableKeyPath<Root, Settings> & Sendable) -> ConfigKey<Root> {
    let show = self.show
    let store = self.store
    return ConfigKey<Root>(
      name, unit: unit, range: range, accepts: accepts, summary: summary,
      show: { show($0[keyPath: path]) },
      store: { (root: inout Root, text: String, origin: String) throws(ConfigValueError) in
        try store(&root[keyPath: path], text, origin)
      })
  }
}

/// The checks every key's parser shares, so that each kind of mistake reads the same in
/// every section.
public enum ConfigValue {
  /// A decimal number within `range`, in `unit`.
  public static func number(
    _ key: String, _ text: String, _ range: ClosedRange<Double>, _ unit: String
  ) throws(ConfigValueError) -> Double {
    let value: Double
    do {
      value = try DecimalText.parseDouble(text)
    } catch {
      throw ConfigValueError("\(key) '\(text)': \(error); expected a number (\(unit))")
    }
    guard range.contains(value) else {
      throw ConfigValueError(
        "\(key) \(text) \(unit) is outside \(shortDecimal(range.lowerBound)) ... "
          + "\(shortDecimal(range.upperBound)) \(unit)")
    }
    return value
  }

  /// A whole number within `range`.
  public static func integer(_ key: String, _ text: String, _ range: ClosedRange<Int>)
    throws(ConfigValueError) -> Int
  {
    guard let value = Int(text), range.contains(value) else {
      throw ConfigValueError(
        "\(key) '\(text)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    return value
  }

  /// `on`/`yes`/`true`/`1` or `off`/`no`/`false`/`0`.
  public static func boolean(_ key: String, _ text: String) throws(ConfigValueError) -> Bool {
    switch text.lowercased() {
    case "on", "yes", "true", "1": return true
    case "off", "no", "false", "0": return false
    default: throw ConfigValueError("\(key) '\(text)' must be on or off (yes or no)")
    }
  }

  /// One of `choices`.
  public static func choice(_ key: String, _ text: String, _ choices: [String])
    throws(ConfigValueError) -> String
  {
    guard choices.contains(text) else {
      throw ConfigValueError(
        "\(key) '\(text)' is not one of \(choices.joined(separator: ", "))")
    }
    return text
  }
}

extension ConfigKey {
  /// A value of any type stored at `path`: `parse` turns the text into it (throwing the whole
  /// reason), `show` spells it as the file would.
  public static func parsed<Value>(
    _ name: String, unit: String = "", range: ClosedRange<Double>? = nil, accepts: String,
    summary: String, _ path: WritableKeyPath<Settings, Value> & Sendable,
    show: @escaping @Sendable (Value) -> String,
    parse: @escaping @Sendable (String) throws(ConfigValueError) -> Value
  ) -> ConfigKey {
    ConfigKey(
      name, unit: unit, range: range, accepts: accepts, summary: summary,
      show: { show($0[keyPath: path]) },
      store: { (settings: inout Settings, text: String, _: String) throws(ConfigValueError) in
        settings[keyPath: path] = try parse(text)
      })
  }

  /// A decimal number within `range`, stored at `path` multiplied by `scale` (a key in
  /// degrees stored in radians: `scale` pi/180).
  public static func number(
    _ name: String, _ unit: String, _ range: ClosedRange<Double>, _ summary: String,
    _ path: WritableKeyPath<Settings, Double> & Sendable, scale: Double = 1
  ) -> ConfigKey {
    ConfigKey(
      name, unit: unit, range: range,
      accepts: "\(shortDecimal(range.lowerBound)) ... \(shortDecimal(range.upperBound)) \(unit)",
      summary: summary, show: { shortDecimal($0[keyPath: path] / scale) },
      store: { (settings: inout Settings, text: String, _: String) throws(ConfigValueError) in
        settings[keyPath: path] = try ConfigValue.number(name, text, range, unit) * scale
      })
  }

  /// A whole number within `range`, stored at `path`.
  public static func integer(
    _ name: String, _ unit: String, _ range: ClosedRange<Int>, _ summary: String,
    _ path: WritableKeyPath<Settings, Int> & Sendable
  ) -> ConfigKey {
    ConfigKey(
      name, unit: unit, range: Double(range.lowerBound)...Double(range.upperBound),
      accepts: "\(range.lowerBound) ... \(range.upperBound)\(unit.isEmpty ? "" : " \(unit)")",
      summary: summary, show: { "\($0[keyPath: path])" },
      store: { (settings: inout Settings, text: String, _: String) throws(ConfigValueError) in
        settings[keyPath: path] = try ConfigValue.integer(name, text, range)
      })
  }

  /// `on` or `off` (also `yes`/`no`), stored at `path`; `words` spell it in the reference.
  public static func boolean(
    _ name: String, _ summary: String, _ path: WritableKeyPath<Settings, Bool> & Sendable,
    words: (on: String, off: String) = ("on", "off")
  ) -> ConfigKey {
    ConfigKey(
      name, accepts: "\(words.on) | \(words.off)", summary: summary,
      show: { $0[keyPath: path] ? words.on : words.off },
      store: { (settings: inout Settings, text: String, _: String) throws(ConfigValueError) in
        settings[keyPath: path] = try ConfigValue.boolean(name, text)
      })
  }

  /// One of an enumeration's raw values, stored at `path`.
  public static func choice<Choice>(
    _ name: String, _ summary: String, _ path: WritableKeyPath<Settings, Choice> & Sendable
  ) -> ConfigKey
  where Choice: RawRepresentable & CaseIterable, Choice.RawValue == String {
    let choices = Choice.allCases.map(\.rawValue)
    return ConfigKey(
      name, accepts: choices.joined(separator: " | "), summary: summary,
      show: { $0[keyPath: path].rawValue },
      store: { (settings: inout Settings, text: String, _: String) throws(ConfigValueError) in
        let raw = try ConfigValue.choice(name, text, choices)
        if let value = Choice(rawValue: raw) { settings[keyPath: path] = value }
      })
  }
}

/// The keys of one section, in the order they are documented, and the checks between them.
public struct ConfigTable<Settings>: Sendable {
  /// The section name (`sampling`).
  public let section: String
  /// The rows.
  public let keys: [ConfigKey<Settings>]
  private let check: @Sendable (Settings) throws(ConfigValueError) -> Void

  /// Declares a section.
  ///
  /// - Parameter check: relations between keys, checked once the section is read (reported
  ///   at its header, so values can come in any order).
  public init(
    section: String, keys: [ConfigKey<Settings>],
    check: @escaping @Sendable (Settings) throws(ConfigValueError) -> Void = { _ in }
  ) {
    self.section = section
    self.keys = keys
    self.check = check
  }

  /// The key names, in order.
  public var names: [String] { keys.map(\.name) }

  /// The row for `name`.
  public func key(_ name: String) -> ConfigKey<Settings>? { keys.first { $0.name == name } }

  /// Sets one key from its text.
  ///
  /// - Throws: `ConfigError` at `source:line`: an unknown key (listing the known ones; the
  ///   section named with its `title`, as in `[device "tablet"]`, when it has one) or the
  ///   key's own reason.
  public func set(
    _ name: String, _ text: String, in settings: inout Settings, source: String, line: Int,
    title: String? = nil
  ) throws(ConfigError) {
    guard let key = key(name) else {
      let header = title.map { "[\(section) \"\($0)\"]" } ?? "[\(section)]"
      throw ConfigError(
        source: source, line: line,
        reason: "unknown key '\(name)' in \(header) (known: "
          + names.joined(separator: ", ") + ")")
    }
    do {
      try key.set(text, in: &settings, origin: "\(source):\(line)")
    } catch {
      throw ConfigError(source: source, line: line, reason: error.reason)
    }
  }

  /// Checks the relations between keys.
  public func validate(_ settings: Settings) throws(ConfigValueError) { try check(settings) }

  /// Applies a section's entries in order, then checks the relations between keys; `title`
  /// is the section's argument (`[device "tablet"]`), for the messages.
  ///
  /// - Throws: `ConfigError` at the entry's line, or at the header for conflicting values.
  public func apply(
    _ section: ConfigFile.Section, to settings: inout Settings, source: String,
    title: String? = nil
  ) throws(ConfigError) {
    for entry in section.entries {
      try set(
        entry.key, entry.value, in: &settings, source: source, line: entry.line, title: title)
    }
    do {
      try check(settings)
    } catch {
      throw ConfigError(source: source, line: section.line, reason: error.reason)
    }
  }

  /// Applies every section of `file` with this table's name, in order.
  public func read(_ file: ConfigFile, into settings: inout Settings) throws(ConfigError) {
    for section in file.sections(named: self.section) {
      try apply(section, to: &settings, source: file.source)
    }
  }

  /// One line per key: `name = default` and what it accepts and does, as the reference.
  public func reference(defaults: Settings) -> [String] {
    keys.map { key in
      "\(key.name) = \(key.value(in: defaults))".padding(to: 36) + " # \(key.accepts): "
        + key.summary
    }
  }

  /// The same table on a value that holds `Settings` at `path`.
  public func lifted<Root>(_ path: WritableKeyPath<Root, Settings> & Sendable) -> ConfigTable<Root>
  {
    let check = self.check
    return ConfigTable<Root>(
      section: section, keys: keys.map { $0.lifted(path) },
      check: { (root: Root) throws(ConfigValueError) in try check(root[keyPath: path]) })
  }
}

extension String {
  /// Padded with blanks to at least `width` characters.
  func padding(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
