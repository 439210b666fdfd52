import OrientCore
import ScreenRotation
import Testing

/// The rotation suggestion's state machine (orientd rotate --suggest).
@Suite struct SuggestionTests {
  func offer(_ actions: [RotationSuggestion.Action]) -> RotationSuggestion.Offer? {
    for case .show(let offer) in actions { return offer }
    return nil
  }

  @Test func onlyWhileLockedAndDifferent() {
    var machine = RotationSuggestion(timeout: 5)
    #expect(machine.update(orientation: .leftUp, shown: .normal, locked: false, at: 0).isEmpty)
    #expect(machine.update(orientation: .normal, shown: .normal, locked: true, at: 0).isEmpty)
    let shown = offer(machine.update(orientation: .leftUp, shown: .normal, locked: true, at: 1))
    #expect(shown?.orientation == .leftUp && shown?.deadline == 6)
    #expect(
      machine.update(orientation: .leftUp, shown: .normal, locked: true, at: 2).isEmpty,
      "the same offer is not shown again")
  }

  @Test func acceptRotatesOnce() throws {
    var machine = RotationSuggestion()
    let shown = try #require(
      offer(machine.update(orientation: .rightUp, shown: .normal, locked: true, at: 0)))
    #expect(machine.accept(shown.id) == [.rotate(.rightUp)])
    #expect(machine.accept(shown.id).isEmpty, "once")
    #expect(machine.offer == nil)
  }

  @Test func itGoesAway() throws {
    var machine = RotationSuggestion(timeout: 5)
    let first = try #require(
      offer(machine.update(orientation: .leftUp, shown: .normal, locked: true, at: 0)))
    #expect(
      machine.update(orientation: .normal, shown: .normal, locked: true, at: 1) == [
        .withdraw(id: first.id, reason: "the device turned back to what the screen shows")
      ])
    let second = try #require(
      offer(machine.update(orientation: .bottomUp, shown: .normal, locked: true, at: 2)))
    #expect(machine.expire(second.id) == [.withdraw(id: second.id, reason: "no answer within 5 s")])
    let third = try #require(
      offer(machine.update(orientation: .leftUp, shown: .normal, locked: true, at: 3)))
    let replaced = machine.update(orientation: .rightUp, shown: .normal, locked: true, at: 4)
    #expect(replaced.first == .withdraw(id: third.id, reason: "the device turned to right-up"))
    #expect(offer(replaced)?.orientation == .rightUp)
    let fourth = try #require(machine.offer)
    #expect(
      machine.update(orientation: .rightUp, shown: .normal, locked: false, at: 5) == [
        .withdraw(id: fourth.id, reason: "rotation unlocked")
      ])
    let fifth = try #require(
      offer(machine.update(orientation: .leftUp, shown: .normal, locked: true, at: 6)))
    machine.dismissed(fifth.id)
    #expect(machine.offer == nil && machine.accept(fifth.id).isEmpty)
  }
}
