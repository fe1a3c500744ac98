/*===- TwoDevicesBackend.c - the host backend with two devices ------------===*\
|*                                                                            *|
|* Backend "two-devices" serves target "host" with two devices, 0 and 1, so  *|
|* that the runtime's per-device bookkeeping is tested without two GPUs      *|
|* (unittests/Runtime/MultiDeviceTest.cpp, docs/MultiDevice.md). It opens    *|
|* the host backend (libkjit-host.so) as a plugin of its own, as             *|
|* examples/plugins/checked-host does, and forwards compile and launch work  *|
|* to its one device; what it adds is the devices' identity:                 *|
|*   - describe and fingerprint answer per device, from the environment;    *|
|*   - load returns a handle tagged with the device it was loaded on;       *|
|*   - launch refuses a handle of one device on a stream of the other:      *|
|*     stream TWO_DEVICES_STREAM(d) (0x7d00 + d) belongs to device d, as a  *|
|*     CUstream belongs to one device's context; stream 0 is the handle's   *|
|*     own device's default stream;                                          *|
|*   - every load, launch and unload is appended to a log file.             *|
|*                                                                            *|
|* Environment (read at init):                                               *|
|*   KJIT_TEST_TWO_DEVICES_LIBRARY      the host backend to wrap (default:   *|
|*                                      the build's)                         *|
|*   KJIT_TEST_TWO_DEVICES_ARCH0/ARCH1  device 0's / 1's arch (default: the *|
|*                                      host backend's, the same for both)   *|
|*   KJIT_TEST_TWO_DEVICES_FINGERPRINT0/FINGERPRINT1                         *|
|*                                      added to the host backend's          *|
|*                                      fingerprint for device 0 / 1         *|
|*                                      (default: nothing, the same for both)*|
|*   KJIT_TEST_TWO_DEVICES_TARGET1      the target device 1 describes        *|
|*                                      (default: the host backend's)        *|
|*   KJIT_TEST_TWO_DEVICES_LOG          append one line per event:           *|
|*     load device=D kernel=K handle=H                                       *|
|*     launch device=D stream-device=S kernel=K handle=H                     *|
|*     crossed device=D stream-device=S kernel=K handle=H   (refused)        *|
|*     unload device=D kernel=K handle=H                                     *|
|*   (H numbers the handles of one init from 1; S is D for stream 0).        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* POSIX: open, write, strdup (the build is strict C99). */
#define _POSIX_C_SOURCE 200809L

#include "kjit-c/Plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TWO_DEVICES_DEFAULT_LIBRARY
#error "TWO_DEVICES_DEFAULT_LIBRARY: the path of libkjit-host.so"
#endif

#define NUM_DEVICES 2
#define STREAM_BASE 0x7d00u

typedef struct device_state {
  char *arch;        /* NULL: the wrapped backend's */
  char *fingerprint; /* the wrapped backend's + the device's extra */
  size_t fingerprint_len;
} device_state;

typedef struct two_state {
  const kjit_host_api *host;
  kjit_host_context *ctx;
  const kjit_backend_table *inner;
  const kjit_plugin_api *inner_api;
  void *inner_self;
  device_state devices[NUM_DEVICES];
  char *target1; /* NULL: the wrapped backend's */
  char *log;     /* NULL: nothing is recorded */
  uint64_t next_handle;
} two_state;

/* A loaded kernel: the wrapped backend's handle and where it was loaded.
 * The magic catches a handle this backend never returned. */
#define HANDLE_MAGIC 0x2d657669636564ull
typedef struct two_kernel {
  uint64_t magic;
  int32_t device;
  uint64_t id;
  void *inner;
  char name[128];
} two_kernel;

static kjit_status *fail(const two_state *s, int32_t code, const char *format,
                         ...) {
  char message[512];
  va_list args;
  int n;
  va_start(args, format);
  n = vsnprintf(message, sizeof message, format, args);
  va_end(args);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof message)
    n = (int)sizeof message - 1;
  return s->host->status_create(code, message, (size_t)n);
}

/* One line, written with one write to a file opened for appending, so that
 * lines from concurrent launches never interleave. */
