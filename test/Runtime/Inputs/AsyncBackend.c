/*===- AsyncBackend.c - the host backend as an asynchronous backend -------===*\
|*                                                                            *|
|* Backend "async-test" serves target "host" as a GPU backend without device  *|
|* memory would: launch only enqueues (it copies the launch and returns), and *|
|* synchronize runs what was enqueued, so that outputs read before a          *|
|* synchronize still hold their old values. It opens the host backend         *|
|* (libkjit-host.so) as a plugin of its own and forwards everything else to   *|
|* it (test/kjit-run/asynchronous-backend.test).                              *|
|*                                                                            *|
|* KJIT_TEST_ASYNC_ERROR (read at init) makes it report an asynchronous       *|
|* error through the host's report_async_error, as a backend does for an      *|
|* error no entry the host waits on will see:                                 *|
|*   launch   from the first launch, which still returns OK (enqueued);      *|
|*   fini     from fini, as a backend whose threads drain there does;        *|
|* in kernel 'add', the kernel the test launches.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* POSIX: strdup (the build is strict C99). */
#define _POSIX_C_SOURCE 200809L

#include "kjit-c/Plugin.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifndef ASYNC_HOST_LIBRARY
#error "ASYNC_HOST_LIBRARY: the path of libkjit-host.so"
#endif

/* One enqueued launch: the arguments as they were passed, with copies of
 * what they point to (borrowed for the call only). */
typedef struct queued_launch {
  kjit_backend_launch_args args;
  uint64_t *values;
  kjit_arg *arg_copies;
  const kjit_arg **arg_pointers;
} queued_launch;

typedef struct async_state {
  const kjit_host_api *host;
  kjit_host_context *ctx;
  const kjit_plugin_api *inner_api;
  const kjit_backend_table *inner;
  void *inner_self;
  char *error_at; /* KJIT_TEST_ASYNC_ERROR, or NULL */
  int reported;
  queued_launch *queue;
  size_t queued, capacity;
} async_state;

static kjit_status *fail(const async_state *s, int32_t code,
                         const char *message) {
  return s->host->status_create(code, message, strlen(message));
}

static void report(async_state *s, const char *message) {
  s->host->report_async_error(
      s->ctx, "add", 3,
      s->host->status_create(KJIT_STATUS_ABORTED, message, strlen(message)));
}

static void free_queued(queued_launch *q) {
  free(q->values);
  free(q->arg_copies);
  free(q->arg_pointers);
}

static kjit_status *async_describe(void *self, kjit_backend_describe_args *a) {
  async_state *s = self;
  return s->inner->describe(s->inner_self, a);
}

static kjit_status *async_fingerprint(void *self,
                                      kjit_backend_fingerprint_args *a) {
  async_state *s = self;
  return s->inner->fingerprint(s->inner_self, a);
}

static kjit_status *async_parse_options(void *self,
                                        kjit_backend_parse_options_args *a) {
  async_state *s = self;
  return s->inner->parse_options(s->inner_self, a);
}

static void async_destroy_options(void *self, void *handle) {
  async_state *s = self;
  s->inner->destroy_options(s->inner_self, handle);
}

static kjit_status *async_finalize(void *self, kjit_backend_finalize_args *a) {
  async_state *s = self;
  return s->inner->finalize(s->inner_self, a);
}

static kjit_status *async_load(void *self, kjit_backend_load_args *a) {
  async_state *s = self;
  return s->inner->load(s->inner_self, a);
}

static kjit_status *async_launch(void *self, kjit_backend_launch_args *a) {
  async_state *s = self;
  queued_launch q;
  size_t i;
  memset(&q, 0, sizeof q);
  q.args = *a;
  if (a->values) {
    q.values = malloc((a->num_args ? a->num_args : 1) * sizeof *q.values);
    if (!q.values)
      return fail(s, KJIT_STATUS_RESOURCE_EXHAUSTED, "async-test: no memory");
    memcpy(q.values, a->values, a->num_args * sizeof *q.values);
    q.args.values = q.values;
  }
  if (a->args) {
    q.arg_copies = malloc((a->num_args ? a->num_args : 1) * sizeof(kjit_arg));
    q.arg_pointers =
        malloc((a->num_args ? a->num_args : 1) * sizeof(const kjit_arg *));
    if (!q.arg_copies || !q.arg_pointers) {
      free_queued(&q);
      return fail(s, KJIT_STATUS_RESOURCE_EXHAUSTED, "async-test: no memory");
    }
    for (i = 0; i < a->num_args; ++i) {
      q.arg_copies[i] = *a->args[i];
      q.arg_pointers[i] = &q.arg_copies[i];
    }
    q.args.args = q.arg_pointers;
  }
  if (s->queued == s->capacity) {
    size_t capacity = s->capacity ? 2 * s->capacity : 16;
    queued_launch *grown = realloc(s->queue, capacity * sizeof *grown);
    if (!grown) {
      free_queued(&q);
      return fail(s, KJIT_STATUS_RESOURCE_EXHAUSTED, "async-test: no memory");
    }
    s->queue = grown;
    s->capacity = capacity;
  }
  s->queue[s->queued++] = q;
  if (s->error_at && strcmp(s->error_at, "launch") == 0 && !s->reported++)
    report(s, "illegal address (found by the backend after the launch "
              "was enqueued)");
  return NULL;
}

