import JSON
import TestSupport
import TestThreads
import Testing

/// `orientd-face detect` on real photographs turned four ways, and on pictures without a face.
@Suite(
  .ownThreads,
  .enabled(if: runsInCI || Photos.available, "the photographs or Pillow are not installed"))
struct DetectTests {
  @Test(arguments: [Photos.astronaut, Photos.hopper])
  func theHeadIsFoundInEveryQuarterTurn(photo: String) throws {
    let directory = try TemporaryDirectory("face-detect")
    // Turned clockwise, the head goes from the top edge to the right, bottom, left.
    let expected = [0: "top", 90: "right", 180: "bottom", 270: "left"]
    var files: [String] = []
    for degrees in [0, 90, 180, 270] {
      let file = directory.file("turned-\(degrees).jpg")
      try Photos.turned(photo, degrees: degrees, to: file, logs: directory)
      files.append(file)
    }
    let result = try orientdFace(["detect", "--json"] + files, in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try jsonLines(result.stdout)
    try #require(lines.count == 4, "\(result.stdout)")
    for (degrees, line) in zip([0, 90, 180, 270], lines) {
      #expect(line["file"] == .string(directory.file("turned-\(degrees).jpg")))
      #expect(line["faces"] == .number(1), "\(photo) turned \(degrees): \(line)")
      #expect(
        line["head_toward"] == .string(expected[degrees] ?? ""),
        "\(photo) turned \(degrees): \(line)")
    }
  }

  @Test func thePNGItselfIsRead() throws {
    let directory = try TemporaryDirectory("face-detect")
    let result = try orientdFace(["detect", Photos.astronaut], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "\(Photos.astronaut): 1 face, head toward top\n")
  }

  @Test func picturesWithoutAFaceAreSilentInEveryTurn() throws {
    let directory = try TemporaryDirectory("face-detect")
    var files: [String] = []
    for (index, photo) in Photos.noFace.enumerated() {
      for degrees in [0, 90, 180, 270] {
        let file = directory.file("none-\(index)-\(degrees).jpg")
        try Photos.turned(photo, degrees: degrees, to: file, logs: directory)
        files.append(file)
      }
    }
    let result = try orientdFace(["detect", "--json"] + files, in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try jsonLines(result.stdout)
    #expect(lines.count == files.count)
    for line in lines {
      #expect(line["faces"] == .number(0) && line["head_toward"] == .null, "\(line)")
    }
  }

  @Test func badFilesAreNamedAndTheOthersStillRun() throws {
    let directory = try TemporaryDirectory("face-detect")
    try writeFile(directory.file("notes.txt"), "not a picture\n")
    try writeFile(directory.file("cut.jpg"), [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10])
    let missing = try orientdFace(
      ["detect", directory.file("gone.jpg"), Photos.hopper], in: directory)
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("\(directory.file("gone.jpg")): cannot open (No such file"))
    #expect(missing.stdout.contains("head toward top"), "the other file still ran")
    let text = try orientdFace(["detect", directory.file("notes.txt")], in: directory)
    #expect(text.status == 65)
    #expect(text.stderr.contains("\(directory.file("notes.txt")): not a JPEG, PNG or BMP image"))
    let cut = try orientdFace(["detect", directory.file("cut.jpg")], in: directory)
    #expect(cut.status == 65 && cut.stderr.contains("cut.jpg: not a readable JPEG"), "\(cut)")
    let folder = try orientdFace(["detect", directory.path], in: directory)
    #expect(folder.status == 66 && folder.stderr.contains("not a regular file"))
  }

  @Test func usageHelpAndVersion() throws {
    let directory = try TemporaryDirectory("face-detect")
    let help = try orientdFace(["--help"], in: directory)
    #expect(help.status == 0 && help.stdout.contains("orientd-face detect [--json] FILE..."))
    let version = try orientdFace(["--version"], in: directory)
    #expect(version.status == 0 && version.stdout.hasPrefix("orientd-face "))
    for arguments in [
      [], ["detect"], ["detect", "--jsn", "a.jpg"], ["look"],
      ["resolve", "--current", "normal"],
      ["resolve", "--current", "normal", "--proposed", "normal"],
      ["resolve", "--current", "up", "--proposed", "normal"],
    ] {
      let result = try orientdFace(arguments, in: directory)
      #expect(result.status == 64, "\(arguments): \(result)")
      #expect(result.stderr.contains("Try 'orientd-face --help'"))
    }
  }
}
