/*===- TestClockBackend.c - a backend of scripted device times ------------===*\
|*                                                                            *|
|* Backend "test-clock" for the autotuner's ThreadSanitizer test              *|
|* (unittests/Runtime/AutotuneThreadTest.cpp): it loads any bytes, runs       *|
|* nothing, and reports each KJIT_LAUNCH_TIMED launch's device time from a    *|
|* thread of its own, after the launch has returned, as the cuda backend's    *|
|* timer thread does; synchronize returns once every report queued is handed  *|
|* over, so that what a test sees after it depends on no timing. The time is  *|
|* scripted by the loadable, which unittests/Runtime/Inputs/TestCompiler.cpp  *|
|* makes ("count C=3 ..."): kernel count takes C microseconds, any other      *|
|* kernel 20 - C. C = 96 fails its launch with ABORTED, 97 reports ABORTED,   *|
|* 98 reports nothing, 99 reports RESOURCE_EXHAUSTED. Plain C (the host       *|
|* backend's fibers do not run under TSan).                                   *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime under -std=c99. */
#define _POSIX_C_SOURCE 200809L

#include "kjit-c/Plugin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kjit_host_api *host;
static kjit_host_context *context;

static kjit_status *fail(int32_t code, const char *message) {
  return host->status_create(code, message, strlen(message));
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*===--- the reporter thread -------------------------------------------===*/

typedef struct report {
  struct report *next;
  kjit_device_time time;
} report;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static report *head, *tail;
static int stopping;
/* Reports queued and handed to the host: synchronize waits until they are
 * equal, as a device's work is done when synchronize returns. */
static uint64_t queued, delivered;
static pthread_t reporter;

static void *report_all(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  for (;;) {
    report *r;
    while (!head && !stopping)
      pthread_cond_wait(&changed, &lock);
    if (!head)
      break;
    r = head;
    head = r->next;
    if (!head)
      tail = NULL;
    pthread_mutex_unlock(&lock);
    host->report_device_time(context, &r->time);
    free(r);
    pthread_mutex_lock(&lock);
    ++delivered;
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

/*===--- the backend ----------------------------------------------------===*/

static const kjit_artifact_format format = {.struct_size =
                                                sizeof(kjit_artifact_format),
                                            .name = "test-clock",
                                            .name_len = 10};
static const kjit_artifact_format *const formats[] = {&format};

static kjit_status *clock_describe(void *self,
                                   kjit_backend_describe_args *args) {
  (void)self;
  if (args->device != 0)
    return fail(KJIT_STATUS_INVALID_ARGUMENT, "no such device");
  args->target = "test-clock";
  args->target_len = 10;
  args->arch = "none";
  args->arch_len = 4;
  args->warp_size = 32;
  args->num_formats = 1;
  args->formats = formats;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, uuid)) {
    args->multiprocessor_count = 1;
    args->max_threads_per_block = 1024;
    args->max_shared_memory_per_block = 49152;
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, launch_flags))
    args->launch_flags = KJIT_LAUNCH_TIMED;
  return NULL;
}

static kjit_status *clock_device_count(void *self,
                                       kjit_backend_device_count_args *args) {
  (void)self;
  args->count = 1;
  return NULL;
}

