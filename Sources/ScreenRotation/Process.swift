import Glibc
import SystemKit

extension ProgramRunner {
  /// `run(_:environment:)` with its failures as `RotateError` (see `rotateError`).
  static func runHelper(_ arguments: [String], environment: [String: String] = [:])
    throws(RotateError) -> Outcome
  {
    do {
      return try run(arguments, environment: environment)
    } catch {
      throw rotateError(error.step, error.error, arguments[0])
    }
  }

  /// `spawn(_:environment:output:errors:)` with its failure as `RotateError`.
  static func spawnHelper(
    _ arguments: [String], environment: [String: String] = [:], output: Int32, errors: Int32
  ) throws(RotateError) -> pid_t {
    do {
      return try spawn(arguments, environment: environment, output: output, errors: errors)
    } catch {
      throw rotateError(.start, error, arguments[0])
    }
  }

  /// A program that cannot be started is 69 (missing), a pipe that cannot be made 71.
  private static func rotateError(
    _ step: ProgramRunner.Failure.Step, _ error: SystemError, _ program: String
  ) -> RotateError {
    if step == .pipe {
      return RotateError(.osError, "cannot create a pipe for \(program): \(error.reason)")
    }
    return RotateError(
      .unavailable, "cannot run \(program): \(error.reason) (is it installed and on PATH?)")
  }
}

/// strerror(errno).
func errnoText() -> String { String(cString: strerror(errno)) }
