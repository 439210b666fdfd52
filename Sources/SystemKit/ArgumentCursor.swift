/// Command-line scanning shared by the executables (orientd, orientd-rotate): each keeps its
/// own pure `Options(arguments:)`; these are the pieces they share.

/// A command-line mistake; printed with a pointer to `--help`, exit status 64.
public struct UsageError: Error, Equatable, CustomStringConvertible {
  /// What is wrong.
  public var message: String

  /// Creates an error.
  public init(_ message: String) { self.message = message }

  /// The message.
  public var description: String { message }
}

/// Walks the argument list; options may take their value as the next argument.
public struct ArgumentCursor {
  private var arguments: [String]
  private var index = 0

  /// Creates a cursor at the first argument.
  public init(_ arguments: [String]) { self.arguments = arguments }

  /// The next argument, or `nil` at the end.
  public mutating func next() -> String? {
    guard index < arguments.count else { return nil }
    defer { index += 1 }
    return arguments[index]
  }

  /// The next argument without moving past it, or `nil` at the end.
  public func peek() -> String? { index < arguments.count ? arguments[index] : nil }

  /// The value of `option`: the next argument, which must exist.
  public mutating func value(for option: String) throws(UsageError) -> String {
    guard let value = next() else { throw UsageError("\(option) needs a value") }
    return value
  }

  /// Splits `--option=value` into the option and its inline value; other arguments are
  /// returned whole with no value.
  public static func split(_ argument: String) -> (name: String, inline: String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }

  /// The value of `option`: the inline `--option=value` part, else the next argument.
  public mutating func value(for option: String, inline: String?) throws(UsageError) -> String {
    if let inline { return inline }
    return try value(for: option)
  }

  /// Rejects `--flag=value` for an option that takes no value.
  public static func noValue(_ option: String, _ inline: String?) throws(UsageError) {
    if inline != nil { throw UsageError("\(option) takes no value") }
  }
}
