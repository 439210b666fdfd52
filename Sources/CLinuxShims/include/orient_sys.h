// Small C helpers for the parts of the Linux API that Swift cannot call directly.
// Each function says which macro or variadic function it stands in for. Headers in include/
// form one umbrella module; each area (V4L2, evdev, D-Bus) keeps its own header here.
#pragma once

#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/types.h>

/// ioctl(2) is variadic, which Swift cannot call; this passes one pointer argument.
int orient_ioctl_ptr(int fd, unsigned long request, void *arg);

/// ioctl(2) with one integer argument (EVIOCGRAB takes an int by value).
int orient_ioctl_int(int fd, unsigned long request, long arg);

/// open(2) is variadic in C; this passes the mode explicitly.
int orient_open(const char *path, int flags, mode_t mode);

/// O_TMPFILE for open(2). glibc defines it only with _GNU_SOURCE, and its value differs between
/// architectures (0o20200000 on x86 and arm64, other values on alpha, parisc, sparc), so it comes
/// from the C headers of the machine being built for.
int orient_o_tmpfile(void);

/// AT_EMPTY_PATH for linkat(2) (also hidden by glibc without _GNU_SOURCE).
int orient_at_empty_path(void);

/// renameat2(2) with RENAME_NOREPLACE: renames unless the new name exists (then EEXIST). The
/// replacement for link(2) on filesystems without hard links (vfat, exfat). Returns -1 and sets
/// errno like renameat2; EINVAL or ENOSYS where the filesystem or kernel lacks the flag.
int orient_rename_noreplace(const char *from, const char *to);


/// sigprocmask(SIG_BLOCK) of the given signals, and a signalfd(2) for them; returns the fd or -1.
/// sigaddset and friends are macros on some libcs; doing it in C keeps the set opaque to Swift.
int orient_block_signals_fd(const int *signals, int count);

/// Restores the default signal mask for a child process (called between fork and exec).
int orient_unblock_all_signals(void);

/// The ssi_signo field of a struct signalfd_siginfo read from a signalfd.
unsigned int orient_signalfd_signo(const void *siginfo);

/// sizeof(struct signalfd_siginfo).
size_t orient_signalfd_siginfo_size(void);

/// mallopt(M_MMAP_THRESHOLD, bytes): <malloc.h> is not part of Swift's Glibc module. A fixed
/// threshold also turns off glibc's dynamic one. Returns 1 on success, 0 on error.
int orient_set_mmap_threshold(int bytes);

/// malloc_trim(0) (<malloc.h>): gives freed heap memory back to the system. Returns 1 if any
/// was released.
int orient_malloc_trim(void);

/// pipe2(2) with O_CLOEXEC (glibc declares pipe2 only with _GNU_SOURCE).
int orient_pipe_cloexec(int fds[2]);

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK (accept4 needs _GNU_SOURCE).
int orient_accept_cloexec(int fd);

/// pidfd_open(2) (Linux 5.3): a descriptor that polls readable when the process exits, so an
/// event loop can wait for a child; glibc has no wrapper before 2.36 and Swift cannot call the
/// variadic syscall(2). Returns -1 with errno set on failure (ENOSYS on older kernels).
int orient_pidfd_open(int pid);

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file (a child's captured stderr), declared
/// by glibc only with _GNU_SOURCE.
int orient_memfd_cloexec(const char *name);

/// IIO_GET_EVENT_FD_IOCTL (<linux/iio/events.h>: a macro Swift cannot see) on an IIO character
/// device: its event descriptor (close-on-exec, made non-blocking), or -1 with errno set (ENODEV when the device
/// has no events, EBUSY when another reader holds them).
int orient_iio_event_fd(int fd);

/// sizeof(struct iio_event_data): one event as read(2) returns it from the event descriptor.
size_t orient_iio_event_size(void);
