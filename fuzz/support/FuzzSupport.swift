// Compiled into every fuzz target (scripts/fuzz.sh): the entry-point glue and invariant checks.

/// Stops the run when an invariant does not hold. The trap makes libFuzzer save the input.
func require(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
  file: StaticString = #file, line: UInt = #line
) {
  if !condition() { fatalError("invariant violated: \(message())", file: file, line: line) }
}

/// The input as bytes.
func inputBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
  guard let data, size > 0 else { return [] }
  return Array(UnsafeBufferPointer(start: data, count: size))
}

/// The input as text, the way a program that reads a file or attribute with
/// `String(decoding:as:)` sees it (invalid UTF-8 becomes U+FFFD).
func inputText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
  String(decoding: inputBytes(data, size), as: UTF8.self)
}

/// Doubles compared by value, with every NaN equal to every NaN (for round trips).
func sameDouble(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }
