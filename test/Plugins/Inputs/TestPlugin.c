/*===- TestPlugin.c - a C99 plugin that implements every entry ----*- C -*-===*\
|*                                                                            *|
|* Every hook, a backend ("echo") and a cache store ("memory"), each logging  *|
|* what it sees through the host so that lit tests can check order, ids and   *|
|* payloads. As a plugin of ABI 1.1 or newer, the backend has two devices     *|
|* with attributes, logs launch flags and the arguments' storage fields, and  *|
|* reports an asynchronous error when synchronize gets stream 0xbad; the      *|
|* store honours put-if-absent, logs TTLs, removes and describes itself.      *|
|* KJIT_TEST_PROBE_WAIT_MS turns on the launch hooks' concurrency probe       *|
|* (see probe()). Compiled several times with different macros:               *|
|*   TEST_NAME      the plugin's name (a string literal), default "alpha"     *|
|*   TEST_MODE      one of the MODE_* values below, default MODE_NORMAL       *|
|*   KJIT_TEST_PLUGIN_MINOR  the minor the plugin is a build of, default the  *|
|*                  header's: it answers that minor, sizes its tables as      *|
|*                  that minor's header did, and fills and reads only what    *|
|*                  that minor had, as a build against 1.N's header did       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime (the concurrency probe): POSIX, not C99. */
#define _POSIX_C_SOURCE 200809L

#include "kjit-c/Plugin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MODE_NORMAL 0
#define MODE_NULL_TABLE 1   /* negotiate answers a NULL table */
#define MODE_WRONG_MAJOR 2  /* negotiate answers major 2 */
#define MODE_FAIL_INIT 3    /* init returns an error */
#define MODE_HOOK_ERRORS 4  /* every hook and store entry returns an error */
#define MODE_REFUSE 5       /* negotiate refuses the host's minor range */
#define MODE_NO_ENTRY 6     /* exports a misspelled entry symbol */
#define MODE_MAJOR2 7       /* exports only the ABI 2 entry symbol */
#define MODE_SKIP 8         /* the cache hook answers skip */
#define MODE_OLD_MINOR 9    /* tables as an older minor without pre_run */
#define MODE_NEW_MINOR 10   /* tables of a newer minor with extra slots */
#define MODE_SMALL_TABLE 11 /* plugin table smaller than ABI 1.0's */
#define MODE_SERIAL 12      /* not thread-safe; reports overlapping calls */
#define MODE_EXIT_ONLY 13   /* launch_exit is its only launch hook */

#ifndef KJIT_TEST_PLUGIN_MINOR
#define KJIT_TEST_PLUGIN_MINOR KJIT_ABI_MINOR
#endif
#if KJIT_TEST_PLUGIN_MINOR > KJIT_ABI_MINOR
#error "KJIT_TEST_PLUGIN_MINOR is newer than the header"
#endif

/* A plugin of ABI 1.1 or newer: the backend and the store implement the
 * 1.1 entries and read the 1.1 fields. */
#define TEST_HAS_1_1 (KJIT_TEST_PLUGIN_MINOR >= 1)
#define TEST_HAS_1_5 (KJIT_TEST_PLUGIN_MINOR >= 5)
/* Devices of the echo backend (1.1). */
#define TEST_DEVICES 2

#ifndef TEST_NAME
#define TEST_NAME "alpha"
#endif
#ifndef TEST_MODE
#define TEST_MODE MODE_NORMAL
#endif

/* The minor the plugin answers: one past the header's for MODE_NEW_MINOR. */
#if TEST_MODE == MODE_NEW_MINOR
#define TEST_MINOR (KJIT_ABI_MINOR + 1)
#else
#define TEST_MINOR KJIT_TEST_PLUGIN_MINOR
#endif

/* The struct_size of each table the plugin hands out: sizeof in the header
 * of its minor, which is KJIT_STRUCT_SIZE of the last slot that minor had
 * (the tables hold pointers only, so they have no tail padding). */
