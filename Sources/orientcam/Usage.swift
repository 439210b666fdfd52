/// The help texts.
enum Usage {
  /// `orientcam --help`.
  static let main = """
    usage: orientcam COMMAND [options]

    Photos that come out upright however the device is held, from a V4L2 or libcamera camera,
    the built-in test pattern or JPEG files, turned from orientd's orientation, with correct
    EXIF.

    commands:
      capture    take photos (orientcam capture --help)
      session    keep the camera open: a photo per trigger (Enter, SIGUSR1, volume keys,
                 the preview's shutter button), live preview with overlay controls
      layout     lay out (and render) the overlay for an orientation and preview size
      list       show the cameras, V4L2 and libcamera: device or id, formats, largest size,
                 front/back, the sensor's mounting
      inspect    show a JPEG's size, EXIF Orientation and, for test-pattern photos, which way
                 the pattern is turned

      --help     this text (COMMAND --help for a command)
      --version  the version

    exit status: 0 done, 64 usage, 65 bad data, 66 missing input, 69 camera or orientd
    unavailable, 70 internal, 73 cannot create the photo, 74 write or camera I/O error
    """

  /// `orientcam capture --help`.
  static let capture = """
    usage: orientcam capture [options]

    source:
      --source v4l2[:/dev/videoN]   a camera (default: the first capture device)
               libcamera[:ID]       a camera through libcamera (phones, ISPs, IPU3 laptops):
                                    an id from orientcam list, or its number N from 1
                                    (default: libcamera's first camera)
               pattern[:ORIENT]     the test pattern, as a camera in a device held as the
                                    capture believes (or held ORIENT)
               file:PATH            JPEG file(s) replayed as camera frames; PATH may be a glob
      --resolution WxH              frame size (default: the largest offered)
      --format F[,F...]             formats to accept, in order of preference (default:
                                    mjpeg,jpeg,yuyv,nv12,rgb24,bgr24); sets the pattern's format.
                                    Named by their bytes in memory: through libcamera, rgb24 is
                                    its BGR888 and bgr24 its RGB888
      --skip N                      warm-up frames to drop (default 3 for cameras, else 0)
      --count N                     photos to take (default 1; for file: every matched file)
      --min-resolution WxH          refuse, before streaming, a camera whose largest size is
                                    below WxH (the front-camera guard), and name those that pass

    orientation:
      --orientation auto|NAME       auto (default): ask orientd on the system bus; or force
                                    normal, left-up, bottom-up, right-up
      --orientation-from -|FILE     use the latest line of `orientd --watch --json` output;
                                    malformed lines are skipped with a warning
      --orientation-fallback NAME   use NAME when orientd cannot be reached
      --sensor-rotation DEG         the camera's mounting correction, clockwise (default: the
                                    driver's V4L2_CID_CAMERA_SENSOR_ROTATION or libcamera's
                                    Rotation, else 0); with libcamera, what its pipeline already
                                    turned or flipped is taken into account either way
      --mirror                      a front camera: turn the other way for left-up and right-up
                                    and mirror the upright photo left-right (libcamera cameras
                                    whose Location is front are taken so without it)

    rotation and output:
      --rotate both|pixels|exif|none
                                    both (default): upright pixels and Orientation=1;
                                    pixels: upright pixels, no tag; exif: pixels as captured and
                                    the Orientation tag; none: as captured, no tag
      --lossless reencode|trim|strict
                                    JPEG frames are turned losslessly; when the size is not a
                                    multiple of the JPEG block size: reencode (default) keeps
                                    every pixel, trim drops the partial edge blocks, strict
                                    refuses. Which one happened is reported.
      --quality N                   JPEG quality 1-100 (default 90)
      -o, --output TEMPLATE         file name with strftime fields, {n} (first free number)
                                    and {orientation} (default %Y%m%d-%H%M%S-{n}.jpg)
      --force                       replace an existing file (otherwise refused)
      --json                        one JSON object per photo: path, size, orientation, how it
                                    was turned, timings
      -v, --verbose                 more detail on stderr

    Photos are written atomically: never a partial file, never an overwritten photo unless
    --force. Without --json each photo's path is printed on stdout.
    """

  /// `orientcam list --help`.
  static let list = """
    usage: orientcam list [--json]

    Every V4L2 capture device with its driver, card name, bus, formats and sizes, the largest
    size, and front/back when the driver (V4L2_CID_CAMERA_ORIENTATION) or the firmware (ACPI
    _PLD panel) says so; then every libcamera camera (libcamera:ID) with its model, formats and
    sizes, its Location (front/back/external) and Rotation. The V4L2 nodes libcamera drives are
    shown under its camera, not listed again on their own. With --json each entry's `source`
    is what --source takes.
    """

  /// `orientcam inspect --help`.
  static let inspect = """
    usage: orientcam inspect FILE... [--json]

    A JPEG's size, subsampling, EXIF Orientation, Make/Model and capture time, and for photos of
    the test pattern, how the pattern is turned (none = upright).
    """
}

/// The help texts of `orientcam session` and `orientcam layout`.
enum SessionUsage {
  /// `orientcam session --help`.
  static let session = """
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

    With --json every line on stdout is one event: ready, photo (with timings.trigger_to_file_ms),
    orientation (with the new layout), press, status, error, end.

    A photo that cannot be written (disk full, read-only folder) is an error event and the
    session goes on. A source that stops delivering (camera unplugged, replayed file gone)
    ends it: error and end events (reason "error", the photos kept), exit status 69 for a
    camera that went away, 66 for a missing file, 74 for an I/O error.
    """

  /// `orientcam layout --help`.
  static let layout = """
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
