/*===- KernelStats.c - per-kernel compile and launch counts -------*- C -*-===*\
|*                                                                            *|
|* An out-of-tree instrumentation plugin for kjit. For every kernel it counts *|
|* compiles (with their compile time) and launches, and measures the time     *|
|* between each launch's enter and exit hooks, which the host matches by      *|
|* correlation id. At shutdown it logs one line per kernel.                   *|
|*                                                                            *|
|* Environment:                                                               *|
|*   KERNEL_STATS_LAUNCHES=1  also log every launch as it exits, with its     *|
|*                            correlation id, grid and host-side time         *|
|*                                                                            *|
|* Built only against kjit-c/Plugin.h (docs/WritingInstrumentationPlugin.md). *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime is POSIX, not C99. */
#define _POSIX_C_SOURCE 199309L

#include "kjit-c/Plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct stats_kernel {
  char *name;
  size_t name_len;
  uint64_t compiles, compile_ns;
  uint64_t launches, failed_launches;
  uint64_t launch_ns, max_launch_ns;
} stats_kernel;

/* One instance per host (a process may hold several runtimes). The plugin
 * does not declare KJIT_CAP_THREAD_SAFE: the host serializes every call to
 * it, so the table needs no lock. */
typedef struct stats_state {
  const kjit_host_api *host;
  kjit_host_context *ctx;
  int log_launches;
  stats_kernel *kernels;
  size_t num_kernels, cap_kernels;
} stats_state;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void stats_log(stats_state *s, int32_t level, const char *text, int n) {
  if (n < 0)
    return;
  s->host->log(s->ctx, level, text, (size_t)n);
}

static kjit_status *out_of_memory(stats_state *s) {
  static const char message[] = "kernel-stats: out of memory";
  return s->host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED, message,
                                sizeof message - 1);
}

/* The counters of a kernel, created on first sight; NULL when out of
 * memory. Kernel names are borrowed by the events, so they are copied. */
static stats_kernel *find_kernel(stats_state *s, const char *name, size_t len) {
  size_t i;
  stats_kernel *k;
  for (i = 0; i < s->num_kernels; ++i)
    if (s->kernels[i].name_len == len &&
        memcmp(s->kernels[i].name, name, len) == 0)
      return &s->kernels[i];
  if (s->num_kernels == s->cap_kernels) {
    size_t cap = s->cap_kernels ? 2 * s->cap_kernels : 8;
    stats_kernel *grown = realloc(s->kernels, cap * sizeof *grown);
    if (!grown)
      return NULL;
    s->kernels = grown;
    s->cap_kernels = cap;
  }
  k = &s->kernels[s->num_kernels];
  memset(k, 0, sizeof *k);
  k->name = malloc(len + 1);
  if (!k->name)
    return NULL;
  memcpy(k->name, name, len);
  k->name[len] = '\0';
  k->name_len = len;
  ++s->num_kernels;
  return k;
}

/* After each compile: the artifact is ready, compile_ns says how long the
 * compile took (0 when the host does not know). */
static kjit_status *stats_compiled(void *self,
                                   const kjit_compiled_event *event) {
  stats_state *s = self;
  stats_kernel *k =
      find_kernel(s, event->info->kernel_name, event->info->kernel_name_len);
  if (!k)
    return out_of_memory(s);
  ++k->compiles;
  k->compile_ns += event->compile_ns;
  return NULL;
}

/* *correlation_data is this plugin's slot for this one launch: the host
 * hands the same slot to launch_exit, so the start time travels with the
 * launch and no table keyed by correlation id is needed. */
static kjit_status *stats_enter(void *self, const kjit_launch_event *event,
                                uint64_t *correlation_data) {
  (void)self;
  (void)event;
  *correlation_data = now_ns();
  return NULL;
}

