/*===- Trace.c - compile and launch trace plugin ------------------*- C -*-===*\
|*                                                                            *|
|* Writes every compile and launch as a Chrome trace event (JSON; opens in    *|
|* Perfetto and chrome://tracing) and reports a per-kernel summary when the   *|
|* host shuts the plugin down. With ABI 1.2 it also asks for each launch's    *|
|* time on the device (launch_complete) and draws it on a track per device,   *|
|* under the host-side launch slice. Built only against include/kjit-c.       *|
|*                                                                            *|
|* Environment:                                                               *|
|*   KJIT_TRACE_FILE=path   write trace events there (unset: no file)         *|
|*   KJIT_TRACE_SUMMARY=0   do not report the per-kernel summary (default 1)  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime and syscall(SYS_gettid) are POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "kjit-c/Plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Counters of one kernel for the summary. */
typedef struct trace_kernel {
  char *name;
  size_t name_len;
  uint64_t compiles;
  uint64_t compile_ns;
  uint64_t launches;
  uint64_t device_launches; /* launches with a device time */
  uint64_t device_ns;
} trace_kernel;

/* A compile between its cache hook and its compiled hook. */
typedef struct trace_pending {
  char *key;
  size_t key_len;
  uint64_t start_ns;
} trace_pending;

/* One plugin instance. The plugin does not declare KJIT_CAP_THREAD_SAFE, so
 * the host serializes every call and no lock is needed here. */
typedef struct trace_state {
  const kjit_host_api *host;
  kjit_host_context *ctx;
  FILE *out;   /* NULL when KJIT_TRACE_FILE is unset */
  int summary; /* report the summary at fini */
  long pid;
  uint64_t origin_ns;
  trace_kernel *kernels;
  size_t num_kernels, cap_kernels;
  trace_pending *pending;
  size_t num_pending, cap_pending;
  uint64_t named_devices; /* bit d: the track of device d has its name */
  int device_times;       /* a backend reported device times */
} trace_state;

/* Device tracks get thread ids no real thread has, one per device. */
enum { TRACE_DEVICE_TID = 0x40000000 };

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void trace_log(trace_state *s, int32_t level, const char *message) {
  s->host->log(s->ctx, level, message, strlen(message));
}

static kjit_status *error(trace_state *s, int32_t code, const char *message) {
  return s->host->status_create(code, message, strlen(message));
}