static void record(const two_state *s, const char *format, ...) {
  char line[512];
  va_list args;
  int n, fd;
  if (!s->log)
    return;
  va_start(args, format);
  n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0)
    return;
  if ((size_t)n >= sizeof line)
    n = (int)sizeof line - 1;
  fd = open(s->log, O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd < 0)
    return;
  if (write(fd, line, (size_t)n) != n) {
    /* A short write leaves the log incomplete; the test then fails on it. */
  }
  close(fd);
}

static kjit_status *check_device(const two_state *s, int32_t device,
                                 const char *entry) {
  if (device >= 0 && device < NUM_DEVICES)
    return NULL;
  return fail(s, KJIT_STATUS_INVALID_ARGUMENT,
              "two-devices: %s for device %d, but this backend has two "
              "devices, 0 and 1",
              entry, (int)device);
}

static kjit_status *two_describe(void *self, kjit_backend_describe_args *a) {
  two_state *s = self;
  kjit_status *status = check_device(s, a->device, "describe");
  int32_t device = a->device;
  if (status)
    return status;
  /* The wrapped backend has one device: it describes device 0 for both. */
  a->device = 0;
  status = s->inner->describe(s->inner_self, a);
  a->device = device;
  if (status)
    return status;
  if (s->devices[device].arch) {
    a->arch = s->devices[device].arch;
    a->arch_len = strlen(a->arch);
  }
  if (device == 1 && s->target1) {
    a->target = s->target1;
    a->target_len = strlen(a->target);
  }
  return NULL;
}

static kjit_status *two_fingerprint(void *self,
                                    kjit_backend_fingerprint_args *a) {
  two_state *s = self;
  kjit_status *status = check_device(s, a->device, "fingerprint");
  if (status)
    return status;
  a->fingerprint.data = (const uint8_t *)s->devices[a->device].fingerprint;
  a->fingerprint.size = s->devices[a->device].fingerprint_len;
  a->fingerprint.owner = NULL;
  a->fingerprint.release = NULL; /* ours until fini */
  return NULL;
}

static kjit_status *two_parse_options(void *self,
                                      kjit_backend_parse_options_args *a) {
  two_state *s = self;
  return s->inner->parse_options(s->inner_self, a);
}

static void two_destroy_options(void *self, void *handle) {
  two_state *s = self;
  s->inner->destroy_options(s->inner_self, handle);
}

static kjit_status *two_finalize(void *self, kjit_backend_finalize_args *a) {
  two_state *s = self;
  int32_t device = a->device;
  kjit_status *status = check_device(s, device, "finalize");
  if (status)
    return status;
  a->device = 0;
  status = s->inner->finalize(s->inner_self, a);
  a->device = device;
  return status;
}

static kjit_status *two_load(void *self, kjit_backend_load_args *a) {
  two_state *s = self;
  int32_t device = a->device;
  kjit_status *status = check_device(s, device, "load");
  two_kernel *k;
  size_t n;
  if (status)
    return status;
  k = calloc(1, sizeof *k);
  if (!k)
    return fail(s, KJIT_STATUS_RESOURCE_EXHAUSTED,
                "two-devices: out of memory");
  a->device = 0;
  status = s->inner->load(s->inner_self, a);
  a->device = device;
  if (status) {
    free(k);
    return status;
  }
  k->magic = HANDLE_MAGIC;
  k->device = device;
  k->id = __atomic_add_fetch(&s->next_handle, 1, __ATOMIC_RELAXED);
  k->inner = a->kernel;
  n = a->kernel_name_len < sizeof k->name - 1 ? a->kernel_name_len
                                              : sizeof k->name - 1;
  memcpy(k->name, a->kernel_name, n);
  a->kernel = k;
  record(s, "load device=%d kernel=%s handle=%llu\n", (int)device, k->name,
         (unsigned long long)k->id);
  return NULL;
}

