// An LD_PRELOAD library for orientcam's fault-injection tests: makes the filesystem calls that
// AtomicFileWriter uses fail the way a given filesystem or a failing disk makes them fail, so
// a test can run the real binary against conditions the test machine's kernel cannot produce
// (its kernel has no vfat module; no block device fails on request).
//
// ORIENTCAM_FAULTS, a comma-separated list:
//   vfat          open(O_TMPFILE) fails with EOPNOTSUPP and link()/linkat() with EPERM, as on
//                 vfat and exfat (no unnamed files, no hard links)
//   no-noreplace  renameat2() fails with EINVAL (a kernel or filesystem without RENAME_NOREPLACE)
//   dirsync-eio   fsync() of a directory fails with EIO
//   stall-write=N the Nth write(2) of 4 KiB or more to a regular file other than stdout and
//                 stderr (the Nth photo) writes half its bytes, creates the file named by
//                 ORIENTCAM_FAULT_MARKER and then waits forever: the test kills the process there,
//                 in the middle of writing a photo
//
// Built by the tests with `cc -shared -fPIC -o faultfs.so faultfs.c -ldl`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fault_value(const char *name) {
  const char *list = getenv("ORIENTCAM_FAULTS");
  if (!list) return NULL;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
    if ((p == list || p[-1] == ',') && p[n] == '=') return p + n + 1;
  }
  return NULL;
}

static int fault(const char *name) {
  const char *list = getenv("ORIENTCAM_FAULTS");
  if (!list) return 0;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
    if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
  }
  return 0;
}

#define REAL(ret, name, ...)                                  \
  static ret (*real_##name)(__VA_ARGS__);                     \
  if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

static int refuse_tmpfile(int flags) {
  if ((flags & O_TMPFILE) == O_TMPFILE && fault("vfat")) {
    errno = EOPNOTSUPP;
    return 1;
  }
  return 0;
}

int open(const char *path, int flags, ...) {
  REAL(int, open, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_arg(ap, mode_t);
  va_end(ap);
  if (refuse_tmpfile(flags)) return -1;
  return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
  REAL(int, open64, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_arg(ap, mode_t);
  va_end(ap);
  if (refuse_tmpfile(flags)) return -1;
  return real_open64(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...) {
  REAL(int, openat, int, const char *, int, ...);
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_arg(ap, mode_t);
  va_end(ap);
  if (refuse_tmpfile(flags)) return -1;
  return real_openat(dir, path, flags, mode);
}

int link(const char *from, const char *to) {
  REAL(int, link, const char *, const char *);
  if (fault("vfat")) {
    errno = EPERM;
    return -1;
  }
  return real_link(from, to);
}

int linkat(int fromdir, const char *from, int todir, const char *to, int flags) {
  REAL(int, linkat, int, const char *, int, const char *, int);
  if (fault("vfat")) {
    errno = EPERM;
    return -1;
  }
  return real_linkat(fromdir, from, todir, to, flags);
}

int renameat2(int fromdir, const char *from, int todir, const char *to, unsigned int flags) {
  REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
  if (fault("no-noreplace")) {
    errno = EINVAL;
    return -1;
  }
  return real_renameat2(fromdir, from, todir, to, flags);
}

int fsync(int fd) {
  REAL(int, fsync, int);
  struct stat st;
  if (fault("dirsync-eio") && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EIO;
    return -1;
  }
  return real_fsync(fd);
}

ssize_t write(int fd, const void *buffer, size_t count) {
  REAL(ssize_t, write, int, const void *, size_t);
  static int big_writes = 0;
  const char *stall = fault_value("stall-write");
  struct stat st;
  if (stall && fd > 2 && count >= 4096 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      ++big_writes == atoi(stall)) {
    ssize_t done = real_write(fd, buffer, count / 2);
    (void)done;
    const char *marker = getenv("ORIENTCAM_FAULT_MARKER");
    if (marker) {
      int m = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (m >= 0) close(m);
    }
    for (;;) pause();
  }
  return real_write(fd, buffer, count);
}
