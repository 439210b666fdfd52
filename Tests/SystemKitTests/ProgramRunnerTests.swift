import SystemKit
import TestThreads
import Testing

/// The one spawn-and-capture helper (rotate's hooks and wlr-randr, calibrate's udevadm).
@Suite(.ownThreads) struct ProgramRunnerTests {
  @Test func capturesBothStreamsStatusAndEnvironment() throws {
    let outcome = try ProgramRunner.run(
      ["sh", "-c", "echo \"out $HOOK_VALUE\"; echo err >&2; exit 3"],
      environment: ["HOOK_VALUE": "42"])
    #expect(outcome == ProgramRunner.Outcome(status: 3, output: "out 42\n", errors: "err\n"))
  }

  @Test func aSignalIsReportedAs128PlusItsNumber() throws {
    #expect(try ProgramRunner.run(["sh", "-c", "kill -TERM $$"]).status == 128 + 15)
  }

  @Test func aMissingProgramIsATypedError() {
    #expect {
      _ = try ProgramRunner.run(["orientd-no-such-program"])
    } throws: { error in
      (error as? ProgramRunner.Failure)?.code == .noSuchFileOrDirectory
    }
  }
}
