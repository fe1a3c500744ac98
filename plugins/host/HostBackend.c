/*===- HostBackend.c - the host CPU backend plugin ----------------*- C -*-===*\
|*                                                                            *|
|* libkjit-host.so: the backend named "host". It accepts the ELF shared       *|
|* objects the compiler library produces for the host target                  *|
|* (include/kjit-c/HostKernel.h), loads them from memory (memfd, so nothing   *|
|* touches the disk cache's directory), and runs a launch's programs on a     *|
|* pool of worker threads (Workers.c). Built only against include/kjit-c.     *|
|* docs/HostBackend.md describes behaviour, messages and settings.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* memfd_create, mkstemp, dlinfo: POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "Cpu.h"
#include "Internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/** The version of this backend; joins the fingerprint. Bump it whenever
 *  the way kernels run changes in a way a cached artifact could notice. */
#define HOST_BACKEND_VERSION "1.3.0"

/* The fingerprint: backend name, HostKernel ABI version, backend version,
 * architecture, and the CPU the compiler builds kernels for (Cpu.h). The
 * artifact itself is produced by the compiler, whose own settings are in
 * the key already. Built once: the same bytes on every call. */
#define HOST_STR2(x) #x
#define HOST_STR(x) HOST_STR2(x)
static const char host_fingerprint_prefix[] =
    "kjit-host-backend;host-abi=" HOST_STR(
        KJIT_HOST_ABI_VERSION) ";version=" HOST_BACKEND_VERSION ";arch=x86_64;";
static char host_fingerprint[sizeof host_fingerprint_prefix + 512];
static size_t host_fingerprint_len;
static pthread_once_t host_fingerprint_once = PTHREAD_ONCE_INIT;

static void build_fingerprint(void) {
  host_cpu cpu;
  size_t n = sizeof host_fingerprint_prefix - 1;
  host_cpu_read(&cpu);
  memcpy(host_fingerprint, host_fingerprint_prefix, n);
  n += host_cpu_describe(&cpu, host_fingerprint + n,
                         sizeof host_fingerprint - n);
  host_fingerprint_len =
      n < sizeof host_fingerprint ? n : sizeof host_fingerprint - 1;
}

static const char host_format_name[] = "elf-shared-object";

/* The settings of init, for describe. Written under host_users_lock by the
 * first init, read-only afterwards. */
static host_config host_settings;
static unsigned host_users;
static pthread_mutex_t host_users_lock = PTHREAD_MUTEX_INITIALIZER;

/*===----------------------------------------------------------------------===*\
|* Helpers                                                                    *|
\*===----------------------------------------------------------------------===*/

/* The host backend drives one device: the CPU, device 0. */
kjit_status *host_check_device(int32_t device, const char *entry) {
  if (device == 0)
    return NULL;
  return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                    "host backend: %s for device %d, but the host backend has "
                    "one device, 0",
                    entry, (int)device);
}

/* A kernel name becomes part of symbol names, so it must be an identifier
 * (which also keeps it printable in every message). */
static kjit_status *check_kernel_name(const char *name, size_t len) {
  size_t i;
  if (!name || len == 0 || len > 200)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: kernel name is empty or longer than 200 "
                      "characters");
  for (i = 0; i < len; ++i) {
    char c = name[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (i > 0 && c >= '0' && c <= '9')))
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "host backend: kernel name '%.*s' is not an "
                        "identifier",
                        (int)len, name);
  }
  return NULL;
}

/* Checks that the program headers and every segment's file bytes lie
 * within the object. The dynamic loader maps segments without checking
 * them against the file size, so a truncated object would load and then
 * fault (SIGBUS) on the first access past its end. The object is x86-64
 * ELF64 little-endian (check_elf), the host's own format, so its headers
 * are read as <elf.h>'s structs (copied: the bytes need not be aligned). */