static kjit_status *stats_exit(void *self, const kjit_launch_event *event,
                               uint64_t *correlation_data) {
  stats_state *s = self;
  uint64_t elapsed;
  stats_kernel *k;
  /* 0: launch_enter did not run for this launch (exit is called even when
   * enter failed), so there is no start time. */
  if (*correlation_data == 0)
    return NULL;
  elapsed = now_ns() - *correlation_data;
  k = find_kernel(s, event->kernel_name, event->kernel_name_len);
  if (!k)
    return out_of_memory(s);
  ++k->launches;
  if (event->launch_status != KJIT_STATUS_OK)
    ++k->failed_launches;
  k->launch_ns += elapsed;
  if (elapsed > k->max_launch_ns)
    k->max_launch_ns = elapsed;
  if (s->log_launches) {
    char line[256];
    int n = snprintf(
        line, sizeof line, "launch %llu %.*s grid=%ux%ux%u status=%d: %llu ns",
        (unsigned long long)event->correlation_id, (int)event->kernel_name_len,
        event->kernel_name, event->grid[0], event->grid[1], event->grid[2],
        (int)event->launch_status, (unsigned long long)elapsed);
    stats_log(s, KJIT_LOG_INFO, line,
              n < (int)sizeof line ? n : (int)sizeof line - 1);
  }
  return NULL;
}

static kjit_status *stats_init(const kjit_host_api *host,
                               kjit_host_context *ctx, void **self) {
  const char *verbose = getenv("KERNEL_STATS_LAUNCHES");
  stats_state *s = calloc(1, sizeof *s);
  if (!s) {
    static const char message[] = "kernel-stats: out of memory";
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED, message,
                               sizeof message - 1);
  }
  s->host = host;
  s->ctx = ctx;
  s->log_launches = verbose && strcmp(verbose, "1") == 0;
  *self = s;
  return NULL;
}

/* The end of the instance: report, then free. The host calls nothing of
 * this instance afterwards. */
static void stats_fini(void *self) {
  stats_state *s = self;
  size_t i;
  for (i = 0; i < s->num_kernels; ++i) {
    const stats_kernel *k = &s->kernels[i];
    char line[256];
    int n = snprintf(
        line, sizeof line,
        "%s: %llu compiles (%.3f ms), %llu launches (%llu failed), "
        "enter to exit %.3f ms in all, %.3f ms at most",
        k->name, (unsigned long long)k->compiles, (double)k->compile_ns / 1e6,
        (unsigned long long)k->launches, (unsigned long long)k->failed_launches,
        (double)k->launch_ns / 1e6, (double)k->max_launch_ns / 1e6);
    stats_log(s, KJIT_LOG_INFO, line,
              n < (int)sizeof line ? n : (int)sizeof line - 1);
    free(k->name);
  }
  free(s->kernels);
  free(s);
}

/* The plugin uses only what ABI 1.0 had (hooks, compile_ns). Built with
 * -DKERNEL_STATS_ABI_MINOR=0 it is what a build against ABI 1.0's header
 * was: it answers minor 0 and its hook table ends where 1.0's did (before
 * launch_complete, 1.2), and it runs on every newer host all the same. */
#ifndef KERNEL_STATS_ABI_MINOR
#define KERNEL_STATS_ABI_MINOR KJIT_ABI_MINOR
#endif

static const kjit_hook_table stats_hooks = {
#if KERNEL_STATS_ABI_MINOR < 2
    .struct_size = KJIT_STRUCT_SIZE(kjit_hook_table, pre_run),
#else
    .struct_size = sizeof(kjit_hook_table),
#endif
    .compiled = stats_compiled,
    .launch_enter = stats_enter,
    .launch_exit = stats_exit,
};

static const kjit_plugin_api stats_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "kernel-stats",
    .name_len = sizeof "kernel-stats" - 1,
    .version = "1",
    .version_len = 1,
    .init = stats_init,
    .fini = stats_fini,
    .hooks = &stats_hooks,
};

/* The only export (kjit_add_plugin's version script). It uses only what
 * ABI 1.0 had, so any 1.x host will do. */
KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KERNEL_STATS_ABI_MINOR;
  io->plugin = &stats_api;
  return KJIT_STATUS_OK;
}
