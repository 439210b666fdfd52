import SystemKit

/// Why `orientd rotate` could not do something: the message names what, where and what to do,
/// and `status` is the sysexits code the command exits with (69 no compositor / output /
/// protocol, 70 a compositor refused, 74 I/O).
public typealias RotateError = StatusError
