/// One section of a configuration file as a whole file sees it: its header, its keys and how
/// it is read into the configuration value `Root`.
public struct ConfigSection<Root>: Sendable {
  /// The section name (`device`).
  public let name: String
  /// The header as written (`[sampling]`, `[device "NAME"]`).
  public let header: String
  /// The key names, in order.
  public let keys: [String]
  /// The reference lines (`key = default  # accepts: summary`).
  public let reference: [String]
  private let apply: @Sendable (inout Root, ConfigFile.Section, String) throws(ConfigError) -> Void

  /// A section that appears at most once in meaning (repeats apply in order), without an
  /// argument, read into `path`.
  public static func single<Settings>(
    _ table: ConfigTable<Settings>, at path: WritableKeyPath<Root, Settings> & Sendable,
    defaults: Settings
  ) -> ConfigSection {
    ConfigSection(
      name: table.section, header: "[\(table.section)]", keys: table.names,
      reference: table.reference(defaults: defaults),
      apply: {
        (root: inout Root, section: ConfigFile.Section, source: String) throws(ConfigError) in
        if let argument = section.argument {
          throw ConfigError(
            source: source, line: section.line,
            reason: "[\(section.name)] takes no argument (found \"\(argument)\")")
        }
        try table.apply(section, to: &root[keyPath: path], source: source)
      })
  }

  /// A section written once per thing (`[device "NAME"]`): each makes an element, appended
  /// to `path`.
  ///
  /// - Parameters:
  ///   - argument: how the header's argument is spelt in the reference (`NAME`).
  ///   - make: a fresh element for the argument and the header's `path:line`.
  ///   - complete: checks an element once its section is read (reported at the header).
  public static func repeated<Element>(
    _ table: ConfigTable<Element>, argument: String,
    at path: WritableKeyPath<Root, [Element]> & Sendable,
    make: @escaping @Sendable (String, String) -> Element,
    complete: @escaping @Sendable (Element) throws(ConfigValueError) -> Void
  ) -> ConfigSection {
    let name = table.section
    return ConfigSection(
      name: name, header: "[\(name) \"\(argument)\"]", keys: table.names,
      reference: table.keys.map {
        "\($0.name) = ".padding(to: 36) + " # \($0.accepts): \($0.summary)"
      },
      apply: {
        (root: inout Root, section: ConfigFile.Section, source: String) throws(ConfigError) in
        guard let title = section.argument, !title.isEmpty else {
          throw ConfigError(
            source: source, line: section.line,
            reason: "a \(name) section needs a \(argument.lowercased()): "
              + "[\(name) \"my-\(argument.lowercased())\"]")
        }
        var element = make(title, "\(source):\(section.line)")
        try table.apply(section, to: &element, source: source, title: title)
        do {
          try complete(element)
        } catch {
          // `error` is a ConfigValueError, whose description is its reason.
          throw ConfigError(source: source, line: section.line, reason: "\(error)")
        }
        root[keyPath: path].append(element)
      })
  }

  /// The same section on a value that holds `Root` at `path`.
  public func lifted<Outer>(_ path: WritableKeyPath<Outer, Root> & Sendable) -> ConfigSection<Outer>
  {
    let apply = self.apply
    return ConfigSection<Outer>(
      name: name, header: header, keys: keys, reference: reference,
      apply: {
        (outer: inout Outer, section: ConfigFile.Section, source: String) throws(ConfigError) in
        try apply(&outer[keyPath: path], section, source)
      })
  }

  /// Reads one section of the file into `root`.
  public func read(_ section: ConfigFile.Section, into root: inout Root, source: String)
    throws(ConfigError)
  {
    try apply(&root, section, source)
  }
}

/// Every section a configuration file may have: reading a whole file, the known sections in
/// messages, and the reference.
public struct ConfigSchema<Root>: Sendable {
  /// The sections, in documentation order.
  public let sections: [ConfigSection<Root>]

  /// Declares the sections.
  public init(_ sections: [ConfigSection<Root>]) { self.sections = sections }

  /// The section names.
  public var names: [String] { sections.map(\.name) }

  /// Reads every section of `file` into `root` (start from the defaults: a section the file
  /// does not have keeps its defaults, so a reload never keeps a removed value).
  ///
  /// - Throws: `ConfigError` at `path:line` for an entry outside any section, an unknown
  ///   section (listing the known ones) or anything a section rejects.
  public func read(_ file: ConfigFile, into root: inout Root) throws(ConfigError) {
    let headers = sections.map(\.header)
    let known = headers.dropLast().joined(separator: ", ") + " or " + (headers.last ?? "")
    for section in file.sections {
      if section.name.isEmpty {
        throw ConfigError(
          source: file.source, line: section.entries.first?.line ?? 0,
          reason: "'\(section.entries.first?.key ?? "")' is outside any section; put it under "
            + known)
      }
      guard let rule = sections.first(where: { $0.name == section.name }) else {
        throw ConfigError(
          source: file.source, line: section.line,
          reason: "unknown section [\(section.name)] (known: \(headers.joined(separator: ", ")))")
      }
      try rule.read(section, into: &root, source: file.source)
    }
  }

  /// The reference: every section, every key with its default, what it accepts and does.
  public var reference: String {
    sections.map { section in
      ([section.header] + section.reference).joined(separator: "\n")
    }.joined(separator: "\n\n") + "\n"
  }
}