static kjit_status *clock_synchronize(void *self,
                                      kjit_backend_synchronize_args *args) {
  (void)self;
  (void)args;
  pthread_mutex_lock(&lock);
  while (delivered != queued)
    pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int no_options;

static kjit_status *clock_parse_options(void *self,
                                        kjit_backend_parse_options_args *args) {
  (void)self;
  args->options_handle = &no_options;
  return NULL;
}

static void clock_destroy_options(void *self, void *options) {
  (void)self;
  (void)options;
}

static kjit_status *clock_fingerprint(void *self,
                                      kjit_backend_fingerprint_args *args) {
  static const char fp[] = "test-clock-1";
  (void)self;
  args->fingerprint.data = (const uint8_t *)fp;
  args->fingerprint.size = sizeof fp - 1;
  return NULL;
}

static void release_malloced(void *owner, const uint8_t *data, size_t size) {
  (void)owner;
  (void)size;
  free((void *)data);
}

static kjit_status *clock_finalize(void *self,
                                   kjit_backend_finalize_args *args) {
  uint8_t *out;
  (void)self;
  out = malloc(args->artifact_size ? args->artifact_size : 1);
  if (!out)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(out, args->artifact, args->artifact_size);
  args->loadable.data = out;
  args->loadable.size = args->artifact_size;
  args->loadable.release = release_malloced;
  return NULL;
}

typedef struct clock_kernel {
  char name[32];
  uint64_t nanos; /* each launch's device time */
  long c;
} clock_kernel;

static kjit_status *clock_load(void *self, kjit_backend_load_args *args) {
  clock_kernel *k;
  const char *text = (const char *)args->loadable;
  size_t at, size = args->loadable_size;
  long c = 0;
  (void)self;
  k = calloc(1, sizeof *k);
  if (!k)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (at = 0; at < size && at + 1 < sizeof k->name && text[at] != ' '; ++at)
    k->name[at] = text[at];
  for (at = 0; at + 2 < size; ++at)
    if (text[at] == 'C' && text[at + 1] == '=') {
      c = strtol(text + at + 2, NULL, 10);
      break;
    }
  k->nanos = 1000u * (uint64_t)(strcmp(k->name, "count") == 0 ? c : 20 - c);
  k->c = c;
  args->kernel = k;
  return NULL;
}

static kjit_status *clock_launch(void *self, kjit_backend_launch_args *args) {
  const clock_kernel *k = args->kernel;
  report *r;
  uint64_t start;
  (void)self;
  if (k->c == 96)
    return fail(KJIT_STATUS_ABORTED, "the device is lost (scripted)");
  if (!(args->flags & KJIT_LAUNCH_TIMED) || k->c == 98)
    return NULL;
  r = calloc(1, sizeof *r);
  if (!r)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  start = now_ns();
  r->time.struct_size = sizeof r->time;
  r->time.correlation_id = args->correlation_id;
  r->time.kernel_name = k->name;
  r->time.kernel_name_len = strlen(k->name);
  r->time.stream = args->stream;
  r->time.start_ns = start;
  r->time.end_ns = start + k->nanos;
  r->time.launch_status = k->c == 97   ? KJIT_STATUS_ABORTED
                          : k->c == 99 ? KJIT_STATUS_RESOURCE_EXHAUSTED
                                       : KJIT_STATUS_OK;
  pthread_mutex_lock(&lock);
  if (tail)
    tail->next = r;
  else
    head = r;
  tail = r;
  ++queued;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  return NULL;
}

static kjit_status *clock_unload(void *self, kjit_backend_unload_args *args) {
  (void)self;
  free(args->kernel);
  return NULL;
}

/*===--- lifecycle ------------------------------------------------------===*/

static int instance;

static kjit_status *clock_init(const kjit_host_api *h, kjit_host_context *ctx,
                               void **self) {
  host = h;
  context = ctx;
  stopping = 0;
  if (!KJIT_HAS_FIELD(h, kjit_host_api, report_device_time))
    return fail(KJIT_STATUS_FAILED_PRECONDITION,
                "the host cannot take device times");
  if (pthread_create(&reporter, NULL, report_all, NULL) != 0)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "cannot start a thread");
  *self = &instance;
  return NULL;
}

static void clock_fini(void *self) {
  (void)self;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  pthread_join(reporter, NULL);
}

static const kjit_backend_table clock_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "test-clock",
    .name_len = 10,
    .describe = clock_describe,
    .fingerprint = clock_fingerprint,
    .parse_options = clock_parse_options,
    .destroy_options = clock_destroy_options,
    .finalize = clock_finalize,
    .load = clock_load,
    .launch = clock_launch,
    .unload = clock_unload,
    .device_count = clock_device_count,
    .synchronize = clock_synchronize,
};

static const kjit_plugin_api clock_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "test-clock",
    .name_len = 10,
    .version = "1",
    .version_len = 1,
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = clock_init,
    .fini = clock_fini,
    .backend = &clock_backend,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin) ||
      io->host_abi_major != KJIT_ABI_MAJOR)
    return KJIT_STATUS_INVALID_ARGUMENT;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &clock_api;
  return KJIT_STATUS_OK;
}