#if KJIT_TEST_PLUGIN_MINOR == KJIT_ABI_MINOR
#define TEST_HOOKS_SIZE sizeof(kjit_hook_table)
#define TEST_BACKEND_SIZE sizeof(kjit_backend_table)
#define TEST_STORE_SIZE sizeof(kjit_cache_store_table)
#else
#if KJIT_TEST_PLUGIN_MINOR >= 2
#define TEST_HOOKS_SIZE KJIT_STRUCT_SIZE(kjit_hook_table, launch_complete)
#else
#define TEST_HOOKS_SIZE KJIT_STRUCT_SIZE(kjit_hook_table, pre_run)
#endif
#if KJIT_TEST_PLUGIN_MINOR >= 3
#define TEST_BACKEND_SIZE KJIT_STRUCT_SIZE(kjit_backend_table, specialize)
#elif KJIT_TEST_PLUGIN_MINOR == 2
#define TEST_BACKEND_SIZE KJIT_STRUCT_SIZE(kjit_backend_table, copy)
#elif KJIT_TEST_PLUGIN_MINOR == 1
#define TEST_BACKEND_SIZE KJIT_STRUCT_SIZE(kjit_backend_table, synchronize)
#else
#define TEST_BACKEND_SIZE KJIT_STRUCT_SIZE(kjit_backend_table, unload)
#endif
#if KJIT_TEST_PLUGIN_MINOR >= 1
#define TEST_STORE_SIZE KJIT_STRUCT_SIZE(kjit_cache_store_table, describe)
#else
#define TEST_STORE_SIZE KJIT_STRUCT_SIZE(kjit_cache_store_table, put)
#endif
#endif

static const kjit_host_api *host;
static kjit_host_context *context;

/* printf-style logging through the host. */
static void say(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void say(const char *format, ...) {
  char line[1024];
  va_list ap;
  int n;
  va_start(ap, format);
  n = vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n >= sizeof line)
    n = (int)sizeof line - 1;
  host->log(context, KJIT_LOG_INFO, line, (size_t)n);
}

static kjit_status *fail(int32_t code, const char *message) {
  return host->status_create(code, message, strlen(message));
}

/* Keeps the instance pointer honest: every entry checks it got init's. */
static int instance_tag;

static kjit_status *check_self(void *self, const char *entry) {
  if (self != &instance_tag) {
    say("BUG: %s got a foreign self pointer", entry);
    return fail(KJIT_STATUS_INTERNAL, "foreign self pointer");
  }
#if TEST_MODE == MODE_HOOK_ERRORS
  {
    char message[128];
    snprintf(message, sizeof message, "%s deliberately failed", entry);
    return fail(KJIT_STATUS_INVALID_ARGUMENT, message);
  }
#else
  return NULL;
#endif
}

/* Concurrency probe of the launch hooks: counts the calls in flight and
 * keeps the maximum, which fini reports when KJIT_TEST_PROBE_WAIT_MS is set.
 * With it set, each of the first calls also waits up to that many
 * milliseconds for a second call to arrive, so that a host that runs a
 * thread-safe plugin concurrently is seen to (the maximum exceeds 1) and a
 * host that serializes one is seen to (it stays 1) - whatever the
 * scheduler does with the test's threads. A plugin that is not thread-safe
 * also logs "overlapping calls" whenever two of its calls overlap. */
static int inside, max_inside, probe_waits_left;
static long probe_wait_ms;