static kjit_status *check_segments(const uint8_t *bytes, size_t size,
                                   const Elf64_Ehdr *eh, const char *name,
                                   size_t name_len) {
  uint64_t phoff = eh->e_phoff, phentsize = eh->e_phentsize;
  uint64_t phnum = eh->e_phnum, i;
  if (phentsize < sizeof(Elf64_Phdr) || phoff > size ||
      phnum > (size - phoff) / phentsize)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "artifact of kernel '%.*s' is truncated or corrupt: "
                      "its %u program headers do not fit in its %zu bytes",
                      (int)name_len, name, (unsigned)phnum, size);
  for (i = 0; i < phnum; ++i) {
    Elf64_Phdr ph;
    memcpy(&ph, bytes + phoff + i * phentsize, sizeof ph);
    /* The segments the loader reads from the file. */
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC &&
        ph.p_type != PT_INTERP && ph.p_type != PT_NOTE && ph.p_type != PT_TLS)
      continue;
    if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "artifact of kernel '%.*s' is truncated: segment %u "
                        "needs bytes up to %llu, but the object has %zu",
                        (int)name_len, name, (unsigned)i,
                        (unsigned long long)(ph.p_offset + ph.p_filesz), size);
  }
  return NULL;
}

/* Checks that `bytes` is an x86-64 ELF shared object, the only thing this
 * backend can load; says what it is instead. */
static kjit_status *check_elf(const uint8_t *bytes, size_t size,
                              const char *name, size_t name_len) {
  Elf64_Ehdr eh;
  if (!bytes || size < sizeof eh || memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    char shown[64] = "";
    size_t i, used = 0;
    for (i = 0; bytes && i < size && i < 4; ++i)
      used += (size_t)snprintf(shown + used, sizeof shown - used, "%s%02x",
                               i ? " " : "", bytes[i]);
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "artifact of kernel '%.*s' is not an ELF shared object: "
                      "%s (%zu bytes%s%s)",
                      (int)name_len, name,
                      size < 4 || !bytes ? "too short for the ELF magic"
                                         : "no ELF magic \\x7fELF",
                      size, used ? ", starting " : "", shown);
  }
  /* e_ident is bytes, so class and data can be read before knowing that
   * the rest is ELF64 little-endian (the host's own layout). */
  memcpy(&eh, bytes, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "artifact of kernel '%.*s' is an ELF file for another "
                      "machine (class %u, data %u, machine %u); the host "
                      "backend needs ELF64 little-endian x86-64",
                      (int)name_len, name, eh.e_ident[EI_CLASS],
                      eh.e_ident[EI_DATA], (unsigned)eh.e_machine);
  if (eh.e_type != ET_DYN)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "artifact of kernel '%.*s' is an ELF file of type %u, "
                      "not a shared object (ET_DYN)",
                      (int)name_len, name, (unsigned)eh.e_type);
  return check_segments(bytes, size, &eh, name, name_len);
}

/*===----------------------------------------------------------------------===*\
|* describe, fingerprint, options, finalize                                   *|
\*===----------------------------------------------------------------------===*/

static const kjit_artifact_format host_format = {sizeof(kjit_artifact_format),
                                                 NULL, host_format_name,
                                                 sizeof host_format_name - 1};
static const kjit_artifact_format *const host_formats[] = {&host_format};

static kjit_status *host_describe(void *self,
                                  kjit_backend_describe_args *args) {
  kjit_status *status;
  (void)self;
  if ((status = host_check_device(args->device, "describe")))
    return status;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, arch_len)) {
    args->target = "host";
    args->target_len = 4;
    args->arch = "x86_64";
    args->arch_len = 6;
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, warp_size))
    args->warp_size = 32; /* Triton's num_warps means 32 threads each */
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, formats)) {
    args->num_formats = 1;
    args->formats = host_formats;
  }
  /* 1.1: the pool's workers run programs as SMs do; 32 warps of 32; no
   * dynamic shared memory; no UUID (a CPU has none). */
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, multiprocessor_count))
    args->multiprocessor_count = host_settings.workers;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, max_threads_per_block))
    args->max_threads_per_block = 32 * 32;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args,
                     max_shared_memory_per_block))
    args->max_shared_memory_per_block = 0;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, uuid))
    memset(args->uuid, 0, sizeof args->uuid);
  /* 1.2: no compile options; the flags launch honours. */
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, launch_flags))
    args->launch_flags =
        KJIT_LAUNCH_COOPERATIVE | KJIT_LAUNCH_PDL | KJIT_LAUNCH_TIMED;
  return NULL;
}

