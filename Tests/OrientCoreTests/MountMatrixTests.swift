import Testing

@testable import OrientCore

@Suite struct MountMatrixTests {
  @Test(arguments: [
    ("1, 0, 0; 0, 1, 0; 0, 0, 1", [1.0, 0, 0, 0, 1, 0, 0, 0, 1]),
    ("0, 1, 0; -1, 0, 0; 0, 0, 1\n", [0.0, 1, 0, -1, 0, 0, 0, 0, 1]),
    ("0,-1,0;1,0,0;0,0,1", [0.0, -1, 0, 1, 0, 0, 0, 0, 1]),
    ("-0, 1, 0; 1, -0, 0; 0, 0, -1", [0.0, 1, 0, 1, 0, 0, 0, 0, -1]),
    (
      "0.7071, -0.7071, 0; 0.7071, 0.7071, 0; 0, 0, +1",
      [0.7071, -0.7071, 0, 0.7071, 0.7071, 0, 0, 0, 1]
    ),
  ])
  func parsesKernelAndHwdbForms(text: String, expected: [Double]) throws {
    #expect(try MountMatrix(parsing: text).entries == expected)
  }

  @Test(arguments: [
    ("1, 0, 0; 0, 1, 0", "expected 3 rows"),
    ("1, 0; 0, 1, 0; 0, 0, 1", "row 1 has 2 values"),
    ("1, 0, 0; 0, x, 0; 0, 0, 1", "row 2 value 2 'x' is not a decimal number"),
    ("1, 0, 0; 0, 1, 0; 0, 0, nan", "not a finite number"),
    ("1, 0, 0; 0, 1, 0; 0, 0, 1e999", "not a finite number"),
    ("1, 0, 0; 0, 0, 0; 0, 0, 1", "row 2 is all zeros"),
    ("1, 0, 0; 0, 1, 0; 0, 0, ", "row 3 value 3 '' is empty value"),
  ])
  func rejectsWithAReasonQuotingTheInput(text: String, reason: String) {
    #expect {
      _ = try MountMatrix(parsing: text)
    } throws: { error in
      guard let error = error as? MountMatrixError else { return false }
      return error.reason.contains(reason) && error.description.contains("\"\(error.input)\"")
    }
  }

  @Test func appliesAsMatrixTimesRawVector() throws {
    let m = try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")
    #expect(m.apply(Vector3(1, 2, 3)) == Vector3(2, -1, 3))
    #expect(MountMatrix.identity.apply(Vector3(1, 2, 3)) == Vector3(1, 2, 3))
    #expect(m.description == "0, 1, 0; -1, 0, 0; 0, 0, 1")
  }

  @Test(arguments: [
    "0, 1, 0; -1, 0, 0; 0, 0, 1", "0.7071, -0.7071, 0; 0.7071, 0.7071, 0; 0, 0, 1",
    "-1, 0, 0; 0, 1, 0; 0, 0, -1", "2, 0, 0; 0, 0.5, 0; 0, 0, 1",
  ])
  func inverseUndoesTheMatrix(text: String) throws {
    let m = try MountMatrix(parsing: text)
    let inverse = try #require(m.inverse)
    let v = Vector3(1.5, -9.8, 0.25)
    let back = inverse.apply(m.apply(v))
    #expect(abs(back.x - v.x) < 1e-9 && abs(back.y - v.y) < 1e-9 && abs(back.z - v.z) < 1e-9)
  }

  @Test func aSingularMatrixHasNoInverse() throws {
    #expect(try MountMatrix(parsing: "1, 0, 0; 1, 0, 0; 0, 0, 1").inverse == nil)
  }
}