static void probe(void) {
  int now = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
  int seen = __atomic_load_n(&max_inside, __ATOMIC_SEQ_CST);
  while (now > seen &&
         !__atomic_compare_exchange_n(&max_inside, &seen, now, 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    ;
#if TEST_MODE == MODE_SERIAL
  if (now != 1)
    host->log(context, KJIT_LOG_ERROR, "overlapping calls", 17);
#endif
  if (probe_wait_ms > 0 && __atomic_load_n(&max_inside, __ATOMIC_SEQ_CST) < 2 &&
      __atomic_sub_fetch(&probe_waits_left, 1, __ATOMIC_SEQ_CST) >= 0) {
    struct timespec start, t;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
      clock_gettime(CLOCK_MONOTONIC, &t);
    while (__atomic_load_n(&max_inside, __ATOMIC_SEQ_CST) < 2 &&
           (t.tv_sec - start.tv_sec) * 1000L +
                   (t.tv_nsec - start.tv_nsec) / 1000000L <
               probe_wait_ms);
  } else {
    volatile unsigned spin;
    for (spin = 0; spin < 20000; ++spin)
      ;
  }
  __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
}

/*===----------------------------------------------------------------------===*\
|* Hooks                                                                      *|
\*===----------------------------------------------------------------------===*/

static kjit_status *test_cache(void *self, const kjit_cache_event *event,
                               int32_t *decision) {
  const kjit_compile_info *info = event->info;
  kjit_status *status = check_self(self, "cache hook");
  if (status)
    return status;
  say("%s: cache kernel=%.*s key=%.*s repr=%.*s target=%.*s device=%d "
      "warmup=%u json=%.*s",
      TEST_NAME, (int)info->kernel_name_len, info->kernel_name,
      (int)info->key_len, info->key, (int)info->repr_len, info->repr,
      (int)info->target_len, info->target, (int)info->device,
      (unsigned)info->is_warmup, (int)info->compile_json_len,
      info->compile_json);
#if TEST_MODE == MODE_SKIP
  *decision = KJIT_CACHE_SKIP;
#else
  (void)decision;
#endif
  return NULL;
}

static kjit_status *test_compiled(void *self,
                                  const kjit_compiled_event *event) {
  kjit_status *status = check_self(self, "compiled hook");
  if (status)
    return status;
  say("%s: compiled kernel=%.*s format=%.*s bytes=%lu metadata=%.*s "
      "compile_ns=%lu",
      TEST_NAME, (int)event->info->kernel_name_len, event->info->kernel_name,
      (int)event->artifact_format_len, event->artifact_format,
      (unsigned long)event->artifact_size, (int)event->metadata_json_len,
      event->metadata_json, (unsigned long)event->compile_ns);
  return NULL;
}

/* What launch_enter leaves in its correlation slot: derived from the id so
 * that launch_exit can check it got this launch's slot back. */
static uint64_t slot_value(const kjit_launch_event *event) {
  return event->correlation_id * 1000 + sizeof(TEST_NAME);
}

/* The 1.1 storage fields of an argument, when it has them and they are set:
 * " [dtype=12 flags=0x1 bits=0x... size=8]". */
static const char *storage_of(const kjit_arg *a, char *out, size_t size) {
  out[0] = '\0';
#if TEST_HAS_1_1
  if (KJIT_HAS_FIELD(a, kjit_arg, bits_size) && a->dtype != 0)
    snprintf(out, size, " [dtype=%d flags=0x%x bits=0x%llx size=%u]",
             (int)a->dtype, (unsigned)a->flags, (unsigned long long)a->bits,
             (unsigned)a->bits_size);
#else
  (void)a;
  (void)size;
#endif
  return out;
}

static void print_args(const char *what, size_t n,
                       const kjit_arg *const *args) {
  size_t i;
  char storage[96];
  for (i = 0; i < n; ++i) {
    const kjit_arg *a = args[i];
    storage_of(a, storage, sizeof storage);
    switch (a->kind) {
    case KJIT_ARG_INT:
    case KJIT_ARG_BOOL:
      say("%s: %s arg %.*s: %.*s = %ld%s", TEST_NAME, what, (int)a->name_len,
          a->name, (int)a->type_len, a->type, (long)a->int_value, storage);
      break;
    case KJIT_ARG_POINTER:
    case KJIT_ARG_UINT:
      say("%s: %s arg %.*s: %.*s = 0x%lx%s", TEST_NAME, what, (int)a->name_len,
          a->name, (int)a->type_len, a->type, (unsigned long)a->uint_value,
          storage);
      break;
    case KJIT_ARG_FLOAT:
      say("%s: %s arg %.*s: %.*s = %g%s", TEST_NAME, what, (int)a->name_len,
          a->name, (int)a->type_len, a->type, a->float_value, storage);
      break;
    default:
      say("%s: %s arg %.*s: %.*s (kind %d)%s", TEST_NAME, what,
          (int)a->name_len, a->name, (int)a->type_len, a->type, (int)a->kind,
          storage);
    }
  }
}

static kjit_status *test_launch_enter(void *self,
                                      const kjit_launch_event *event,
                                      uint64_t *correlation_data) {
  kjit_status *status = check_self(self, "launch_enter hook");
  probe();
  if (status)
    return status;
  if (*correlation_data != 0)
    return fail(KJIT_STATUS_INTERNAL, "correlation slot did not start at 0");
  *correlation_data = slot_value(event);
  say("%s: launch_enter kernel=%.*s id=%lu grid=%u,%u,%u num_warps=%u "
      "stream=%lu metadata=%.*s",
      TEST_NAME, (int)event->kernel_name_len, event->kernel_name,
      (unsigned long)event->correlation_id, (unsigned)event->grid[0],
      (unsigned)event->grid[1], (unsigned)event->grid[2],
      (unsigned)event->num_warps, (unsigned long)event->stream,
      (int)event->metadata_json_len, event->metadata_json);
  print_args("launch", event->num_args, event->args);
  return NULL;
}

static kjit_status *test_launch_exit(void *self, const kjit_launch_event *event,
                                     uint64_t *correlation_data) {
  kjit_status *status = check_self(self, "launch_exit hook");
  probe();
  if (status)
    return status;
  say("%s: launch_exit kernel=%.*s id=%lu slot=%s status=%d", TEST_NAME,
      (int)event->kernel_name_len, event->kernel_name,
      (unsigned long)event->correlation_id,
      *correlation_data == slot_value(event) ? "ok" : "LOST",
      (int)event->launch_status);
  return NULL;
}

static kjit_status *test_pre_run(void *self, const kjit_pre_run_event *event) {
  kjit_status *status = check_self(self, "pre-run hook");
  if (status)
    return status;
#if TEST_MODE == MODE_OLD_MINOR
  /* The table says it ends before this slot: the host must not call it. */
  say("%s: BUG: pre_run called beyond the table's struct_size", TEST_NAME);
#endif
  say("%s: pre_run kernel=%.*s args=%lu", TEST_NAME,
      (int)event->kernel_name_len, event->kernel_name,
      (unsigned long)event->num_args);
  print_args("pre_run", event->num_args, event->args);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* Backend "echo": accepts "text", finalizes it by upper-casing               *|
\*===----------------------------------------------------------------------===*/

static void release_malloced(void *owner, const uint8_t *data, size_t size) {
  (void)owner;
  (void)size;
  free((void *)data);
}

static const kjit_artifact_format format_text = {
    .struct_size = sizeof(kjit_artifact_format), .name = "text", .name_len = 4};
static const kjit_artifact_format format_bytecode = {
    .struct_size = sizeof(kjit_artifact_format),
    .name = "mlir-bytecode",
    .name_len = 13};
static const kjit_artifact_format *const formats[] = {&format_text,
                                                      &format_bytecode};

static kjit_status *echo_describe(void *self,
                                  kjit_backend_describe_args *args) {
  kjit_status *status = check_self(self, "describe");
  if (status)
    return status;
  args->target = "test";
  args->target_len = 4;
  args->arch = "none";
  args->arch_len = 4;
  args->warp_size = 1;
  args->num_formats = 2;
  args->formats = formats;
#if TEST_HAS_1_1
  if (args->device < 0 || args->device >= TEST_DEVICES)
    return fail(KJIT_STATUS_INVALID_ARGUMENT, "no such device");
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, uuid)) {
    int i;
    /* Device attributes that say which device they describe. */
    args->multiprocessor_count = 7 + (uint32_t)args->device;
    args->max_threads_per_block = 64;
    args->max_shared_memory_per_block = 49152;
    for (i = 0; i < 16; ++i)
      args->uuid[i] = (uint8_t)(16 * args->device + i);
  }
#endif
  return NULL;
}

#if TEST_HAS_1_1
static kjit_status *echo_device_count(void *self,
                                      kjit_backend_device_count_args *args) {
  kjit_status *status = check_self(self, "device_count");
  if (status)
    return status;
  args->count = TEST_DEVICES;
  return NULL;
}

/* Stream 0xbad simulates a sticky device error that surfaces only now: it
 * is reported asynchronously, attributed to kernel k, and synchronize
 * itself succeeds. */
static kjit_status *echo_synchronize(void *self,
                                     kjit_backend_synchronize_args *args) {
  kjit_status *status = check_self(self, "synchronize");
  if (status)
    return status;
  say("%s: echo synchronize device=%d stream=0x%llx", TEST_NAME,
      (int)args->device, (unsigned long long)args->stream);
  if (args->stream == 0xbad &&
      KJIT_HAS_FIELD(host, kjit_host_api, report_async_error))
    host->report_async_error(
        context, "k", 1,
        fail(KJIT_STATUS_ABORTED, "illegal address (simulated)"));
  return NULL;
}
#endif

/* Options: "case=upper" (default) or "case=lower". */
static int lower_case_option = 1;
static int upper_case_option = 0;

static kjit_status *echo_parse_options(void *self,
                                       kjit_backend_parse_options_args *args) {
  size_t i;
  kjit_status *status = check_self(self, "parse_options");
  if (status)
    return status;
  args->options_handle = &upper_case_option;
  for (i = 0; i < args->num_options; ++i) {
    const kjit_option *o = args->options[i];
    if (o->name_len == 4 && memcmp(o->name, "case", 4) == 0 &&
        o->value_len == 5 && memcmp(o->value, "lower", 5) == 0) {
      args->options_handle = &lower_case_option;
    } else if (!(o->name_len == 4 && memcmp(o->name, "case", 4) == 0 &&
                 o->value_len == 5 && memcmp(o->value, "upper", 5) == 0)) {
      char message[256];
      snprintf(message, sizeof message, "unknown option '%.*s=%.*s'",
               (int)o->name_len, o->name, (int)o->value_len, o->value);
      args->options_handle = NULL;
      return fail(KJIT_STATUS_INVALID_ARGUMENT, message);
    }
  }
  return NULL;
}

static void echo_destroy_options(void *self, void *options) {
  (void)self;
  say("%s: destroy_options %s", TEST_NAME,
      options == &lower_case_option ? "lower" : "upper");
}

static kjit_status *echo_fingerprint(void *self,
                                     kjit_backend_fingerprint_args *args) {
  static const char fp[] = "echo-toolchain-1";
  kjit_status *status = check_self(self, "fingerprint");
  if (status)
    return status;
  /* Static storage: release stays NULL. */
  args->fingerprint.data = (const uint8_t *)fp;
  args->fingerprint.size = sizeof fp - 1;
  return NULL;
}

static kjit_status *echo_finalize(void *self,
                                  kjit_backend_finalize_args *args) {
  size_t i;
  uint8_t *out;
  int lower = args->options_handle == &lower_case_option;
  kjit_status *status = check_self(self, "finalize");
  if (status)
    return status;
  if (!(args->format_len == 4 && memcmp(args->format, "text", 4) == 0)) {
    char message[256];
    snprintf(message, sizeof message, "format '%.*s' is not accepted",
             (int)args->format_len, args->format);
    return fail(KJIT_STATUS_INVALID_ARGUMENT, message);
  }
#if TEST_HAS_1_1
  if (KJIT_HAS_FIELD(args, kjit_backend_finalize_args, device))
    say("%s: echo finalize device=%d", TEST_NAME, (int)args->device);
#endif
  out = malloc(args->artifact_size ? args->artifact_size : 1);
  if (!out)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (i = 0; i < args->artifact_size; ++i) {
    uint8_t c = args->artifact[i];
    if (!lower && c >= 'a' && c <= 'z')
      c = (uint8_t)(c - 'a' + 'A');
    if (lower && c >= 'A' && c <= 'Z')
      c = (uint8_t)(c - 'A' + 'a');
    out[i] = c;
  }
  args->loadable.data = out;
  args->loadable.size = args->artifact_size;
  args->loadable.release = release_malloced;
#if TEST_HAS_1_5
  /* What it learned: the artifact's size, or, for an artifact that asks for
   * it, something that is not JSON. */
  if (KJIT_HAS_FIELD(args, kjit_backend_finalize_args, info)) {
    char *info = malloc(64);
    if (!info)
      return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    if (args->artifact_size >= 8 && memcmp(args->artifact, "bad-info", 8) == 0)
      snprintf(info, 64, "{\"echo_bytes\":");
    else
      snprintf(info, 64, "{\"echo_bytes\":%zu}", args->artifact_size);
    args->info.data = (const uint8_t *)info;
    args->info.size = strlen(info);
    args->info.release = release_malloced;
  }
#endif
  return NULL;
}

typedef struct echo_kernel {
  char *code;
  size_t size;
  size_t num_values; /* the template's arguments (1.4); 0: none taken */
} echo_kernel;

static kjit_status *echo_load(void *self, kjit_backend_load_args *args) {
  echo_kernel *k;
  kjit_status *status = check_self(self, "load");
  if (status)
    return status;
  k = malloc(sizeof *k);
  if (!k)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  k->code = malloc(args->loadable_size ? args->loadable_size : 1);
  if (!k->code) {
    free(k);
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(k->code, args->loadable, args->loadable_size);
  k->size = args->loadable_size;
  k->num_values = 0;
#if KJIT_TEST_PLUGIN_MINOR >= 4
  /* 1.4: takes any template it is given, so that its launches pass the
   * values alone. */
  if (KJIT_HAS_FIELD(args, kjit_backend_load_args, takes_values) &&
      args->args && args->num_args) {
    say("%s: echo load template of %lu arguments", TEST_NAME,
        (unsigned long)args->num_args);
    k->num_values = args->num_args;
    args->takes_values = 1;
  }
#endif
  args->kernel = k;
  return NULL;
}

static kjit_status *echo_launch(void *self, kjit_backend_launch_args *args) {
  const echo_kernel *k = args->kernel;
  kjit_status *status = check_self(self, "launch");
  if (status)
    return status;
  say("%s: echo launch code=%.*s grid=%u,%u,%u args=%lu", TEST_NAME,
      (int)k->size, k->code, (unsigned)args->grid[0], (unsigned)args->grid[1],
      (unsigned)args->grid[2], (unsigned long)args->num_args);
#if TEST_HAS_1_1
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, cluster) &&
      (args->flags || args->cluster[0]))
    say("%s: echo launch flags=0x%x cluster=%u,%u,%u", TEST_NAME,
        (unsigned)args->flags, (unsigned)args->cluster[0],
        (unsigned)args->cluster[1], (unsigned)args->cluster[2]);
#if KJIT_TEST_PLUGIN_MINOR >= 4
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, values) && args->values) {
    size_t i;
    if (args->args || args->num_args != k->num_values)
      return fail(KJIT_STATUS_INVALID_ARGUMENT,
                  "values with args, or not as many as the template's");
    for (i = 0; i < args->num_args; ++i)
      say("%s: echo launch value %lu = 0x%llx", TEST_NAME, (unsigned long)i,
          (unsigned long long)args->values[i]);
    return NULL;
  }