static kjit_status *two_launch(void *self, kjit_backend_launch_args *a) {
  two_state *s = self;
  two_kernel *k = a->kernel;
  kjit_backend_launch_args inner;
  int32_t stream_device;
  if (!k || k->magic != HANDLE_MAGIC)
    return fail(s, KJIT_STATUS_INVALID_ARGUMENT,
                "two-devices: launch of a handle this backend did not load");
  if (a->stream == 0)
    stream_device = k->device;
  else if (a->stream >= STREAM_BASE && a->stream < STREAM_BASE + NUM_DEVICES)
    stream_device = (int32_t)(a->stream - STREAM_BASE);
  else
    return fail(s, KJIT_STATUS_INVALID_ARGUMENT,
                "two-devices: stream 0x%llx is no stream of this backend",
                (unsigned long long)a->stream);
  if (stream_device != k->device) {
    record(s, "crossed device=%d stream-device=%d kernel=%s handle=%llu\n",
           (int)k->device, (int)stream_device, k->name,
           (unsigned long long)k->id);
    return fail(s, KJIT_STATUS_FAILED_PRECONDITION,
                "two-devices: kernel '%s' was loaded on device %d but is "
                "launched on a stream of device %d",
                k->name, (int)k->device, (int)stream_device);
  }
  record(s, "launch device=%d stream-device=%d kernel=%s handle=%llu\n",
         (int)k->device, (int)stream_device, k->name,
         (unsigned long long)k->id);
  /* The host's struct, with the wrapped handle and the wrapped device's
   * default stream (the host backend ignores streams). */
  inner = *a;
  inner.kernel = k->inner;
  inner.stream = 0;
  return s->inner->launch(s->inner_self, &inner);
}

static kjit_status *two_unload(void *self, kjit_backend_unload_args *a) {
  two_state *s = self;
  two_kernel *k = a->kernel;
  kjit_backend_unload_args inner;
  kjit_status *status;
  if (!k || k->magic != HANDLE_MAGIC)
    return fail(s, KJIT_STATUS_INVALID_ARGUMENT,
                "two-devices: unload of a handle this backend did not load");
  record(s, "unload device=%d kernel=%s handle=%llu\n", (int)k->device, k->name,
         (unsigned long long)k->id);
  inner = *a;
  inner.kernel = k->inner;
  status = s->inner->unload(s->inner_self, &inner);
  k->magic = 0;
  free(k);
  return status;
}

static kjit_status *two_device_count(void *self,
                                     kjit_backend_device_count_args *a) {
  (void)self;
  a->count = NUM_DEVICES;
  return NULL;
}

/*===--- Opening the wrapped backend --------------------------------------===*/

static kjit_status *open_inner(two_state *s, const char *path) {
  kjit_plugin_negotiate_fn negotiate;
  kjit_negotiate io;
  kjit_status *status;
  const kjit_backend_table *t;
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(s, KJIT_STATUS_NOT_FOUND,
                "two-devices: cannot open the host backend: %s", dlerror());
  *(void **)(&negotiate) = dlsym(handle, KJIT_PLUGIN_ENTRY_NAME);
  if (!negotiate)
    return fail(s, KJIT_STATUS_FAILED_PRECONDITION,
                "two-devices: %s is not a kjit plugin", path);
  memset(&io, 0, sizeof io);
  io.struct_size = sizeof io;
  io.host_abi_major = KJIT_ABI_MAJOR;
  io.host_min_minor = 0;
  io.host_max_minor =
      s->host->abi_minor < KJIT_ABI_MINOR ? s->host->abi_minor : KJIT_ABI_MINOR;
  if (negotiate(&io) != KJIT_STATUS_OK || !io.plugin ||
      !KJIT_HAS_FIELD(io.plugin, kjit_plugin_api, backend) ||
      !io.plugin->backend)
    return fail(s, KJIT_STATUS_FAILED_PRECONDITION,
                "two-devices: %s is no backend this test can wrap", path);
  t = io.plugin->backend;
  /* What is forwarded must be there; synchronize and device memory stay
   * NULL here, as launches complete on return and devices read host
   * memory. */
  if (!t->describe || !t->fingerprint || !t->parse_options ||
      !t->destroy_options || !t->finalize || !t->load || !t->launch ||
      !t->unload)
    return fail(s, KJIT_STATUS_FAILED_PRECONDITION,
                "two-devices: the backend of %s lacks an entry this test "
                "forwards",
                path);
  if (io.plugin->init &&
      (status = io.plugin->init(s->host, s->ctx, &s->inner_self)) != NULL)
    return status;
  s->inner_api = io.plugin;
  s->inner = t;
  return NULL;
}

