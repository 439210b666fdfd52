import JSON
import Testing

/// The 0.1 camelCase spellings written beside the snake_case keys for one release.
@Suite struct DeprecatedKeysTests {
  @Test(arguments: [
    ("mount_matrix_source", "mountMatrixSource"), ("pass_on", "passOn"),
    ("trigger_to_frame_ms", "triggerToFrameMs"), ("device", "device"),
  ])
  func camelCaseSpelling(snake: String, camel: String) {
    #expect(DeprecatedKeys.camelCase(snake) == camel)
  }

  @Test func aliasesFollowTheirObjectAtEveryDepthWithTheSameValue() throws {
    let keys = DeprecatedKeys(["shutter_devices", "pass_on", "burst_index"])
    let value = try JSONValue(
      parsing:
        #"{"event":"ready","shutter_devices":[{"path":"/dev/input/event3","pass_on":true}],"burst_index":2}"#
    )
    let expected = try JSONValue(
      parsing:
        #"{"event":"ready","shutter_devices":[{"path":"/dev/input/event3","pass_on":true,"passOn":true}],"burst_index":2,"shutterDevices":[{"path":"/dev/input/event3","pass_on":true,"passOn":true}],"burstIndex":2}"#
    )
    #expect(keys.addingAliases(to: value) == expected)
  }

  @Test func keysNotRenamedAndExistingSpellingsAreLeftAlone() throws {
    let keys = DeprecatedKeys(["chosen_rate", "chosen_mode"])
    let value = try JSONValue(
      parsing: #"{"chosen_mode":"polled","chosenMode":"x","gravity_estimate":1}"#)
    #expect(keys.addingAliases(to: value) == value)
    let plain = try JSONValue(parsing: #"{"chosen_rate":30}"#)
    #expect(
      keys.addingAliases(to: plain)
        == (try JSONValue(parsing: #"{"chosen_rate":30,"chosenRate":30}"#)))
  }
}
