/// The help texts of `orientcam session` and `orientcam layout`.
public enum SessionUsage {
  /// `orientcam session --help`.
  public static let session = """
    usage: orientcam session [capture options] [session options]

    Keeps the camera (or pattern, or files) open and takes a photo per trigger, each turned,
    tagged and written exactly as `orientcam capture` does, with a live preview window whose
    overlay controls follow the way the device is held.

    triggers (each takes --burst photos):
      Enter on stdin, SIGUSR1, a click or touch on a capture button, Enter or Space in the
      window, and with --shutter-keys the keys named there. q on stdin, SIGUSR2, SIGTERM,
      SIGINT, Escape/q in the window or closing it end the session cleanly.

    session options:
      --shutter-keys K[,K...]       take photos with these keys (volumeup,volumedown,camera):
                                    the devices that have them are grabbed, so the volume does
                                    not change; their other keys are passed on through uinput
      --shutter-device PATH         use this /dev/input/eventN instead of scanning (repeatable)
      --burst N                     photos per trigger (default 1)
      --count N                     end after N photos
      --headless                    no preview window
      --overlay FILE                overlay controls (default: built-in; see orientcam layout)
      --preview-size WxH            preview size (default: the frame, scaled to fit 960x960)
      --fullscreen                  fill the screen with the preview
      --fps N                       preview refresh and window input rate (default 15)

    All capture options apply (orientcam capture --help): --source, --resolution, --format,
    --skip, --orientation, --orientation-from, --orientation-fallback, --sensor-rotation,
    --mirror, --rotate, --lossless, --quality, -o, --force, --json, -v. With
    --orientation-from -, stdin carries both: JSON lines set the orientation, an empty line
    takes a photo, q ends.

    With --json every line on stdout is one event: ready, photo (with timings.triggerToFileMs),
    orientation (with the new layout), press, status, error, end.

    A photo that cannot be written (disk full, read-only folder) is an error event and the
    session goes on. A source that stops delivering (camera unplugged, replayed file gone)
    ends it: error and end events (reason "error", the photos kept), exit status 69 for a
    camera that went away, 66 for a missing file, 74 for an I/O error.
    """

  /// `orientcam layout --help`.
  public static let layout = """
    usage: orientcam layout --size WxH [--orientation O] [--overlay FILE] [--json]
                            [--render OUT.png|OUT.jpg [--upright]] [--print-overlay]

    Lays out the overlay for a preview of WxH pixels on a device held O (normal, left-up,
    bottom-up, right-up): every control's box on the preview and in the user's view, and how
    far its content is turned so text reads upright. Controls that overlap or leave the preview
    are reported (exit status 65). --render draws it over the test pattern (as the preview
    shows it; --upright: as the user sees it). --print-overlay prints the overlay file (the
    built-in one unless --overlay), a starting point for your own.
    """
}
