import Glibc
import SystemKit

extension ProgramRunner {
  /// `run(_:environment:)` with its failures as `RotateError`: a program that cannot be
  /// started is 69 (missing), a pipe that cannot be made 71.
  static func runHelper(_ arguments: [String], environment: [String: String] = [:])
    throws(RotateError) -> Outcome
  {
    do {
      return try run(arguments, environment: environment)
    } catch  where error.operation == "pipe" {
      throw RotateError(
        .osError, "cannot create a pipe for \(arguments[0]): \(error.reason)")
    } catch {
      throw RotateError(
        .unavailable, "cannot run \(arguments[0]): \(error.reason) (is it installed and on PATH?)")
    }
  }
}

/// strerror(errno).
func errnoText() -> String { String(cString: strerror(errno)) }