static kjit_status *host_device_count(void *self,
                                      kjit_backend_device_count_args *args) {
  (void)self;
  if (KJIT_HAS_FIELD(args, kjit_backend_device_count_args, count))
    args->count = 1;
  return NULL;
}

static kjit_status *
host_fingerprint_entry(void *self, kjit_backend_fingerprint_args *args) {
  kjit_status *status;
  (void)self;
  if (!KJIT_HAS_FIELD(args, kjit_backend_fingerprint_args, fingerprint))
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: fingerprint arguments too small");
  if ((status = host_check_device(args->device, "fingerprint")))
    return status;
  pthread_once(&host_fingerprint_once, build_fingerprint);
  args->fingerprint.data = (const uint8_t *)host_fingerprint;
  args->fingerprint.size = host_fingerprint_len;
  args->fingerprint.owner = NULL;
  args->fingerprint.release = NULL; /* static storage */
  return NULL;
}

/* The backend takes no options: nothing in it changes the code, and the
 * settings that change how kernels run (worker count, fiber stack size)
 * cannot travel in an options handle, which load and launch never see.
 * They come from the environment at init instead. */
static kjit_status *host_parse_options(void *self,
                                       kjit_backend_parse_options_args *args) {
  (void)self;
  if (args->num_options > 0 && args->options && args->options[0]) {
    const kjit_option *o = args->options[0];
    return host_error(
        KJIT_STATUS_INVALID_ARGUMENT,
        "unknown option '%.*s=%.*s': the host backend takes no options "
        "(set KJIT_HOST_WORKERS and KJIT_HOST_STACK_KIB in the environment)",
        o->name ? (int)o->name_len : 0, o->name ? o->name : "",
        o->value ? (int)o->value_len : 0, o->value ? o->value : "");
  }
  args->options_handle = NULL;
  return NULL;
}

static void host_destroy_options(void *self, void *handle) {
  (void)self;
  (void)handle; /* parse_options never makes one */
}

static void release_malloced(void *owner, const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  free(owner);
}

/* The compiler already produced a shared object: finalize checks it and
 * hands the same bytes back. */
static kjit_status *host_finalize(void *self,
                                  kjit_backend_finalize_args *args) {
  kjit_status *status;
  uint8_t *copy;
  (void)self;
  if (KJIT_HAS_FIELD(args, kjit_backend_finalize_args, device) &&
      (status = host_check_device(args->device, "finalize")))
    return status;
  if (!args->format || args->format_len != sizeof host_format_name - 1 ||
      memcmp(args->format, host_format_name, args->format_len) != 0)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "format '%.*s' is not accepted by the host backend "
                      "(accepted: %s)",
                      args->format ? (int)args->format_len : 0,
                      args->format ? args->format : "", host_format_name);
  if ((status = check_elf(args->artifact, args->artifact_size,
                          args->kernel_name, args->kernel_name_len)))
    return status;
  copy = malloc(args->artifact_size);
  if (!copy)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory copying %zu bytes",
                      args->artifact_size);
  memcpy(copy, args->artifact, args->artifact_size);
  args->loadable.data = copy;
  args->loadable.size = args->artifact_size;
  args->loadable.owner = copy;
  args->loadable.release = release_malloced;
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* load and unload                                                            *|
\*===----------------------------------------------------------------------===*/

static int write_all(int fd, const uint8_t *data, size_t size) {
  while (size) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    data += n;
    size -= (size_t)n;
  }
  return 0;
}

/* The path dlopen is given for the memfd `fd`: /proc/self/fd/<fd> with the
 * load's serial spelled in 64 path segments, "/." for a 1 bit and "//" for a
 * 0 bit, which the kernel resolves away. glibc matches already-loaded
 * objects by the path string before it opens anything, and fd numbers are
 * reused once closed; the serial makes every path unique for the process's
 * life, so the memfd can be closed right after dlopen (the mapping keeps
 * its contents) and a process holds any number of kernels without a file
 * descriptor each. */