/* Writes a pointer + length string as a JSON string literal. */
static void write_json_string(FILE *out, const char *data, size_t len) {
  size_t i;
  fputc('"', out);
  for (i = 0; data && i < len; ++i) {
    unsigned char c = (unsigned char)data[i];
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

/* Timestamps in the trace are microseconds since the plugin started. */
static double trace_us(trace_state *s, uint64_t ns) {
  return ns < s->origin_ns ? 0.0 : (double)(ns - s->origin_ns) / 1000.0;
}

/* Starts one complete ("X") event up to its args object; the caller writes
 * the args members and calls end_event. */
static void begin_event(trace_state *s, const char *cat, const char *name,
                        size_t name_len, uint64_t start_ns, uint64_t dur_ns) {
  fputs(",\n{\"name\":", s->out);
  write_json_string(s->out, name, name_len);
  fprintf(s->out,
          ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
          "\"pid\":%ld,\"tid\":%ld,\"args\":{",
          cat, trace_us(s, start_ns), (double)dur_ns / 1000.0, s->pid,
          (long)syscall(SYS_gettid));
}

static void end_event(trace_state *s) {
  fputs("}}", s->out);
  fflush(s->out);
}

/* The summary row of a kernel, created on first sight. NULL when out of
 * memory (the event then goes uncounted). */
static trace_kernel *kernel_stats(trace_state *s, const char *name,
                                  size_t len) {
  size_t i;
  trace_kernel *k;
  for (i = 0; i < s->num_kernels; ++i)
    if (s->kernels[i].name_len == len &&
        memcmp(s->kernels[i].name, name, len) == 0)
      return &s->kernels[i];
  if (s->num_kernels == s->cap_kernels) {
    size_t cap = s->cap_kernels ? 2 * s->cap_kernels : 16;
    trace_kernel *grown = realloc(s->kernels, cap * sizeof(*grown));
    if (!grown)
      return NULL;
    s->kernels = grown;
    s->cap_kernels = cap;
  }
  k = &s->kernels[s->num_kernels];
  memset(k, 0, sizeof(*k));
  k->name = malloc(len + 1);
  if (!k->name)
    return NULL;
  memcpy(k->name, name, len);
  k->name[len] = '\0';
  k->name_len = len;
  ++s->num_kernels;
  return k;
}

/*===----------------------------------------------------------------------===*\
|* Hooks                                                                      *|
\*===----------------------------------------------------------------------===*/

static kjit_status *trace_cache(void *self, const kjit_cache_event *event,
                                int32_t *decision) {
  trace_state *s = self;
  const kjit_compile_info *info = event->info;
  trace_pending *p;
  (void)decision; /* never skips */
  if (!info)
    return NULL;
  /* Remember when the compile of this key started, for hosts that do not
   * measure compile_ns themselves. */
  if (s->num_pending == s->cap_pending) {
    size_t cap = s->cap_pending ? 2 * s->cap_pending : 8;
    trace_pending *grown = realloc(s->pending, cap * sizeof(*grown));
    if (!grown)
      return error(s, KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    s->pending = grown;
    s->cap_pending = cap;
  }
  p = &s->pending[s->num_pending];
  p->key = malloc(info->key_len ? info->key_len : 1);
  if (!p->key)
    return error(s, KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (info->key_len)
    memcpy(p->key, info->key, info->key_len);
  p->key_len = info->key_len;
  p->start_ns = now_ns();
  ++s->num_pending;
  return NULL;
}

/* Removes the pending compile of `key` and returns its start, or 0. */
static uint64_t take_pending(trace_state *s, const char *key, size_t len) {
  size_t i;
  for (i = s->num_pending; i-- > 0;) {
    trace_pending *p = &s->pending[i];
    if (p->key_len == len && (len == 0 || memcmp(p->key, key, len) == 0)) {
      uint64_t start = p->start_ns;
      free(p->key);
      s->pending[i] = s->pending[--s->num_pending];
      return start;
    }
  }
  return 0;
}

static kjit_status *trace_compiled(void *self,
                                   const kjit_compiled_event *event) {
  trace_state *s = self;
  const kjit_compile_info *info = event->info;
  uint64_t end = now_ns(), start, dur;
  trace_kernel *k;
  if (!info)
    return error(s, KJIT_STATUS_INVALID_ARGUMENT,
                 "compiled event without compile info");
  start = take_pending(s, info->key, info->key_len);
  /* The host's measurement wins; ours spans cache hook to compiled hook. */
  dur = event->compile_ns ? event->compile_ns : (start ? end - start : 0);
  start = end - dur;
  k = kernel_stats(s, info->kernel_name, info->kernel_name_len);
  if (k) {
    ++k->compiles;
    k->compile_ns += dur;
  }
  if (!s->out)
    return NULL;
  begin_event(s, "compile", info->kernel_name, info->kernel_name_len, start,
              dur);
  fputs("\"key\":", s->out);
  write_json_string(s->out, info->key, info->key_len);
  fputs(",\"repr\":", s->out);
  write_json_string(s->out, info->repr, info->repr_len);
  fputs(",\"target\":", s->out);
  write_json_string(s->out, info->target, info->target_len);
  fputs(",\"format\":", s->out);
  write_json_string(s->out, event->artifact_format, event->artifact_format_len);
  fprintf(s->out, ",\"artifact_bytes\":%lu,\"warmup\":%s",
          (unsigned long)event->artifact_size,
          info->is_warmup ? "true" : "false");
  end_event(s);
  return NULL;
}

static kjit_status *trace_launch_enter(void *self,
                                       const kjit_launch_event *event,
                                       uint64_t *correlation_data) {
  (void)self;
  (void)event;
  *correlation_data = now_ns();
  return NULL;
}

static kjit_status *trace_launch_exit(void *self,
                                      const kjit_launch_event *event,
                                      uint64_t *correlation_data) {
  trace_state *s = self;
  uint64_t end = now_ns();
  uint64_t start = *correlation_data ? *correlation_data : end;
  trace_kernel *k = kernel_stats(s, event->kernel_name, event->kernel_name_len);
  if (k)
    ++k->launches;
  if (!s->out)
    return NULL;
  begin_event(s, "launch", event->kernel_name, event->kernel_name_len, start,
              end - start);
  fprintf(s->out,
          "\"correlation_id\":%lu,\"grid\":[%u,%u,%u],\"num_warps\":%u,"
          "\"device\":%d,\"status\":%d",
          (unsigned long)event->correlation_id, (unsigned)event->grid[0],
          (unsigned)event->grid[1], (unsigned)event->grid[2],
          (unsigned)event->num_warps, (int)event->device,
          (int)event->launch_status);
  end_event(s);
  return NULL;
}

/* A launch's device time: a slice on its device's track, in the same
 * correlation id as the host-side launch slice. */
static kjit_status *trace_launch_complete(void *self,
                                          const kjit_device_time *time) {
  trace_state *s = self;
  long tid = (long)TRACE_DEVICE_TID + (time->device & 0xffff);
  trace_kernel *k = kernel_stats(s, time->kernel_name, time->kernel_name_len);
  uint64_t dur =
      time->end_ns > time->start_ns ? time->end_ns - time->start_ns : 0;
  s->device_times = 1;
  if (k) {
    ++k->device_launches;
    k->device_ns += dur;
  }
  if (!s->out)
    return NULL;
  if (time->device >= 0 && time->device < 64 &&
      !(s->named_devices & ((uint64_t)1 << time->device))) {
    s->named_devices |= (uint64_t)1 << time->device;
    fprintf(s->out,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,"
            "\"tid\":%ld,\"args\":{\"name\":\"device %d\"}}",
            s->pid, tid, (int)time->device);
  }
  fputs(",\n{\"name\":", s->out);
  write_json_string(s->out, time->kernel_name, time->kernel_name_len);
  fprintf(s->out,
          ",\"cat\":\"device\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
          "\"pid\":%ld,\"tid\":%ld,\"args\":{\"correlation_id\":%lu,"
          "\"device\":%d,\"stream\":%lu,\"status\":%d",
          trace_us(s, time->start_ns), (double)dur / 1000.0, s->pid, tid,
          (unsigned long)time->correlation_id, (int)time->device,
          (unsigned long)time->stream, (int)time->launch_status);
  end_event(s);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* Lifecycle                                                                  *|
\*===----------------------------------------------------------------------===*/

static kjit_status *trace_init(const kjit_host_api *host,
                               kjit_host_context *ctx, void **self) {
  trace_state *s;
  const char *path = getenv("KJIT_TRACE_FILE");
  const char *summary = getenv("KJIT_TRACE_SUMMARY");
  if (!KJIT_HAS_FIELD(host, kjit_host_api, log))
    return NULL; /* cannot happen with ABI 1.0; nothing usable */
  s = calloc(1, sizeof(*s));
  if (!s)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory",
                               13);
  s->host = host;
  s->ctx = ctx;
  s->summary = !(summary && strcmp(summary, "0") == 0);
  s->pid = (long)getpid();
  s->origin_ns = now_ns();
  if (path && *path) {
    char message[512];
    s->out = fopen(path, "w");
    if (!s->out) {
      snprintf(message, sizeof message, "cannot open KJIT_TRACE_FILE '%s': %s",
               path, strerror(errno));
      free(s);
      return host->status_create(KJIT_STATUS_PERMISSION_DENIED, message,
                                 strlen(message));
    }
    /* The JSON array form of the trace format: readers accept it without
     * the closing bracket, so a process that dies early leaves a usable
     * trace. The metadata event names the process in the timeline. */
    fprintf(s->out,
            "[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":0,"
            "\"args\":{\"name\":\"kjit\"}}",
            s->pid);
    fflush(s->out);
  }
  *self = s;
  return NULL;
}

static void trace_fini(void *self) {
  trace_state *s = self;
  size_t i;
  if (!s)
    return;
  if (s->out) {
    fputs("\n]\n", s->out);
    fclose(s->out);
  }
  if (s->summary) {
    char line[512];
    /* The device column only when a backend measured device times. */
    snprintf(line, sizeof line, "%-32s %8s %12s %8s%s", "kernel", "compiles",
             "compile ms", "launches",
             s->device_times ? "  device ms/launch" : "");
    trace_log(s, KJIT_LOG_INFO, line);
    for (i = 0; i < s->num_kernels; ++i) {
      const trace_kernel *k = &s->kernels[i];
      int n = snprintf(line, sizeof line, "%-32s %8lu %12.3f %8lu", k->name,
                       (unsigned long)k->compiles, (double)k->compile_ns / 1e6,
                       (unsigned long)k->launches);
      if (s->device_times && n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "  %17.6f",
                 k->device_launches
                     ? (double)k->device_ns / 1e6 / (double)k->device_launches
                     : 0.0);
      trace_log(s, KJIT_LOG_INFO, line);
    }
  }
  for (i = 0; i < s->num_kernels; ++i)
    free(s->kernels[i].name);
  for (i = 0; i < s->num_pending; ++i)
    free(s->pending[i].key);
  free(s->kernels);
  free(s->pending);
  free(s);
}

/* Designated initializers: a slot added by a later minor can never shift
 * these into the wrong place. */
static const kjit_hook_table trace_hooks = {
    .struct_size = sizeof(kjit_hook_table),
    .cache = trace_cache,
    .compiled = trace_compiled,
    .launch_enter = trace_launch_enter,
    .launch_exit = trace_launch_exit,
    /* pre_run: arguments do not go into the trace. */
    .launch_complete = trace_launch_complete,
};

static const kjit_plugin_api trace_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "trace",
    .name_len = 5,
    .version = "1.2",
    .version_len = 3,
    /* No KJIT_CAP_THREAD_SAFE: the host serializes calls. */
    .init = trace_init,
    .fini = trace_fini,
    .hooks = &trace_hooks,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &trace_api;
  return KJIT_STATUS_OK;
}
