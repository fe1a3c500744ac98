/*===- FaultShim.c - file-system errors injected into the cache's writes --===*\
|*                                                                            *|
|* LD_PRELOAD it with KJIT_TEST_FAULT=OP:ERRNO. OP names the step of a disk   *|
|* cache put that fails, only for files inside an `entries` directory (the    *|
|* entries, not the counters, so the errors can be counted):                  *|
|*   mkdir   making a shard directory     create  creating the temporary file *|
|*   write   writing it (half is written, then the error)                     *|
|*   fsync   syncing it (KJIT_CACHE_FSYNC=1)  rename  publishing it (each    *|
|*   way: renameat, and putIfAbsent's renameat2 and linkat)                   *|
|* ERRNO is ENOSPC, EACCES, EROFS, EIO, EBUSY or ENOENT.                      *|
|* test/Cache/fs-faults.test.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

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

static char fault_op[16];
static int fault_errno;
static int configured;
/* Descriptors of temporaries being written (a small set is enough). */
static int temp_fds[64];
static int temp_written[64];

static void configure(void) {
  const char *spec, *colon;
  if (configured)
    return;
  configured = 1;
  spec = getenv("KJIT_TEST_FAULT");
  if (!spec || !(colon = strchr(spec, ':')) ||
      (size_t)(colon - spec) >= sizeof fault_op)
    return;
  memcpy(fault_op, spec, (size_t)(colon - spec));
  colon++;
  fault_errno = !strcmp(colon, "ENOSPC")   ? ENOSPC
                : !strcmp(colon, "EACCES") ? EACCES
                : !strcmp(colon, "EROFS")  ? EROFS
                : !strcmp(colon, "EIO")    ? EIO
                : !strcmp(colon, "EBUSY")  ? EBUSY
                : !strcmp(colon, "ENOENT") ? ENOENT
                                           : 0;
  for (int i = 0; i < 64; ++i)
    temp_fds[i] = -1;
}

static int active(const char *op) {
  configure();
  return fault_errno && !strcmp(fault_op, op);
}

/* Whether `dirfd` is the entries directory or one of its shards. */
static int in_entries(int dirfd) {
  char link[64], path[4096];
  ssize_t n;
  snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  n = readlink(link, path, sizeof path - 1);
  if (n <= 0)
    return 0;
  path[n] = 0;
  return strstr(path, "/entries") != NULL;
}

static int is_temp(const char *name) { return !strncmp(name, ".tmp.", 5); }

static void track(int fd) {
  for (int i = 0; fd >= 0 && i < 64; ++i)
    if (temp_fds[i] < 0) {
      temp_fds[i] = fd;
      temp_written[i] = 0;
      return;
    }
}

static int tracked(int fd) {
  for (int i = 0; fd >= 0 && i < 64; ++i)
    if (temp_fds[i] == fd)
      return i;
  return -1;
}

static int do_openat(const char *symbol, int dirfd, const char *name, int flags,
                     mode_t mode) {
  int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, symbol);
  int fd;
  int temp = (flags & O_CREAT) && is_temp(name) && in_entries(dirfd);
  if (temp && active("create")) {
    errno = fault_errno;
    return -1;
  }
  fd = real(dirfd, name, flags, mode);
  if (temp)
    track(fd);
  return fd;
}

int openat(int dirfd, const char *name, int flags, ...) {
  mode_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return do_openat("openat", dirfd, name, flags, mode);
}

int openat64(int dirfd, const char *name, int flags, ...) {
  mode_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return do_openat("openat64", dirfd, name, flags, mode);
}

ssize_t write(int fd, const void *data, size_t size) {
  ssize_t (*real)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");
  int slot = tracked(fd);
  if (slot >= 0 && active("write")) {
    if (!temp_written[slot] && size > 1) {
      temp_written[slot] = 1;
      return real(fd, data, size / 2); /* a partial write first */
    }
    errno = fault_errno;
    return -1;
  }
  return real(fd, data, size);
}

int fsync(int fd) {
  int (*real)(int) = dlsym(RTLD_NEXT, "fsync");
  if (tracked(fd) >= 0 && active("fsync")) {
    errno = fault_errno;
    return -1;
  }
  return real(fd);
}

int close(int fd) {
  int (*real)(int) = dlsym(RTLD_NEXT, "close");
  int slot = tracked(fd);
  if (slot >= 0)
    temp_fds[slot] = -1;
  return real(fd);
}

int renameat(int olddirfd, const char *oldname, int newdirfd,
             const char *newname) {
  int (*real)(int, const char *, int, const char *) =
      dlsym(RTLD_NEXT, "renameat");
  if (is_temp(oldname) && in_entries(olddirfd) && active("rename")) {
    errno = fault_errno;
    return -1;
  }
  return real(olddirfd, oldname, newdirfd, newname);
}

int renameat2(int olddirfd, const char *oldname, int newdirfd,
              const char *newname, unsigned int flags) {
  int (*real)(int, const char *, int, const char *, unsigned int) =
      dlsym(RTLD_NEXT, "renameat2");
  if (is_temp(oldname) && in_entries(olddirfd) && active("rename")) {
    errno = fault_errno;
    return -1;
  }
  return real(olddirfd, oldname, newdirfd, newname, flags);
}

int linkat(int olddirfd, const char *oldname, int newdirfd, const char *newname,
           int flags) {
  int (*real)(int, const char *, int, const char *, int) =
      dlsym(RTLD_NEXT, "linkat");
  if (is_temp(oldname) && in_entries(olddirfd) && active("rename")) {
    errno = fault_errno;
    return -1;
  }
  return real(olddirfd, oldname, newdirfd, newname, flags);
}

int mkdirat(int dirfd, const char *name, mode_t mode) {
  int (*real)(int, const char *, mode_t) = dlsym(RTLD_NEXT, "mkdirat");
  if (in_entries(dirfd) && active("mkdir")) {
    errno = fault_errno;
    return -1;
  }
  return real(dirfd, name, mode);
}