static void memfd_path(char *path, size_t size, int fd) {
  static unsigned long long serial; /* loads run on any thread */
  unsigned long long n = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
  size_t at = (size_t)snprintf(path, size, "/proc/self/fd");
  int bit;
  for (bit = 63; bit >= 0 && at + 2 < size; --bit, at += 2) {
    path[at] = '/';
    path[at + 1] = (n >> bit) & 1 ? '.' : '/';
  }
  snprintf(path + at, size - at, "/%d", fd);
}

/* Opens the object from memory: a memfd, opened by dlopen through /proc
 * and closed at once (see memfd_path). Falls back to an unlinked temporary
 * file where memfd_create or /proc is missing. */
static kjit_status *open_object(host_kernel *k, const uint8_t *bytes,
                                size_t size) {
  char path[192];
  const char *err;
  int fd = memfd_create(k->name, MFD_CLOEXEC);
  if (fd >= 0) {
    if (write_all(fd, bytes, size) != 0) {
      int e = errno;
      close(fd);
      return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                        "cannot load kernel '%s': writing %zu bytes to a "
                        "memfd failed: %s",
                        k->name, size, strerror(e));
    }
    memfd_path(path, sizeof path, fd);
    k->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    err = k->dl ? NULL : dlerror();
    close(fd);
    if (k->dl) {
      k->path = strdup(path);
      return NULL;
    }
    /* No /proc: try a file. Any other error is the object's own. */
    if (access("/proc/self/fd", F_OK) == 0)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "cannot load kernel '%s': %s", k->name,
                        err ? err : "dlopen failed");
  }
  {
    const char *dir = getenv("TMPDIR");
    char *file = malloc(strlen(dir && *dir ? dir : "/tmp") + 32);
    if (!file)
      return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    sprintf(file, "%s/kjit-host-XXXXXX", dir && *dir ? dir : "/tmp");
    fd = mkstemp(file);
    if (fd < 0 || write_all(fd, bytes, size) != 0) {
      int e = errno;
      if (fd >= 0) {
        close(fd);
        unlink(file);
      }
      free(file);
      return host_error(KJIT_STATUS_UNAVAILABLE,
                        "cannot load kernel '%s': no memfd, and writing a "
                        "temporary file failed: %s",
                        k->name, strerror(e));
    }
    k->dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    err = k->dl ? NULL : dlerror();
    /* Unlinked right away: the mapping keeps the contents alive. */
    unlink(file);
    close(fd);
    if (!k->dl) {
      kjit_status *s = host_error(KJIT_STATUS_INVALID_ARGUMENT,
                                  "cannot load kernel '%s': %s", k->name,
                                  err ? err : "dlopen failed");
      free(file);
      return s;
    }
    k->path = file; /* mkstemp names are unique while the object lives */
    return NULL;
  }
}

/* Where the object was mapped and the span of its executable segments, so
 * that a fault's pc can be told to be the kernel's own and shown relative
 * to the object (as addr2line takes it). The headers are those check_elf
 * and check_segments have accepted. */
