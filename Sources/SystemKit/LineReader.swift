import Glibc

/// Reads a file or pipe line by line through a fixed buffer, so huge inputs stream.
///
/// Lines end with `\n` (the newline is not part of the line); a last line without a newline is
/// still returned. A line longer than `maxLineLength` is an error rather than a reason to grow
/// the buffer without bound.
public struct LineReader {
  /// Why reading stopped.
  public enum Failure: Error, CustomStringConvertible {
    /// `read(2)` failed.
    case system(SystemError)
    /// The line with this 1-based number is longer than the limit.
    case lineTooLong(line: Int, limit: Int)

    /// A message for the user.
    public var description: String {
      switch self {
      case .system(let error): return error.description
      case .lineTooLong(let line, let limit):
        return "line \(line) is longer than \(limit) bytes"
      }
    }
  }

  private let file: FileDescriptor
  /// The longest line accepted, in bytes.
  public let maxLineLength: Int
  private var buffer: [UInt8]
  private var start = 0
  private var end = 0
  private var atEnd = false
  /// The 1-based number of the line last returned.
  public private(set) var lineNumber = 0

  /// Creates a reader over an open descriptor (which stays owned by the caller's object).
  ///
  /// - Parameters:
  ///   - file: the descriptor to read from (a blocking or non-blocking one).
  ///   - maxLineLength: the longest line accepted, in bytes.
  ///   - bufferSize: bytes read per `read(2)`; at least `maxLineLength + 1`.
  public init(_ file: FileDescriptor, maxLineLength: Int = 4096, bufferSize: Int = 65536) {
    self.file = file
    self.maxLineLength = maxLineLength
    buffer = [UInt8](repeating: 0, count: max(bufferSize, maxLineLength + 1))
  }

  /// Returns the next line, or `nil` at end of input.
  ///
  /// - Parameter beforeBlocking: called before each `read(2)` that may wait for more input
  ///   (flush output there, so a pipeline stays interactive).
  /// - Throws: `Failure` for a read error or an over-long line.
  public mutating func nextLine(beforeBlocking: () -> Void = {}) throws(Failure) -> ArraySlice<
    UInt8
  >? {
    while true {
      if let newline = buffer[start..<end].firstIndex(of: 0x0A) {
        let line = buffer[start..<newline]
        start = newline + 1
        return try deliver(line)
      }
      if end - start > maxLineLength {
        throw .lineTooLong(line: lineNumber + 1, limit: maxLineLength)
      }
      if atEnd {
        guard start < end else { return nil }
        let line = buffer[start..<end]
        start = end
        return try deliver(line)
      }
      // Make room at the end, then read more.
      if start > 0 {
        let count = end - start
        buffer.withUnsafeMutableBufferPointer { raw in
          guard let base = raw.baseAddress else { return }
          memmove(base, base + start, count)
        }
        start = 0
        end = count
      }
      beforeBlocking()
      let n = try readMore()
      if n == 0 { atEnd = true } else { end += n }
    }
  }

  private mutating func deliver(_ line: ArraySlice<UInt8>) throws(Failure) -> ArraySlice<UInt8> {
    lineNumber += 1
    if line.count > maxLineLength {
      throw .lineTooLong(line: lineNumber, limit: maxLineLength)
    }
    return line
  }

  private mutating func readMore() throws(Failure) -> Int {
    let from = end
    while true {
      let file = self.file
      let outcome = buffer.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) -> Int? in
          try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[from...]))
        }
      }
      let result: Int?
      switch outcome {
      case .success(let n): result = n
      case .failure(let error): throw .system(error)
      }
      if let result { return result }
      // A non-blocking descriptor with nothing yet: wait for it.
      var pfd = pollfd(fd: file.rawValue, events: Int16(POLLIN), revents: 0)
      _ = poll(&pfd, 1, -1)
    }
  }
}
