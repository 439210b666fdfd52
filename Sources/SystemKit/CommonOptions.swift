/// The options every mode of every executable takes, read by `ArgumentCursor.scan`.
public struct CommonOptions: Equatable, Sendable {
  /// `--help` or `-h`: print the usage and exit 0.
  public var help = false
  /// `--version`: print the version and exit 0.
  public var version = false
  /// `-v` or `--verbose`: log debug messages.
  public var verbose = false

  /// Nothing asked.
  public init() {}
}

extension ArgumentCursor {
  /// One argument as a mode's parser sees it.
  public struct Argument: Sendable {
    /// The argument as written (`--config=/etc/orientd.conf`).
    public var text: String
    /// The option's name (`--config`), or the whole argument.
    public var name: String
    /// The part after `=` of `--option=value`.
    public var inline: String?
  }

  /// Reads the remaining arguments: the common options here, every other one through `option`
  /// (which may take its value from the cursor), so that each mode's parser lists only its
  /// own options.
  ///
  /// - Parameters:
  ///   - stopAtHelp: return as soon as `--help` or `--version` is read (the subcommands);
  ///     `false` reads on, so a stray argument after them is still an error (orientd's modes).
  ///   - takesVerbose: whether this mode has `-v`; if not, `-v` goes to `option` like any
  ///     other argument (and is rejected there).
  ///   - option: reads one argument of the mode, or throws for one it does not take.
  /// - Throws: `UsageError` from `option`, or for `--version=X` or `--verbose=X`.
  public mutating func scan(
    stopAtHelp: Bool = true, takesVerbose: Bool = true,
    _ option: (_ argument: Argument, _ cursor: inout ArgumentCursor) throws(UsageError) -> Void
  ) throws(UsageError) -> CommonOptions {
    var common = CommonOptions()
    while let text = next() {
      let (name, inline) = ArgumentCursor.split(text)
      switch name {
      case "--help", "-h":
        common.help = true
        if stopAtHelp { return common }
      case "--version":
        try ArgumentCursor.noValue(name, inline)
        common.version = true
        if stopAtHelp { return common }
      case "-v",
        "--verbose" where takesVerbose:
        try ArgumentCursor.noValue(name, inline)
        common.verbose = true
      default:
        try option(Argument(text: text, name: name, inline: inline), &self)
      }
    }
    return common
  }
}
