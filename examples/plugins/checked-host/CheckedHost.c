/*===- CheckedHost.c - the host backend, checking every launch ----*- C -*-===*\
|*                                                                            *|
|* An out-of-tree backend plugin for kjit. Backend "checked-host" serves      *|
|* target "host": it opens the installed host backend (libkjit-host.so) as a  *|
|* plugin of its own, negotiates with it as a host would, and forwards every  *|
|* entry through the table that negotiation returned, after checking what a  *|
|* launch carries:                                                            *|
|*   - the launch's programs (grid x * y * z) against CHECKED_HOST_MAX_PROGRAMS
*|
|*   - every argument has ABI 1.1 storage (a 1.0-sized kjit_arg is refused)  *|
|*   - pointer storage is 8 bytes, and an address is 0 only for None         *|
|* The compiler does not know of the plugin: the target stays "host", so    *|
|* kjit's host codegen makes the artifacts (docs/WritingBackendPlugin.md).   *|
|*                                                                            *|
|* Environment:                                                               *|
|*   CHECKED_HOST_LIBRARY=path     the host backend to wrap (default: the    *|
|*                                 one of the kjit it was built against)     *|
|*   CHECKED_HOST_MAX_PROGRAMS=N   refuse launches of more than N programs   *|
|*   CHECKED_HOST_LOAD_LOG=path    append one line per load to path: the      *|
|*                                 kernel, the loadable's size and its first *|
|*                                 bytes (what the host handed the loader)   *|
|*                                                                            *|
|* Built only against kjit-c/Plugin.h.                                       *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHECKED_HOST_DEFAULT_LIBRARY
#error "CHECKED_HOST_DEFAULT_LIBRARY: the path of libkjit-host.so"
#endif

typedef struct checked_state {
  const kjit_host_api *host;
  kjit_host_context *ctx;
  const kjit_backend_table *inner; /* the wrapped backend's table */
  const kjit_plugin_api *inner_api;
  void *inner_self;
  uint64_t max_programs; /* 0: no limit */
  /* Counted with atomics: the plugin is KJIT_CAP_THREAD_SAFE like the
   * backend it wraps, so launches arrive concurrently. */
  uint64_t launches, refused;
  const char *load_log; /* NULL: loads are not recorded */
} checked_state;

/* A status with a formatted message. */
static kjit_status *fail(const kjit_host_api *host, int32_t code,
                         const char *format, ...) {
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
  return host->status_create(code, message, (size_t)n);
}

/*===--- Checks
 * ------------------------------------------------------------===*/

static kjit_status *check_launch(checked_state *s,
                                 const kjit_backend_launch_args *args) {
  uint64_t programs = (uint64_t)args->grid[0] * args->grid[1];
  size_t i;
  /* Saturate rather than wrap: three 32-bit extents can exceed 64 bits. */
  if (args->grid[2] && programs > UINT64_MAX / args->grid[2])
    programs = UINT64_MAX;
  else
    programs *= args->grid[2];
  if (s->max_programs && programs > s->max_programs)
    return fail(s->host, KJIT_STATUS_RESOURCE_EXHAUSTED,
                "checked-host: the launch has %llu programs (grid %ux%ux%u); "
                "CHECKED_HOST_MAX_PROGRAMS allows %llu",
                (unsigned long long)programs, args->grid[0], args->grid[1],
                args->grid[2], (unsigned long long)s->max_programs);
  for (i = 0; i < args->num_args; ++i) {
    const kjit_arg *arg = args->args[i];
    if (!KJIT_HAS_FIELD(arg, kjit_arg, bits_size))
      return fail(s->host, KJIT_STATUS_INVALID_ARGUMENT,
                  "checked-host: argument %zu ('%.*s') has no ABI 1.1 storage "
                  "(struct_size %zu)",
                  i, (int)arg->name_len, arg->name, arg->struct_size);
    if (!(arg->flags & KJIT_ARG_FLAG_POINTER))
      continue;
    if (arg->bits_size != 8)
      return fail(s->host, KJIT_STATUS_INVALID_ARGUMENT,
                  "checked-host: pointer argument '%.*s' has %u bytes of "
                  "storage, not 8",
                  (int)arg->name_len, arg->name, arg->bits_size);
    if (arg->bits == 0 && !(arg->flags & KJIT_ARG_FLAG_NULL))
      return fail(s->host, KJIT_STATUS_INVALID_ARGUMENT,
                  "checked-host: pointer argument '%.*s' is address 0 but "
                  "not None",
                  (int)arg->name_len, arg->name);
  }
  return NULL;
}

/*===--- Forwarding entries
 * ------------------------------------------------===*/
/* Every entry hands the host's own args struct to the wrapped backend: its
 * struct_size is the host's, so the wrapped backend sees exactly what the
 * host sent, whatever minor either side was built for. */

static kjit_status *checked_describe(void *self,
                                     kjit_backend_describe_args *a) {
  checked_state *s = self;
  return s->inner->describe(s->inner_self, a);
}

static kjit_status *checked_fingerprint(void *self,
                                        kjit_backend_fingerprint_args *a) {
  checked_state *s = self;
  return s->inner->fingerprint(s->inner_self, a);
}

