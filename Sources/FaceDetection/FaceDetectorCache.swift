import Glibc

/// Where the decoded face detector is cached (`FaceDetector(cachePath:)`).
///
/// The directory is `$CACHE_DIRECTORY` (systemd's `CacheDirectory=`), else
/// `$XDG_CACHE_HOME/orientd`, else `~/.cache/orientd`, else for root `/var/cache/orientd`. It
/// is created (0755) when missing. A directory or file that another user owns, or that others
/// may write, is not used: the detector would deserialise what someone else put there.
public enum FaceDetectorCache {
  /// The file name in the directory.
  public static let fileName = "frontal-face-detector.dat"

  /// The cache file to use, or `nil` when there is no trustworthy place.
  public static func path(environment: [String: String] = currentEnvironment()) -> String? {
    let directory: String
    if let given = environment["CACHE_DIRECTORY"]?.split(separator: ":").first, !given.isEmpty {
      directory = String(given)
    } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
      directory = xdg + "/orientd"
    } else if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
      directory = home + "/.cache/orientd"
    } else if geteuid() == 0 {
      directory = "/var/cache/orientd"
    } else {
      return nil
    }
    guard prepare(directory) else { return nil }
    let file = directory + "/" + fileName
    var status = stat()
    if lstat(file, &status) == 0 {
      guard status.st_mode & S_IFMT == S_IFREG, isTrusted(status) else { return nil }
    }
    return file
  }

  /// Creates `directory` (and its parents) when missing; whether it is there and trusted.
  static func prepare(_ directory: String) -> Bool {
    var status = stat()
    if stat(directory, &status) != 0 {
      var built = ""
      for part in directory.split(separator: "/") {
        built += "/" + part
        if mkdir(built, 0o755) != 0 && errno != EEXIST { return false }
      }
      guard stat(directory, &status) == 0 else { return false }
    }
    return status.st_mode & S_IFMT == S_IFDIR && isTrusted(status)
  }

  /// Owned by this user (or root) and not writable by group or others.
  static func isTrusted(_ status: stat) -> Bool {
    (status.st_uid == geteuid() || status.st_uid == 0) && status.st_mode & 0o022 == 0
  }

  /// This process's environment.
  public static func currentEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    return environment
  }
}