static void find_text(host_kernel *k, const uint8_t *bytes) {
  struct link_map *map = NULL;
  Elf64_Ehdr eh;
  uint64_t i, lo = UINT64_MAX, hi = 0;
  memcpy(&eh, bytes, sizeof eh);
  if (dlinfo(k->dl, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return;
  k->load_base = (uintptr_t)map->l_addr;
  for (i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    memcpy(&ph, bytes + eh.e_phoff + i * eh.e_phentsize, sizeof ph);
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    if (ph.p_vaddr < lo)
      lo = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > hi)
      hi = ph.p_vaddr + ph.p_memsz;
  }
  if (lo < hi) {
    k->text_begin = k->load_base + (uintptr_t)lo;
    k->text_end = k->load_base + (uintptr_t)hi;
  }
}

/* Looks up `prefix` + kernel name in the object. */
static void *lookup(host_kernel *k, const char *prefix) {
  char symbol[256];
  snprintf(symbol, sizeof symbol, "%s%s", prefix, k->name);
  return dlsym(k->dl, symbol);
}

static void free_kernel(host_kernel *k) {
  /* An object that stays resident (NODELETE) keeps its path in glibc's
   * list; memfd_path never hands that path out again. */
  if (k->dl)
    dlclose(k->dl);
  free(k->params);
  free(k->value_bytes);
  free(k->line_table);
  free(k->path);
  free(k->name);
  free(k);
}

static kjit_status *host_load(void *self, kjit_backend_load_args *args) {
  host_kernel *k;
  kjit_status *status;
  const uint32_t *abi, *flags;
  (void)self;
  if ((status = host_check_device(args->device, "load")))
    return status;
  if ((status = check_kernel_name(args->kernel_name, args->kernel_name_len)))
    return status;
  if ((status = check_elf(args->loadable, args->loadable_size,
                          args->kernel_name, args->kernel_name_len)))
    return status;
  k = calloc(1, sizeof *k);
  if (!k || !(k->name = malloc(args->kernel_name_len + 1))) {
    free(k);
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(k->name, args->kernel_name, args->kernel_name_len);
  k->name[args->kernel_name_len] = '\0';
  if ((status = open_object(k, args->loadable, args->loadable_size))) {
    free_kernel(k);
    return status;
  }
  find_text(k, args->loadable);
  if (host_line_table_copy(args->loadable, args->loadable_size, &k->line_table,
                           &k->line_table_size) != 0) {
    status = host_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    goto fail;
  }
  abi = dlsym(k->dl, "kjit_host_abi_version");
  if (!abi) {
    status = host_error(KJIT_STATUS_NOT_FOUND,
                        "cannot load kernel '%s': the object has no symbol "
                        "kjit_host_abi_version (not built for the host "
                        "kernel ABI)",
                        k->name);
    goto fail;
  }
  if (*abi < KJIT_HOST_ABI_MIN_VERSION || *abi > KJIT_HOST_ABI_VERSION) {
    status = host_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "cannot load kernel '%s': it was built for host "
                        "kernel ABI version %u, but this backend implements "
                        "versions %u to %u",
                        k->name, *abi, (unsigned)KJIT_HOST_ABI_MIN_VERSION,
                        (unsigned)KJIT_HOST_ABI_VERSION);
    goto fail;
  }
  k->abi_version = *abi;
  {
    /* dlsym returns void *; the entry is a function. POSIX guarantees the
     * conversion; memcpy keeps -pedantic quiet about it. */
    void *entry = lookup(k, "kjit_host_entry_");
    if (!entry) {
      status = host_error(KJIT_STATUS_NOT_FOUND,
                          "cannot load kernel '%s': the object has no "
                          "symbol kjit_host_entry_%s",
                          k->name, k->name);
      goto fail;
    }
    memcpy(&k->entry, &entry, sizeof entry);
  }
  flags = lookup(k, "kjit_host_flags_");
  if (!flags) {
    status = host_error(KJIT_STATUS_NOT_FOUND,
                        "cannot load kernel '%s': the object has no symbol "
                        "kjit_host_flags_%s",
                        k->name, k->name);
    goto fail;
  }
  k->flags = *flags;
  k->signature = lookup(k, "kjit_host_signature_");
  if ((status = host_parse_signature(k)))
    goto fail;
  if (KJIT_HAS_FIELD(args, kjit_backend_load_args, takes_values) &&
      host_take_template(k, args->num_args, args->args))
    args->takes_values = 1;
  args->kernel = k;
  return NULL;
fail:
  free_kernel(k);
  return status;
}

static kjit_status *host_unload(void *self, kjit_backend_unload_args *args) {
  (void)self;
  if (args->kernel)
    free_kernel(args->kernel);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* launch                                                                     *|
\*===----------------------------------------------------------------------===*/

static uint64_t monotonic_ns(const struct timespec *t) {
  return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* KJIT_LAUNCH_TIMED: the host's device is its pool, and a launch has
 * completed when host_pool_run returns, so the device time is that span,
 * reported before launch returns. */
static void report_device_time(kjit_host_context *ctx, const host_kernel *k,
                               const kjit_backend_launch_args *args,
                               const struct timespec *started, int32_t code) {
  struct timespec ended;
  kjit_device_time time;
  clock_gettime(CLOCK_MONOTONIC, &ended);
  memset(&time, 0, sizeof time);
  time.struct_size = sizeof time;
  time.correlation_id =
      KJIT_HAS_FIELD(args, kjit_backend_launch_args, correlation_id)
          ? args->correlation_id
          : 0;
  time.kernel_name = k->name;
  time.kernel_name_len = strlen(k->name);
  time.device = 0;
  time.launch_status = code;
  time.stream = args->stream;
  time.start_ns = monotonic_ns(started);
  time.end_ns = monotonic_ns(&ended);
  host_api->report_device_time(ctx, &time);
}

/* ABI 2's extents: for each pointer argument into an allocation of this
 * backend (every tensor kjit-run passes), the bytes it may reach; for
 * everything else "unknown", which bounds checks let through. */
static void find_extents(const host_kernel *k, const host_arg_slot *slots,
                         size_t count, kjit_host_extent *extents) {
  size_t i;
  for (i = 0; i < count; ++i) {
    uintptr_t p = (uintptr_t)slots[i].ptr, begin, end;
    extents[i].begin = INT64_MIN;
    extents[i].end = INT64_MAX;
    if (i < k->num_params && k->params && k->params[i].pointer && p &&
        host_find_allocation(p, &begin, &end)) {
      extents[i].begin = -(int64_t)(p - begin);
      extents[i].end = (int64_t)(end - p);
    }
  }
}

static kjit_status *host_launch_entry(void *self,
                                      kjit_backend_launch_args *args) {
  host_kernel *k = args->kernel;
  host_arg_slot small_slots[16];
  void *small_pointers[16];
  host_arg_slot *slots = small_slots;
  void **pointers = small_pointers;
  kjit_host_extent small_extents[16];
  kjit_host_extent *extents = small_extents;
  kjit_status *status;
  host_launch launch;
  size_t count = 0;
  uint64_t programs;
  struct timespec started;
  int timed;
  if (!k)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: launch of a NULL kernel handle");
  if (args->num_warps == 0 || args->num_warps > 32)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': num_warps is %u; the host "
                      "backend runs 1 to 32 warps of 32 threads",
                      k->name, args->num_warps);
  if (args->shared_memory_bytes)
    return host_error(KJIT_STATUS_UNIMPLEMENTED,
                      "launch of kernel '%s': %u bytes of dynamic shared "
                      "memory requested; host kernels have static workgroup "
                      "memory only",
                      k->name, args->shared_memory_bytes);
  /* 1.1: cooperative and PDL launches hold trivially (a launch runs to the
   * end before the next starts, and host kernels have no grid-wide sync to
   * need co-residency); clusters do not exist. */
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, cluster)) {
    uint32_t unknown = args->flags & ~(KJIT_LAUNCH_COOPERATIVE |
                                       KJIT_LAUNCH_PDL | KJIT_LAUNCH_TIMED);
    int i;
    if (unknown)
      return host_error(KJIT_STATUS_UNIMPLEMENTED,
                        "launch of kernel '%s': launch flags 0x%x are not "
                        "known to the host backend",
                        k->name, (unsigned)unknown);
    for (i = 0; i < 3; ++i)
      if (args->cluster[i] > 1)
        return host_error(KJIT_STATUS_UNIMPLEMENTED,
                          "launch of kernel '%s': clusters of %ux%ux%u "
                          "programs requested; the host backend has no "
                          "clusters",
                          k->name, (unsigned)args->cluster[0],
                          (unsigned)args->cluster[1],
                          (unsigned)args->cluster[2]);
  }
  if (args->num_args > 16) {
    slots = malloc(args->num_args * sizeof *slots);
    pointers = malloc(args->num_args * sizeof *pointers);
    extents = malloc(args->num_args * sizeof *extents);
    if (!slots || !pointers || !extents) {
      status = host_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      goto out;
    }
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, values) && args->values) {
    if ((status = host_copy_values(k, args->num_args, args->values, slots,
                                   pointers)))
      goto out;
    count = args->num_args;
  } else if ((status = host_copy_args(k, args->num_args, args->args, slots,
                                      pointers, &count)))
    goto out;
  programs = (uint64_t)args->grid[0] * args->grid[1];
  if (args->grid[2] && programs > UINT64_MAX / args->grid[2]) {
    status = host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': grid %ux%ux%u is too large",
                        k->name, args->grid[0], args->grid[1], args->grid[2]);
    goto out;
  }
  programs *= args->grid[2];
  if (programs == 0)
    goto out; /* an empty grid runs nothing, as on a GPU */

  memset(&launch, 0, sizeof launch);
  launch.kernel = k;
  memcpy(launch.grid, args->grid, sizeof launch.grid);
  launch.threads = 32 * args->num_warps;
  launch.num_programs = programs;
  launch.args = count ? pointers : NULL;
  if (k->abi_version >= 2) {
    find_extents(k, slots, count, extents);
    launch.extents = extents;
  }
  pthread_mutex_init(&launch.error_lock, NULL);
  timed = (args->flags & KJIT_LAUNCH_TIMED) && self &&
          KJIT_HAS_FIELD(host_api, kjit_host_api, report_device_time);
  if (timed)
    clock_gettime(CLOCK_MONOTONIC, &started);
  status = host_pool_run(&launch);
  if (timed)
    report_device_time((kjit_host_context *)self, k, args, &started,
                       status ? host_api->status_code(status)
                              : launch.error_code);
  if (!status && launch.error_code) {
    if (launch.num_errors > 1)
      status = host_error(launch.error_code,
                          "%s (and %llu more failure%s in this launch)",
                          launch.error ? launch.error : "device failure",
                          (unsigned long long)(launch.num_errors - 1),
                          launch.num_errors == 2 ? "" : "s");
    else
      status = host_error(launch.error_code, "%s",
                          launch.error ? launch.error : "device failure");
  }
  free(launch.error);
  pthread_mutex_destroy(&launch.error_lock);