static kjit_status *checked_finalize(void *self,
                                     kjit_backend_finalize_args *a) {
  checked_state *s = self;
  return s->inner->finalize(s->inner_self, a);
}

/* One line per load: "load <kernel> <size> <first 8 bytes in hex>". A
 * loader that records what it was given lets a test prove what reached it
 * (for example, that no unverified cache entry ever did). */
static void record_load(const checked_state *s,
                        const kjit_backend_load_args *a) {
  FILE *log = fopen(s->load_log, "a");
  size_t i;
  if (!log)
    return;
  fprintf(log, "load %.*s %zu ", (int)a->kernel_name_len, a->kernel_name,
          a->loadable_size);
  for (i = 0; i < a->loadable_size && i < 8; ++i)
    fprintf(log, "%02x", a->loadable[i]);
  fputc('\n', log);
  fclose(log);
}

static kjit_status *checked_load(void *self, kjit_backend_load_args *a) {
  checked_state *s = self;
  kjit_status *status;
  if (s->load_log)
    record_load(s, a);
  status = s->inner->load(s->inner_self, a);
  /* The checks read every launch's kjit_args, so launches must carry them
   * even where the wrapped backend would take values alone (ABI 1.4). */
  if (!status && KJIT_HAS_FIELD(a, kjit_backend_load_args, takes_values))
    a->takes_values = 0;
  return status;
}

static kjit_status *checked_launch(void *self, kjit_backend_launch_args *a) {
  checked_state *s = self;
  kjit_status *refused = check_launch(s, a);
  if (refused) {
    __atomic_fetch_add(&s->refused, 1, __ATOMIC_RELAXED);
    return refused;
  }
  __atomic_fetch_add(&s->launches, 1, __ATOMIC_RELAXED);
  return s->inner->launch(s->inner_self, a);
}

static kjit_status *checked_unload(void *self, kjit_backend_unload_args *a) {
  checked_state *s = self;
  return s->inner->unload(s->inner_self, a);
}

static kjit_status *checked_device_count(void *self,
                                         kjit_backend_device_count_args *a) {
  checked_state *s = self;
  return s->inner->device_count(s->inner_self, a);
}

static kjit_status *checked_allocate(void *self,
                                     kjit_backend_allocate_args *a) {
  checked_state *s = self;
  return s->inner->allocate(s->inner_self, a);
}

static kjit_status *checked_deallocate(void *self,
                                       kjit_backend_deallocate_args *a) {
  checked_state *s = self;
  return s->inner->deallocate(s->inner_self, a);
}

static kjit_status *checked_copy(void *self, kjit_backend_copy_args *a) {
  checked_state *s = self;
  return s->inner->copy(s->inner_self, a);
}

/*===--- Opening the wrapped backend
 * ---------------------------------------===*/

/* The slots this table forwards: the wrapped backend must have each, and
 * must leave synchronize NULL (launches complete before launch returns), as
 * this table does; otherwise the wrapper would change what the host sees. */
static const char *missing_slot(const kjit_backend_table *t) {
  if (t->struct_size < KJIT_STRUCT_SIZE(kjit_backend_table, copy))
    return "the ABI 1.2 slots (allocate, deallocate, copy)";
  if (!t->describe)
    return "describe";
  if (!t->fingerprint)
    return "fingerprint";
  if (!t->finalize)
    return "finalize";
  if (!t->load || !t->unload)
    return "load and unload";
  if (!t->launch)
    return "launch";
  if (!t->device_count)
    return "device_count";
  if (!t->allocate || !t->deallocate || !t->copy)
    return "allocate, deallocate and copy";
  return NULL;
}

static kjit_status *open_inner(checked_state *s, const char *path) {
  kjit_plugin_negotiate_fn negotiate;
  kjit_negotiate io;
  const char *missing;
  kjit_status *status;
  /* RTLD_LOCAL: the wrapped plugin's symbols stay out of the process
   * namespace. Never closed, as the host never closes plugins. */
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(s->host, KJIT_STATUS_NOT_FOUND,
                "checked-host: cannot open the host backend: %s", dlerror());
  *(void **)(&negotiate) = dlsym(handle, KJIT_PLUGIN_ENTRY_NAME);
  if (!negotiate)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: %s is not a kjit plugin (no %s)", path,
                KJIT_PLUGIN_ENTRY_NAME);
  /* Negotiate as a host of this header's minor at most, and no newer than
   * the real host: the wrapped plugin then gets the real host's API. */
  memset(&io, 0, sizeof io);
  io.struct_size = sizeof io;
  io.host_abi_major = KJIT_ABI_MAJOR;
  io.host_min_minor = 0;
  io.host_max_minor =
      s->host->abi_minor < KJIT_ABI_MINOR ? s->host->abi_minor : KJIT_ABI_MINOR;
  if (negotiate(&io) != KJIT_STATUS_OK || !io.plugin)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: %s refused to negotiate: %.*s", path,
                (int)io.reject_reason_len,
                io.reject_reason ? io.reject_reason : "");
  if (io.plugin_abi_major != KJIT_ABI_MAJOR)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: %s speaks ABI %u, not %u", path,
                io.plugin_abi_major, (unsigned)KJIT_ABI_MAJOR);
  if (!KJIT_HAS_FIELD(io.plugin, kjit_plugin_api, backend) ||
      !io.plugin->backend)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: %s has no backend", path);
  missing = missing_slot(io.plugin->backend);
  if (missing)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: the backend '%.*s' of %s is not one this "
                "wrapper forwards to: it lacks %s",
                (int)io.plugin->backend->name_len, io.plugin->backend->name,
                path, missing);
  if (io.plugin->backend->synchronize)
    return fail(s->host, KJIT_STATUS_FAILED_PRECONDITION,
                "checked-host: the backend '%.*s' of %s is not one this "
                "wrapper forwards to: it has synchronize (launches that "
                "complete later), which this table leaves NULL",
                (int)io.plugin->backend->name_len, io.plugin->backend->name,
                path);
  /* The wrapped plugin logs through our context: its messages carry our
   * name, which is what the user loaded. */
  if (io.plugin->init &&
      (status = io.plugin->init(s->host, s->ctx, &s->inner_self)) != NULL)
    return status;
  s->inner_api = io.plugin;
  s->inner = io.plugin->backend;
  return NULL;
}

