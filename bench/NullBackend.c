/*===- NullBackend.c - a "host" backend whose launch does nothing ---------===*\
|*                                                                            *|
|* For bench/DispatchBench.cpp: with it, a launch measures kjit's dispatch    *|
|* alone (bind, key, cache lookup, globals check, hooks, the ABI call), not   *|
|* the kernel.                                                                *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <stdlib.h>
#include <string.h>

static const kjit_artifact_format kElf = {sizeof(kjit_artifact_format), 0,
                                          "elf-shared-object", 17};
static const kjit_artifact_format *const kFormats[] = {&kElf};
static int kKernel;

static kjit_status *describe(void *self, kjit_backend_describe_args *args) {
  (void)self;
  args->target = "host";
  args->target_len = 4;
  args->arch = "null";
  args->arch_len = 4;
  args->warp_size = 32;
  args->num_formats = 1;
  args->formats = kFormats;
  return 0;
}

/* The runtime refuses a backend without a fingerprint (it joins every
 * cache key); a constant one is right for a backend that runs nothing. */
static kjit_status *fingerprint(void *self,
                                kjit_backend_fingerprint_args *args) {
  (void)self;
  args->fingerprint.data = (const uint8_t *)"null-backend-1";
  args->fingerprint.size = 14;
  args->fingerprint.release = 0; /* static storage */
  return 0;
}

static kjit_status *finalize(void *self, kjit_backend_finalize_args *args) {
  (void)self;
  args->loadable.data = (const uint8_t *)"null";
  args->loadable.size = 4;
  args->loadable.release = 0; /* static storage */
  return 0;
}

/* Takes every template (ABI 1.4), as the cuda backend takes a good one, so
 * that launches measure the runtime's path of values alone. */
static kjit_status *load(void *self, kjit_backend_load_args *args) {
  (void)self;
  args->kernel = &kKernel;
  if (KJIT_HAS_FIELD(args, kjit_backend_load_args, takes_values))
    args->takes_values = 1;
  return 0;
}

/* KJIT_BENCH_NULL_POLLUTE=1: each launch runs kjit_bench_pollute
 * (CachePolluter.c), which evicts the L1 caches as a driver's launch does. */
static int pollute;
void kjit_bench_pollute(void);

/* Where to write the time stamps the last pollution took, so that the
 * bench can take them out of a launch's time (kjit-bench-dispatch's
 * runtime_cycles): what remains is the runtime's own path with cold caches.
 * The bench passes the address in KJIT_BENCH_NULL_CYCLES_AT (the plugin
 * exports nothing but its entry point). */
static uint64_t *polluteCyclesAt;

static uint64_t timeStamp(void) {
  uint32_t lo, hi;
  __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
  return ((uint64_t)hi << 32) | lo;
}

static kjit_status *null_launch(void *self, kjit_backend_launch_args *args) {
  (void)self;
  (void)args;
  if (pollute) {
    uint64_t start = timeStamp();
    kjit_bench_pollute();
    if (polluteCyclesAt)
      *polluteCyclesAt = timeStamp() - start;
  }
  return 0;
}

static kjit_status *unload(void *self, kjit_backend_unload_args *args) {
  (void)self;
  (void)args;
  return 0;
}

/* Designated initializers: minor versions append slots, and positional
 * ones would shift (or, with -Wextra, stop compiling). */
static const kjit_backend_table kBackend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "host",
    .name_len = 4,
    .describe = describe,
    .fingerprint = fingerprint,
    .finalize = finalize,
    .load = load,
    .launch = null_launch,
    .unload = unload,
};

static const kjit_plugin_api kApi = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "null-backend",
    .name_len = 12,
    .version = "1",
    .version_len = 1,
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .backend = &kBackend,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  const char *polluteEnv = getenv("KJIT_BENCH_NULL_POLLUTE");
  const char *cyclesAt = getenv("KJIT_BENCH_NULL_CYCLES_AT");
  pollute = polluteEnv && strcmp(polluteEnv, "1") == 0;
  if (cyclesAt && *cyclesAt)
    polluteCyclesAt = (uint64_t *)(uintptr_t)strtoull(cyclesAt, NULL, 16);
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &kApi;
  return KJIT_STATUS_OK;
}