out:
  if (slots != small_slots)
    free(slots);
  if (pointers != small_pointers)
    free(pointers);
  if (extents != small_extents)
    free(extents);
  return status;
}

/*===----------------------------------------------------------------------===*\
|* Plugin table                                                               *|
\*===----------------------------------------------------------------------===*/

/* A process may hold several plugin hosts (one per runtime object), each
 * of which initializes the plugin. All state is process-wide (the pool), so
 * the first init sets it up and the last fini tears it down. */
static kjit_status *host_init(const kjit_host_api *host, kjit_host_context *ctx,
                              void **self) {
  pthread_mutex_lock(&host_users_lock);
  if (host_users++ == 0) {
    host_api = host;
    host_config_from_environment(&host_settings);
    host_pool_init(&host_settings);
  }
  pthread_mutex_unlock(&host_users_lock);
  /* The instance is the host's context: timed launches report through it. */
  *self = ctx;
  return NULL;
}

static void host_fini(void *self) {
  (void)self;
  pthread_mutex_lock(&host_users_lock);
  if (--host_users == 0)
    host_pool_shutdown();
  pthread_mutex_unlock(&host_users_lock);
}

static const kjit_backend_table host_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "host",
    .name_len = 4,
    .describe = host_describe,
    .fingerprint = host_fingerprint_entry,
    .parse_options = host_parse_options,
    .destroy_options = host_destroy_options,
    .finalize = host_finalize,
    .load = host_load,
    .launch = host_launch_entry,
    .unload = host_unload,
    .device_count = host_device_count,
    /* synchronize stays NULL: a launch has completed when it returns. */
    .allocate = host_allocate,
    .deallocate = host_deallocate,
    .copy = host_copy,
};

static const kjit_plugin_api host_plugin = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "host",
    .name_len = 4,
    .version = HOST_BACKEND_VERSION,
    .version_len = sizeof HOST_BACKEND_VERSION - 1,
    /* Every entry may run concurrently: loads are independent, and
     * launches take turns on the pool (Workers.c). */
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = host_init,
    .fini = host_fini,
    .backend = &host_backend,
};

static const char host_needs_1_1[] =
    "the host backend reads the launch arguments' storage fields of ABI 1.1 "
    "and needs a host of ABI 1.1 or newer";

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  if (io->host_max_minor < 1) {
    if (KJIT_HAS_FIELD(io, kjit_negotiate, reject_reason_len)) {
      io->reject_reason = host_needs_1_1;
      io->reject_reason_len = sizeof host_needs_1_1 - 1;
    }
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &host_plugin;
  return KJIT_STATUS_OK;
}
