import OrientCore
import SystemKit
import Testing

@testable import orientd_rotate

@Suite struct RotateOptionsTests {
  @Test func fullCommandLine() throws {
    let options = try RotateOptions.parse(arguments: [
      "--output", "eDP-1", "--backend=x11", "--touch", "Wacom Pen", "--when", "tablet",
      "--exec", "echo a", "--exec-before", "echo b", "--natural", "right-up", "--settle", "250",
      "--json", "-v",
    ])
    var expected = RotateOptions()
    expected.output = "eDP-1"
    expected.backend = .x11
    expected.touch = ["Wacom Pen"]
    expected.policy = .tablet
    expected.after = ["echo a"]
    expected.before = ["echo b"]
    expected.natural = .rightUp
    expected.settleMilliseconds = 250
    expected.json = true
    expected.verbose = true
    #expect(options == .rotate(expected))
  }

  @Test func lockRequests() throws {
    var lock = RotateOptions()
    lock.lockRequest = .toggle
    #expect(try RotateOptions.parse(arguments: ["--toggle-lock"]) == .rotate(lock))
  }

  @Test(arguments: [
    ["--backend", "gnome"], ["--when", "sometimes"],
    ["--natural", "undefined"], ["--settle", "-1"],
    ["--lock", "--unlock"], ["--lock", "--output", "eDP-1"],
    ["--touch-only"], ["--bogus"], ["stray"],
  ])
  func mistakesAreUsageErrors(arguments: [String]) {
    #expect(throws: UsageError.self) { try RotateOptions.parse(arguments: arguments) }
  }
}