static kjit_status *checked_init(const kjit_host_api *host,
                                 kjit_host_context *ctx, void **self) {
  const char *path = getenv("CHECKED_HOST_LIBRARY");
  const char *limit = getenv("CHECKED_HOST_MAX_PROGRAMS");
  checked_state *s;
  kjit_status *status;
  char line[600];
  int n;
  if (!path || !*path)
    path = CHECKED_HOST_DEFAULT_LIBRARY;
  s = calloc(1, sizeof *s);
  if (!s)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED,
                               "checked-host: out of memory", 27);
  s->host = host;
  s->ctx = ctx;
  s->load_log = getenv("CHECKED_HOST_LOAD_LOG");
  if (s->load_log && !*s->load_log)
    s->load_log = NULL;
  if (limit && *limit) {
    char *end;
    unsigned long long value;
    errno = 0;
    value = strtoull(limit, &end, 10);
    if (*end || errno || value == 0 || limit[0] == '-') {
      free(s);
      return fail(host, KJIT_STATUS_INVALID_ARGUMENT,
                  "checked-host: CHECKED_HOST_MAX_PROGRAMS must be a positive "
                  "count; got '%s'",
                  limit);
    }
    s->max_programs = value;
  }
  if ((status = open_inner(s, path)) != NULL) {
    free(s);
    return status;
  }
  n = snprintf(line, sizeof line, "forwarding to backend '%.*s' %.*s of %s",
               (int)s->inner->name_len, s->inner->name,
               (int)s->inner_api->version_len, s->inner_api->version, path);
  host->log(ctx, KJIT_LOG_DEBUG, line,
            n < (int)sizeof line ? (size_t)n : sizeof line - 1);
  *self = s;
  return NULL;
}

static void checked_fini(void *self) {
  checked_state *s = self;
  char line[128];
  int n =
      snprintf(line, sizeof line, "%llu launches checked, %llu refused",
               (unsigned long long)s->launches, (unsigned long long)s->refused);
  s->host->log(s->ctx, KJIT_LOG_INFO, line, (size_t)n);
  if (s->inner_api->fini)
    s->inner_api->fini(s->inner_self);
  free(s);
}

/* synchronize stays NULL, as the host backend's does; so do the deprecated
 * parse_options and destroy_options, which the runtime never calls. */
static const kjit_backend_table checked_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "checked-host",
    .name_len = sizeof "checked-host" - 1,
    .describe = checked_describe,
    .fingerprint = checked_fingerprint,
    .finalize = checked_finalize,
    .load = checked_load,
    .launch = checked_launch,
    .unload = checked_unload,
    .device_count = checked_device_count,
    .allocate = checked_allocate,
    .deallocate = checked_deallocate,
    .copy = checked_copy,
};

static const kjit_plugin_api checked_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "checked-host",
    .name_len = sizeof "checked-host" - 1,
    .version = "1",
    .version_len = 1,
    /* The wrapped host backend is thread-safe, and so are the checks (they
     * read only the launch) and the counters (atomics). */
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = checked_init,
    .fini = checked_fini,
    .backend = &checked_backend,
};

/* The plugin asks for the minor it was built against and refuses an older
 * host, rather than check which fields an older host fills in each struct
 * before it forwards one to the wrapped backend. */
KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  static const char too_old[] = "checked-host needs a host of ABI 1.2 or newer";
  if (io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  if (io->host_abi_major != KJIT_ABI_MAJOR ||
      io->host_max_minor < KJIT_ABI_MINOR) {
    if (io->struct_size >=
        KJIT_STRUCT_SIZE(kjit_negotiate, reject_reason_len)) {
      io->reject_reason = too_old;
      io->reject_reason_len = sizeof too_old - 1;
    }
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &checked_api;
  return KJIT_STATUS_OK;
}
