/// Output keys renamed from camelCase to snake_case, and their old spelling kept for a release.
///
/// orientd and orientcam 0.1 wrote some JSON keys in camelCase (`mountMatrix`, `burstIndex`);
/// from 0.2 every key is snake_case, the casing of `orientd --watch --json`. Scripts written
/// against 0.1 keep working through 0.2: each renamed key is written a second time under its
/// 0.1 spelling, after the object's other members. The old spellings go away in 0.3.
public struct DeprecatedKeys: Sendable {
  /// The release that stops writing the old spellings.
  public static let removedIn = "0.3"

  /// The snake_case keys that had a camelCase spelling in 0.1.
  public let renamed: Set<String>

  /// Creates the set of renamed keys (their snake_case spelling).
  public init(_ renamed: Set<String>) {
    self.renamed = renamed
  }

  /// The 0.1 spelling of a snake_case key: `mount_matrix_source` -> `mountMatrixSource`.
  public static func camelCase(_ key: String) -> String {
    var words = key.split(separator: "_", omittingEmptySubsequences: false)
    guard let first = words.first else { return key }
    words.removeFirst()
    return String(first) + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
  }

  /// `value` with every object member whose key is in `renamed`, at any depth, also written
  /// under its camelCase spelling (the same value, itself with aliases) at the end of its
  /// object. A member of that spelling already in the object is not written twice.
  public func addingAliases(to value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements):
      return .array(elements.map(addingAliases(to:)))
    case .object(let members):
      let converted = members.map { ($0.0, addingAliases(to: $0.1)) }
      var keys = Set(converted.map(\.0))
      var aliases: [(String, JSONValue)] = []
      for (key, member) in converted where renamed.contains(key) {
        let old = DeprecatedKeys.camelCase(key)
        guard old != key, keys.insert(old).inserted else { continue }
        aliases.append((old, member))
      }
      return .object(converted + aliases)
    default:
      return value
    }
  }
}
