// O_TMPFILE, AT_EMPTY_PATH and renameat2 are GNU extensions in glibc's headers.
#define _GNU_SOURCE
#include "orient_sys.h"

#include <stdio.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/iio/events.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

int orient_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

int orient_ioctl_int(int fd, unsigned long request, long arg) { return ioctl(fd, request, arg); }

int orient_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

int orient_o_tmpfile(void) { return O_TMPFILE; }

int orient_at_empty_path(void) { return AT_EMPTY_PATH; }

int orient_rename_noreplace(const char *from, const char *to) {
  return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int orient_block_signals_fd(const int *signals, int count) {
  sigset_t set;
  sigemptyset(&set);
  for (int i = 0; i < count; i++) sigaddset(&set, signals[i]);
  if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) return -1;
  return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int orient_unblock_all_signals(void) {
  sigset_t set;
  sigemptyset(&set);
  return sigprocmask(SIG_SETMASK, &set, NULL);
}

unsigned int orient_signalfd_signo(const void *siginfo) {
  return ((const struct signalfd_siginfo *)siginfo)->ssi_signo;
}

size_t orient_signalfd_siginfo_size(void) { return sizeof(struct signalfd_siginfo); }

int orient_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
int orient_malloc_trim(void) { return malloc_trim(0); }

int orient_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int orient_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

int orient_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int orient_memfd_cloexec(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

int orient_iio_event_fd(int fd) {
  int event_fd = -1;
  if (ioctl(fd, IIO_GET_EVENT_FD_IOCTL, &event_fd) < 0) return -1;
  // The kernel makes it blocking; the event loop drains it until EAGAIN.
  int flags = fcntl(event_fd, F_GETFL);
  if (flags < 0 || fcntl(event_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    int saved = errno;
    close(event_fd);
    errno = saved;
    return -1;
  }
  return event_fd;
}

size_t orient_iio_event_size(void) { return sizeof(struct iio_event_data); }