/* Runs every enqueued launch; the first error. */
static kjit_status *async_synchronize(void *self,
                                      kjit_backend_synchronize_args *a) {
  async_state *s = self;
  kjit_status *first = NULL;
  size_t i;
  (void)a;
  for (i = 0; i < s->queued; ++i) {
    kjit_status *status = s->inner->launch(s->inner_self, &s->queue[i].args);
    if (status && !first)
      first = status;
    else if (status)
      s->host->status_destroy(status);
    free_queued(&s->queue[i]);
  }
  s->queued = 0;
  return first;
}

static kjit_status *async_unload(void *self, kjit_backend_unload_args *a) {
  async_state *s = self;
  return s->inner->unload(s->inner_self, a);
}

static kjit_status *open_inner(async_state *s) {
  kjit_plugin_negotiate_fn negotiate;
  kjit_negotiate io;
  kjit_status *status;
  void *handle = dlopen(ASYNC_HOST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(s, KJIT_STATUS_NOT_FOUND,
                "async-test: cannot open the host backend");
  *(void **)(&negotiate) = dlsym(handle, KJIT_PLUGIN_ENTRY_NAME);
  if (!negotiate)
    return fail(s, KJIT_STATUS_FAILED_PRECONDITION,
                "async-test: the host backend is not a kjit plugin");
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
                "async-test: the host backend cannot be wrapped");
  if (io.plugin->init &&
      (status = io.plugin->init(s->host, s->ctx, &s->inner_self)) != NULL)
    return status;
  s->inner_api = io.plugin;
  s->inner = io.plugin->backend;
  return NULL;
}

static kjit_status *async_init(const kjit_host_api *host,
                               kjit_host_context *ctx, void **self) {
  const char *error_at = getenv("KJIT_TEST_ASYNC_ERROR");
  kjit_status *status;
  async_state *s = calloc(1, sizeof *s);
  if (!s)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED,
                               "async-test: no memory", 21);
  s->host = host;
  s->ctx = ctx;
  s->error_at = error_at && *error_at ? strdup(error_at) : NULL;
  if ((status = open_inner(s)) != NULL) {
    free(s->error_at);
    free(s);
    return status;
  }
  *self = s;
  return NULL;
}

static void async_fini(void *self) {
  async_state *s = self;
  size_t i;
  if (s->error_at && strcmp(s->error_at, "fini") == 0)
    report(s, "illegal address (found while the backend shut down)");
  for (i = 0; i < s->queued; ++i)
    free_queued(&s->queue[i]);
  free(s->queue);
  if (s->inner_api->fini)
    s->inner_api->fini(s->inner_self);
  free(s->error_at);
  free(s);
}

static const kjit_backend_table async_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "async-test",
    .name_len = sizeof "async-test" - 1,
    .describe = async_describe,
    .fingerprint = async_fingerprint,
    .parse_options = async_parse_options,
    .destroy_options = async_destroy_options,
    .finalize = async_finalize,
    .load = async_load,
    .launch = async_launch,
    .unload = async_unload,
    .synchronize = async_synchronize,
};

static const kjit_plugin_api async_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "async-test",
    .name_len = sizeof "async-test" - 1,
    .version = "1",
    .version_len = 1,
    /* Not thread-safe: the host serializes its entries, and so the queue. */
    .init = async_init,
    .fini = async_fini,
    .backend = &async_backend,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin) ||
      io->host_abi_major != KJIT_ABI_MAJOR ||
      io->host_max_minor < KJIT_ABI_MINOR)
    return KJIT_STATUS_FAILED_PRECONDITION;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &async_api;
  return KJIT_STATUS_OK;
}