static char *copy_env(const char *name) {
  const char *value = getenv(name);
  return value && *value ? strdup(value) : NULL;
}

static void free_state(two_state *s) {
  int d;
  for (d = 0; d < NUM_DEVICES; ++d) {
    free(s->devices[d].arch);
    free(s->devices[d].fingerprint);
  }
  free(s->target1);
  free(s->log);
  free(s);
}

/* Each device's fingerprint: the wrapped backend's (its toolchain and CPU,
 * which the code depends on) and the device's extra bytes. */
static kjit_status *make_fingerprints(two_state *s) {
  static const char *const extra[NUM_DEVICES] = {
      "KJIT_TEST_TWO_DEVICES_FINGERPRINT0",
      "KJIT_TEST_TWO_DEVICES_FINGERPRINT1"};
  kjit_backend_fingerprint_args args;
  kjit_status *status;
  int d;
  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.fingerprint.struct_size = sizeof args.fingerprint;
  args.device = 0;
  if ((status = s->inner->fingerprint(s->inner_self, &args)) != NULL)
    return status;
  for (d = 0; d < NUM_DEVICES; ++d) {
    const char *more = getenv(extra[d]);
    size_t more_len = more ? strlen(more) : 0;
    char *bytes = malloc(args.fingerprint.size + more_len + 1);
    if (!bytes)
      return fail(s, KJIT_STATUS_RESOURCE_EXHAUSTED,
                  "two-devices: out of memory");
    memcpy(bytes, args.fingerprint.data, args.fingerprint.size);
    memcpy(bytes + args.fingerprint.size, more ? more : "", more_len);
    s->devices[d].fingerprint = bytes;
    s->devices[d].fingerprint_len = args.fingerprint.size + more_len;
  }
  if (args.fingerprint.release)
    args.fingerprint.release(args.fingerprint.owner, args.fingerprint.data,
                             args.fingerprint.size);
  return NULL;
}

static kjit_status *two_init(const kjit_host_api *host, kjit_host_context *ctx,
                             void **self) {
  const char *path = getenv("KJIT_TEST_TWO_DEVICES_LIBRARY");
  two_state *s;
  kjit_status *status;
  if (!path || !*path)
    path = TWO_DEVICES_DEFAULT_LIBRARY;
  s = calloc(1, sizeof *s);
  if (!s)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED,
                               "two-devices: out of memory", 26);
  s->host = host;
  s->ctx = ctx;
  s->devices[0].arch = copy_env("KJIT_TEST_TWO_DEVICES_ARCH0");
  s->devices[1].arch = copy_env("KJIT_TEST_TWO_DEVICES_ARCH1");
  s->target1 = copy_env("KJIT_TEST_TWO_DEVICES_TARGET1");
  s->log = copy_env("KJIT_TEST_TWO_DEVICES_LOG");
  if ((status = open_inner(s, path)) != NULL ||
      (status = make_fingerprints(s)) != NULL) {
    if (s->inner_api && s->inner_api->fini)
      s->inner_api->fini(s->inner_self);
    free_state(s);
    return status;
  }
  *self = s;
  return NULL;
}

static void two_fini(void *self) {
  two_state *s = self;
  if (s->inner_api->fini)
    s->inner_api->fini(s->inner_self);
  free_state(s);
}

static const kjit_backend_table two_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "two-devices",
    .name_len = sizeof "two-devices" - 1,
    .describe = two_describe,
    .fingerprint = two_fingerprint,
    .parse_options = two_parse_options,
    .destroy_options = two_destroy_options,
    .finalize = two_finalize,
    .load = two_load,
    .launch = two_launch,
    .unload = two_unload,
    .device_count = two_device_count,
};

static const kjit_plugin_api two_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "two-devices",
    .name_len = sizeof "two-devices" - 1,
    .version = "1",
    .version_len = 1,
    /* The wrapped host backend is thread-safe; the state written after init
     * is the handle counter (atomic) and the log (one write per line). */
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = two_init,
    .fini = two_fini,
    .backend = &two_backend,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin) ||
      io->host_abi_major != KJIT_ABI_MAJOR ||
      io->host_max_minor < KJIT_ABI_MINOR)
    return KJIT_STATUS_FAILED_PRECONDITION;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &two_api;
  return KJIT_STATUS_OK;
}