#endif
  print_args("echo launch", args->num_args, args->args);
#endif
  return NULL;
}

static kjit_status *echo_unload(void *self, kjit_backend_unload_args *args) {
  echo_kernel *k = args->kernel;
  kjit_status *status = check_self(self, "unload");
  if (status)
    return status;
  free(k->code);
  free(k);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* Cache store "memory": one slot is enough for the tests                     *|
\*===----------------------------------------------------------------------===*/

static uint8_t *stored_key, *stored_value;
static size_t stored_key_size, stored_value_size;

static kjit_status *memory_get(void *self, kjit_cache_get_args *args) {
  uint8_t *copy;
  kjit_status *status = check_self(self, "cache store get");
  if (status)
    return status;
  if (!stored_key || stored_key_size != args->key_size ||
      memcmp(stored_key, args->key, args->key_size) != 0)
    return NULL; /* a miss */
  copy = malloc(stored_value_size ? stored_value_size : 1);
  if (!copy)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(copy, stored_value, stored_value_size);
  args->found = 1;
  args->value.data = copy;
  args->value.size = stored_value_size;
  args->value.release = release_malloced;
  return NULL;
}

/* The largest value the store takes (what describe says). */
#define TEST_MAX_VALUE 1024

static kjit_status *memory_put(void *self, const kjit_cache_put_args *args) {
  uint8_t *key, *value;
  kjit_status *status = check_self(self, "cache store put");
  if (status)
    return status;
  if (args->value_size > TEST_MAX_VALUE)
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "value too large");
#if TEST_HAS_1_1
  if (KJIT_HAS_FIELD(args, kjit_cache_put_args, ttl_seconds)) {
    if (args->flags & ~KJIT_CACHE_PUT_IF_ABSENT)
      return fail(KJIT_STATUS_UNIMPLEMENTED, "unknown put flags");
    if (args->ttl_seconds)
      say("%s: memory put ttl=%u", TEST_NAME, (unsigned)args->ttl_seconds);
    if ((args->flags & KJIT_CACHE_PUT_IF_ABSENT) && stored_key &&
        stored_key_size == args->key_size &&
        memcmp(stored_key, args->key, args->key_size) == 0)
      return fail(KJIT_STATUS_ALREADY_EXISTS, "key exists");
  }
#endif
  key = malloc(args->key_size ? args->key_size : 1);
  value = malloc(args->value_size ? args->value_size : 1);
  if (!key || !value) {
    free(key);
    free(value);
    return fail(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(key, args->key, args->key_size);
  memcpy(value, args->value, args->value_size);
  free(stored_key);
  free(stored_value);
  stored_key = key;
  stored_key_size = args->key_size;
  stored_value = value;
  stored_value_size = args->value_size;
  return NULL;
}

#if TEST_HAS_1_1
static kjit_status *memory_remove(void *self, kjit_cache_remove_args *args) {
  kjit_status *status = check_self(self, "cache store remove");
  if (status)
    return status;
  args->found = stored_key && stored_key_size == args->key_size &&
                memcmp(stored_key, args->key, args->key_size) == 0;
  if (args->found) {
    free(stored_key);
    free(stored_value);
    stored_key = stored_value = NULL;
  }
  return NULL;
}

static kjit_status *memory_describe(void *self,
                                    kjit_cache_store_describe_args *args) {
  kjit_status *status = check_self(self, "cache store describe");
  if (status)
    return status;
  args->max_value_size = TEST_MAX_VALUE;
  args->is_remote = 0;
  return NULL;
}
#endif

/*===----------------------------------------------------------------------===*\
|* Lifecycle and tables                                                       *|
\*===----------------------------------------------------------------------===*/

static kjit_status *test_init(const kjit_host_api *h, kjit_host_context *ctx,
                              void **self) {
  host = h;
  context = ctx;
#if TEST_MODE == MODE_FAIL_INIT
  (void)self;
  return fail(KJIT_STATUS_UNAVAILABLE, "refusing to start: " TEST_NAME);
#else
  *self = &instance_tag;
  {
    const char *wait = getenv("KJIT_TEST_PROBE_WAIT_MS");
    probe_wait_ms = wait ? strtol(wait, NULL, 10) : 0;
    inside = max_inside = 0;
    probe_waits_left = 50;
  }
  say("%s: init (host ABI %u.%u)", TEST_NAME, (unsigned)h->abi_major,
      (unsigned)h->abi_minor);
#if TEST_MODE == MODE_NEW_MINOR
  /* Built for a newer minor: use only what the host's minor has. */
  if (h->abi_minor < TEST_MINOR)
    say("%s: host predates ABI %u.%u; newer features stay off", TEST_NAME,
        (unsigned)KJIT_ABI_MAJOR, (unsigned)TEST_MINOR);
#endif
  return NULL;
#endif
}

static void test_fini(void *self) {
  if (probe_wait_ms > 0)
    say("%s: fini, max %d calls in flight", TEST_NAME, max_inside);
  else
    say("%s: fini%s", TEST_NAME, self == &instance_tag ? "" : " (BAD SELF)");
  free(stored_key);
  free(stored_value);
  stored_key = stored_value = NULL;
}

static const kjit_backend_table echo_backend = {
    .struct_size = TEST_BACKEND_SIZE,
    .name = "echo-" TEST_NAME,
    .name_len = sizeof("echo-" TEST_NAME) - 1,
    .describe = echo_describe,
    .fingerprint = echo_fingerprint,
    .parse_options = echo_parse_options,
    .destroy_options = echo_destroy_options,
    .finalize = echo_finalize,
    .load = echo_load,
    .launch = echo_launch,
    .unload = echo_unload,
#if TEST_HAS_1_1
    .device_count = echo_device_count,
    .synchronize = echo_synchronize,
#endif
};

static const kjit_cache_store_table memory_store = {
    .struct_size = TEST_STORE_SIZE,
    .name = "memory-" TEST_NAME,
    .name_len = sizeof("memory-" TEST_NAME) - 1,
    .get = memory_get,
    .put = memory_put,
#if TEST_HAS_1_1
    .remove = memory_remove,
    .describe = memory_describe,
#endif
};

#if TEST_MODE == MODE_NEW_MINOR
/* A newer minor appended a slot to the hook table and a field to the plugin
 * table. An older host must ignore both. */
static kjit_status *future_hook(void *self) {
  (void)self;
  say("%s: BUG: future hook called by a host that predates it", TEST_NAME);
  return NULL;
}
typedef struct next_hook_table {
  kjit_hook_table base;
  kjit_status *(*future_hook)(void *self);
} next_hook_table;
typedef struct next_plugin_api {
  kjit_plugin_api base;
  uint64_t future_flags;
} next_plugin_api;

static const next_hook_table test_hooks_next = {
    .base = {.struct_size = sizeof(next_hook_table),
             .cache = test_cache,
             .compiled = test_compiled,
             .launch_enter = test_launch_enter,
             .launch_exit = test_launch_exit,
             .pre_run = test_pre_run},
    .future_hook = future_hook,
};
static const next_plugin_api test_api_next = {
    .base = {.struct_size = sizeof(next_plugin_api),
             .name = TEST_NAME,
             .name_len = sizeof(TEST_NAME) - 1,
             .version = "next",
             .version_len = 4,
             .capabilities = KJIT_CAP_THREAD_SAFE,
             .init = test_init,
             .fini = test_fini,
             .hooks = &test_hooks_next.base,
             .backend = &echo_backend,
             .cache_store = &memory_store},
    .future_flags = ~(uint64_t)0,
};
#define TEST_API (&test_api_next.base)
#else
static const kjit_hook_table test_hooks = {
#if TEST_MODE == MODE_OLD_MINOR
    /* Pretend pre_run did not exist when this plugin was built. */
    .struct_size = KJIT_STRUCT_SIZE(kjit_hook_table, launch_exit),
#else
    .struct_size = TEST_HOOKS_SIZE,
#endif
    .cache = test_cache,
    .compiled = test_compiled,
    /* Leaving the slot empty in MODE_EXIT_ONLY keeps the function used. */
    .launch_enter = TEST_MODE == MODE_EXIT_ONLY ? NULL : test_launch_enter,
    .launch_exit = test_launch_exit,
    .pre_run = test_pre_run,
};
static const kjit_plugin_api test_api = {
#if TEST_MODE == MODE_SMALL_TABLE
    .struct_size = KJIT_STRUCT_SIZE(kjit_plugin_api, hooks),
#else
    .struct_size = sizeof(kjit_plugin_api),
#endif
    .name = TEST_NAME,
    .name_len = sizeof(TEST_NAME) - 1,
    .version = "1",
    .version_len = 1,
#if TEST_MODE != MODE_SERIAL
    .capabilities = KJIT_CAP_THREAD_SAFE,
#endif
    .init = test_init,
    .fini = test_fini,
    .hooks = &test_hooks,
    .backend = &echo_backend,
    .cache_store = &memory_store,
};
#define TEST_API (&test_api)
#endif

#if TEST_MODE == MODE_NO_ENTRY
#define ENTRY kjit_plugin_negotiate
#elif TEST_MODE == MODE_MAJOR2
#define ENTRY kjit_plugin_negotiate_v2
#else
#define ENTRY kjit_plugin_negotiate_v1
#endif

KJIT_PLUGIN_EXPORT int32_t ENTRY(kjit_negotiate *io);

KJIT_PLUGIN_EXPORT int32_t ENTRY(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin) ||
      io->host_abi_major != KJIT_ABI_MAJOR)
    return KJIT_STATUS_INVALID_ARGUMENT;
#if TEST_MODE == MODE_REFUSE
  if (KJIT_HAS_FIELD(io, kjit_negotiate, reject_reason_len)) {
    io->reject_reason = "this plugin needs ABI 1.7 or newer";
    io->reject_reason_len = strlen(io->reject_reason);
  }
  return KJIT_STATUS_FAILED_PRECONDITION;
#endif
#if TEST_MODE == MODE_WRONG_MAJOR
  io->plugin_abi_major = 2;
#else
  io->plugin_abi_major = KJIT_ABI_MAJOR;
#endif
  io->plugin_abi_minor = TEST_MINOR;
#if TEST_MODE == MODE_NULL_TABLE
  (void)TEST_API;
  io->plugin = NULL;
#else
  io->plugin = TEST_API;
#endif
  return KJIT_STATUS_OK;
}
