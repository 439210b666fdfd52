import OrientCore
import SystemKit
import Testing

@testable import orientd

@Suite struct RotateOptionsTests {
  @Test func fullCommandLine() throws {
    let options = try Options(arguments: [
      "rotate", "--output", "eDP-1", "--backend=x11", "--touch", "Wacom Pen", "--when", "tablet",
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
    #expect(options.command == .rotate(expected))
  }

  @Test func lockRequests() throws {
    var lock = RotateOptions()
    lock.lockRequest = .toggle
    #expect(try Options(arguments: ["rotate", "--toggle-lock"]).command == .rotate(lock))
  }

  @Test(arguments: [
    ["rotate", "--backend", "gnome"], ["rotate", "--when", "sometimes"],
    ["rotate", "--natural", "undefined"], ["rotate", "--settle", "-1"],
    ["rotate", "--lock", "--unlock"], ["rotate", "--lock", "--output", "eDP-1"],
    ["rotate", "--touch-only"], ["rotate", "--bogus"], ["rotate", "stray"],
  ])
  func mistakesAreUsageErrors(arguments: [String]) {
    #expect(throws: UsageError.self) { try Options(arguments: arguments) }
  }
}
