/*===- cuda-smoke.c - the cuda backend end to end, in C, on any machine ---===*\
|*                                                                            *|
|* kjit-cuda-smoke drives libkjit-cuda.so through the plugin ABI alone: it   *|
|* is its own host (a minimal kjit_host_api), so it needs nothing but libc:  *|
|* no runtime, no abseil, no LLVM. That makes it the tool for a GPU machine  *|
|* that has a driver and a toolkit but none of kjit's build dependencies.    *|
|*                                                                            *|
|* Usage: kjit-cuda-smoke PLUGIN KERNELS.PTX [LAUNCHES]                       *|
|*                                                                            *|
|* It negotiates and inits the plugin, describes device 0, finalizes the PTX  *|
|* (Inputs/kernels.ptx) for its kernels, loads them, allocates, copies, runs  *|
|* "add" and "scalars" and checks what they wrote, checks the refusals (host *|
|* pointer, num_warps, argument count), times LAUNCHES launches (default     *|
|* 10000) of "add" with the same pointers, then as many KJIT_LAUNCH_TIMED    *|
|* launches (checking their device times), and, in a child process, runs    *|
|* "trap_kernel" to check the sticky-context message. Every step prints one   *|
|* line, "ok ..." or "FAIL ..."; the exit status is the number of failures.   *|
|* Times are printed, never checked.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "kjit-c/Plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*===--- a minimal host ------------------------------------------------===*/

struct kjit_status {
  int32_t code;
  char *message;
  size_t len;
};

static kjit_status *status_create(int32_t code, const char *m, size_t n) {
  kjit_status *s = malloc(sizeof *s);
  s->code = code;
  s->message = malloc(n + 1);
  memcpy(s->message, m, n);
  s->message[n] = '\0';
  s->len = n;
  return s;
}
static void status_destroy(kjit_status *s) {
  if (s) {
    free(s->message);
    free(s);
  }
}
static int32_t status_code(const kjit_status *s) { return s ? s->code : 0; }
static void status_message(const kjit_status *s, const char **m, size_t *n) {
  *m = s ? s->message : "";
  *n = s ? s->len : 0;
}
static void host_log(kjit_host_context *ctx, int32_t level, const char *m,
                     size_t n) {
  (void)ctx;
  fprintf(stderr, "log[%d]: %.*s\n", (int)level, (int)n, m);
}
static int async_errors;
static void report_async(kjit_host_context *ctx, const char *k, size_t kl,
                         kjit_status *s) {
  (void)ctx;
  ++async_errors;
  fprintf(stderr, "async error in '%.*s': %s\n", (int)kl, k ? k : "",
          s ? s->message : "");
  status_destroy(s);
}

/* Device times of timed launches, reported from the backend's timer
 * thread: counted, summed, and checked to arrive in launch order with
 * start <= end, starting after the timed loop began (the clock mapping may
 * put a kernel slightly later than it ran, never earlier). */
static uint64_t timed_reports, timed_device_ns, timed_bad, timed_last_id;
static uint64_t timed_window_start;
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void report_time(kjit_host_context *ctx, const kjit_device_time *t) {
  uint64_t last = __atomic_load_n(&timed_last_id, __ATOMIC_RELAXED);
  (void)ctx;
  if (t->launch_status != KJIT_STATUS_OK || t->start_ns > t->end_ns ||
      t->start_ns < timed_window_start || t->correlation_id != last + 1)
    __atomic_add_fetch(&timed_bad, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&timed_last_id, t->correlation_id, __ATOMIC_RELAXED);
  __atomic_add_fetch(&timed_device_ns, t->end_ns - t->start_ns,
                     __ATOMIC_RELAXED);
  __atomic_add_fetch(&timed_reports, 1, __ATOMIC_RELEASE);
}

static const kjit_host_api host = {
    sizeof(kjit_host_api), NULL,           KJIT_ABI_MAJOR,
    KJIT_ABI_MINOR,        status_create,  status_destroy,
    status_code,           status_message, host_log,
    report_async,          report_time};

/*===--- helpers -------------------------------------------------------===*/

static const kjit_backend_table *be;
static void *self;
static int failures;

#define INIT(s) (memset(&(s), 0, sizeof(s)), (s).struct_size = sizeof(s))

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Prints "ok WHAT" for a NULL status, else "FAIL WHAT: message". */
static int expect_ok(kjit_status *s, const char *what) {
  if (!s) {
    printf("ok %s\n", what);
    return 1;
  }
  printf("FAIL %s: %s\n", what, s->message);
  ++failures;
  status_destroy(s);
  return 0;
}

/* Expects an error whose message contains `part`. */
static void expect_error(kjit_status *s, const char *part, const char *what) {
  if (s && strstr(s->message, part))
    printf("ok %s: %s\n", what, s->message);
  else {
    printf("FAIL %s: expected an error with '%s', got %s\n", what, part,
           s ? s->message : "success");
    ++failures;
  }
  status_destroy(s);
}

static void check(int cond, const char *what) {
  printf("%s %s\n", cond ? "ok" : "FAIL", what);
  failures += !cond;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *bytes;
  long n;
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc((size_t)n + 1);
  *size = fread(bytes, 1, (size_t)n, f);
  bytes[*size] = '\0';
  fclose(f);
  return bytes;
}

/* Loads `name` with the template of its launches (n arguments; none: NULL
 * and 0), as the runtime loads (ABI 1.4). */
static void *load_kernel(const char *ptx, size_t ptx_size, const char *name,
                         const kjit_arg *const *template_args, size_t n) {
  kjit_backend_finalize_args fa;
  kjit_backend_load_args la;
  char what[128];
  double start;
  INIT(fa);
  fa.format = "ptx";
  fa.format_len = 3;
  fa.artifact = (const uint8_t *)ptx;
  fa.artifact_size = ptx_size;
  fa.kernel_name = name;
  fa.kernel_name_len = strlen(name);
  start = now_us();
  snprintf(what, sizeof what, "finalize %s", name);
  if (!expect_ok(be->finalize(self, &fa), what))
    return NULL;
  printf("   finalize %s: %zu bytes in %.3f ms\n", name, fa.loadable.size,
         (now_us() - start) / 1000);
  INIT(la);
  la.loadable = fa.loadable.data;
  la.loadable_size = fa.loadable.size;
  la.kernel_name = name;
  la.kernel_name_len = strlen(name);
  la.args = template_args;
  la.num_args = n;
  snprintf(what, sizeof what, "load %s", name);
  expect_ok(be->load(self, &la), what);
  if (fa.loadable.release)
    fa.loadable.release(fa.loadable.owner, fa.loadable.data, fa.loadable.size);
  return la.kernel;
}

static uint64_t alloc_copy(const void *host_data, uint64_t size) {
  kjit_backend_allocate_args a;
  kjit_backend_copy_args c;
  INIT(a);
  a.size = size;
  if (!expect_ok(be->allocate(self, &a), "allocate"))
    return 0;
  INIT(c);
  c.direction = KJIT_COPY_HOST_TO_DEVICE;
  c.address = a.address;
  c.host = (void *)host_data;
  c.size = size;
  expect_ok(be->copy(self, &c), "copy to device");
  return a.address;
}

static int copy_back(void *host_data, uint64_t address, uint64_t size) {
  kjit_backend_copy_args c;
  INIT(c);
  c.direction = KJIT_COPY_DEVICE_TO_HOST;
  c.address = address;
  c.host = host_data;
  c.size = size;
  return expect_ok(be->copy(self, &c), "copy to host");
}

static void set_arg(kjit_arg *a, const char *name, int32_t dtype, int pointer,
                    uint64_t bits, uint32_t size) {
  INIT(*a);
  a->name = name;
  a->name_len = strlen(name);
  a->type = pointer ? "*fp32" : "scalar";
  a->type_len = strlen(a->type);
  a->kind = pointer ? KJIT_ARG_POINTER : KJIT_ARG_INT;
  a->uint_value = bits;
  a->dtype = dtype;
  a->flags = pointer ? KJIT_ARG_FLAG_POINTER : 0;
  a->bits = bits;
  a->bits_size = size;
}

/* KJIT_LAUNCH_* bits for launch(); timed launches get correlation ids 1,
 * 2, ... */
static uint32_t launch_flags;
static uint64_t next_correlation_id;

static kjit_status *launch(void *kernel, uint32_t grid, uint32_t warps,
                           const kjit_arg *const *args, size_t n) {
  kjit_backend_launch_args l;
  INIT(l);
  l.flags = launch_flags;
  if (launch_flags & KJIT_LAUNCH_TIMED)
    l.correlation_id = ++next_correlation_id;
  l.kernel = kernel;
  l.grid[0] = grid;
  l.grid[1] = l.grid[2] = 1;
  l.num_warps = warps;
  l.num_args = n;
  l.args = args;
  return be->launch(self, &l);
}

static kjit_status *sync0(void) {
  kjit_backend_synchronize_args s;
  INIT(s);
  return be->synchronize(self, &s);
}

/*===--- the steps -----------------------------------------------------===*/

int main(int argc, char **argv) {
  kjit_plugin_negotiate_fn negotiate;
  kjit_negotiate io;
  kjit_backend_device_count_args dc;
  kjit_backend_describe_args d;
  kjit_backend_fingerprint_args fp;
  void *dl, *sym, *add, *scalars, *trap;
  char *ptx;
  size_t ptx_size = 0, i;
  long launches = argc > 3 ? atol(argv[3]) : 10000;
  enum { N = 1000 };
  float x[N], y[N], out[N];
  uint64_t dx, dy, dout, dhost_out[4] = {0, 0, 0, 0}, ds;
  kjit_arg a[5];
  const kjit_arg *args[5] = {&a[0], &a[1], &a[2], &a[3], &a[4]};
  kjit_status *s;
  double start, per;

  int trap_mode = argc > 1 && strcmp(argv[1], "--trap") == 0;
  if (trap_mode) {
    ++argv;
    --argc;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: kjit-cuda-smoke PLUGIN KERNELS.PTX [LAUNCHES]\n");
    return 100;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!(dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) ||
      !(sym = dlsym(dl, KJIT_PLUGIN_ENTRY_NAME))) {
    printf("FAIL cannot open %s: %s\n", argv[1], dlerror());
    return 100;
  }
  memcpy(&negotiate, &sym, sizeof sym);
  memset(&io, 0, sizeof io);
  io.struct_size = sizeof io;
  io.host_abi_major = KJIT_ABI_MAJOR;
  io.host_min_minor = 0;
  io.host_max_minor = KJIT_ABI_MINOR;
  if (negotiate(&io) != KJIT_STATUS_OK || !io.plugin || !io.plugin->backend) {
    printf("FAIL negotiation\n");
    return 100;
  }
  if (!expect_ok(io.plugin->init(&host, NULL, &self), "init"))
    return 100;
  be = io.plugin->backend;
  if (!(ptx = read_file(argv[2], &ptx_size))) {
    printf("FAIL cannot read %s\n", argv[2]);
    return 100;
  }

  if (trap_mode) {
    kjit_status *first, *later;
    uint64_t d0 = alloc_copy(dhost_out, sizeof dhost_out);
    trap = load_kernel(ptx, ptx_size, "trap_kernel", NULL, 0);
    set_arg(&a[0], "unused", KJIT_DTYPE_U64, 1, d0, 8);
    expect_ok(launch(trap, 1, 1, args, 1), "launch trap_kernel (enqueued)");
    first = sync0();
    later = launch(trap, 1, 1, args, 1);
    expect_error(first, "is unusable after", "synchronize finds the trap");
    expect_error(later, "is unusable after", "later launches fail the same");
    check(async_errors == 1, "reported once through report_async_error");
    {
      /* The lost context took the module with it: unload only drops the
       * handle, and succeeds. */
      kjit_backend_unload_args u;
      INIT(u);
      u.kernel = trap;
      expect_ok(be->unload(self, &u), "unload trap_kernel after the trap");
    }
    io.plugin->fini(self);
    free(ptx);
    return failures;
  }
  INIT(dc);
  expect_ok(be->device_count(self, &dc), "device_count");
  printf("   devices: %d\n", (int)dc.count);
  INIT(d);
  if (!expect_ok(be->describe(self, &d), "describe")) {
    io.plugin->fini(self);
    return failures;
  }
  printf("   target %.*s arch %.*s warp %u sms %u threads %u smem %llu\n",
         (int)d.target_len, d.target, (int)d.arch_len, d.arch, d.warp_size,
         d.multiprocessor_count, d.max_threads_per_block,
         (unsigned long long)d.max_shared_memory_per_block);
  for (i = 0; i < d.num_compile_options; ++i)
    printf("   compile option %.*s=%.*s\n", (int)d.compile_options[i]->name_len,
           d.compile_options[i]->name, (int)d.compile_options[i]->value_len,
           d.compile_options[i]->value);
  INIT(fp);
  if (expect_ok(be->fingerprint(self, &fp), "fingerprint")) {
    printf("   fingerprint %.*s\n", (int)fp.fingerprint.size,
           (const char *)fp.fingerprint.data);
    if (fp.fingerprint.release)
      fp.fingerprint.release(fp.fingerprint.owner, fp.fingerprint.data,
                             fp.fingerprint.size);
  }

  /* Each kernel with the template of its launches: the signature, from
   * which the backend knows how many parameters the kernel takes. */
  set_arg(&a[0], "x", KJIT_DTYPE_FP32, 1, 0, 8);
  set_arg(&a[1], "y", KJIT_DTYPE_FP32, 1, 0, 8);
  set_arg(&a[2], "out", KJIT_DTYPE_FP32, 1, 0, 8);
  set_arg(&a[3], "n", KJIT_DTYPE_I32, 0, 0, 4);
  add = load_kernel(ptx, ptx_size, "add", args, 4);
  set_arg(&a[0], "out", KJIT_DTYPE_U64, 1, 0, 8);
  set_arg(&a[1], "flag", KJIT_DTYPE_I1, 0, 0, 1);
  set_arg(&a[2], "half", KJIT_DTYPE_FP16, 0, 0, 2);
  set_arg(&a[3], "word", KJIT_DTYPE_U32, 0, 0, 4);
  set_arg(&a[4], "dbl", KJIT_DTYPE_FP64, 0, 0, 8);
  scalars = load_kernel(ptx, ptx_size, "scalars", args, 5);
  if (!add || !scalars) {
    io.plugin->fini(self);
    return failures;
  }

  /* add: out = x + y over 1000 elements, 4 warps per program. */
  for (i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 0.5f;
    out[i] = -1;
  }
  dx = alloc_copy(x, sizeof x);
  dy = alloc_copy(y, sizeof y);
  dout = alloc_copy(out, sizeof out);
  set_arg(&a[0], "x", KJIT_DTYPE_FP32, 1, dx, 8);
  set_arg(&a[1], "y", KJIT_DTYPE_FP32, 1, dy, 8);
  set_arg(&a[2], "out", KJIT_DTYPE_FP32, 1, dout, 8);
  set_arg(&a[3], "n", KJIT_DTYPE_I32, 0, N, 4);
  expect_ok(launch(add, (N + 127) / 128, 4, args, 4), "launch add");
  expect_ok(sync0(), "synchronize");
  if (copy_back(out, dout, sizeof out)) {
    int good = 1;
    for (i = 0; i < N; ++i)
      good &= out[i] == (float)i + 0.5f;
    check(good, "add wrote x + y");
  }

  /* Refusals before the launch. */
  set_arg(&a[1], "y", KJIT_DTYPE_FP32, 1, (uint64_t)(uintptr_t)y, 8);
  expect_error(launch(add, 8, 4, args, 4),
               "Pointer argument (at 1) cannot be accessed from Triton",
               "host pointer refused");
  set_arg(&a[1], "y", KJIT_DTYPE_FP32, 1, dy, 8);
  expect_error(launch(add, 8, 3, args, 4), "num_warps must be a power of 2",
               "num_warps 3 refused");
  expect_error(launch(add, 8, 4, args, 3), "3 arguments given",
               "argument count checked");

  /* Dispatch cost: the same pointers each time (no driver query). */
  start = now_us();
  for (i = 0; i < (size_t)launches; ++i)
    if ((s = launch(add, (N + 127) / 128, 4, args, 4))) {
      expect_ok(s, "timed launch");
      break;
    }
  per = (now_us() - start) / (double)launches;
  expect_ok(sync0(), "synchronize after timed launches");
  printf("   %ld launches of add: %.3f us per launch call (enqueue), "
         "%.3f us per launch with the final synchronize\n",
         launches, per, (now_us() - start) / (double)launches);

  /* The same launches timed (KJIT_LAUNCH_TIMED): what the events cost the
   * launch call, and that every launch is reported once, in order. */
  if (!(d.launch_flags & KJIT_LAUNCH_TIMED)) {
    printf("FAIL describe does not list KJIT_LAUNCH_TIMED\n");
    ++failures;
  } else {
    double deadline;
    timed_window_start = now_ns();
    launch_flags = KJIT_LAUNCH_TIMED;
    start = now_us();
    for (i = 0; i < (size_t)launches; ++i)
      if ((s = launch(add, (N + 127) / 128, 4, args, 4))) {
        expect_ok(s, "timed launch");
        break;
      }
    per = (now_us() - start) / (double)launches;
    launch_flags = 0;
    expect_ok(sync0(), "synchronize after timed launches");
    /* Reports follow the end events; give the timer thread 10 s. */
    deadline = now_us() + 10e6;
    while (__atomic_load_n(&timed_reports, __ATOMIC_ACQUIRE) <
               (uint64_t)launches &&
           now_us() < deadline) {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
    check(timed_reports == (uint64_t)launches && timed_bad == 0,
          "every timed launch reported once, in order, inside the run");
    printf("   %ld timed launches of add: %.3f us per launch call "
           "(enqueue), mean device time %.3f us (%llu reports, %llu bad)\n",
           launches, per,
           timed_reports ? timed_device_ns / 1e3 / (double)timed_reports : 0,
           (unsigned long long)timed_reports, (unsigned long long)timed_bad);
  }

  /* scalars: bool, fp16 bits, u32, fp64 bits as the kernel received them. */
  ds = alloc_copy(dhost_out, sizeof dhost_out);
  set_arg(&a[0], "out", KJIT_DTYPE_U64, 1, ds, 8);
  set_arg(&a[1], "flag", KJIT_DTYPE_I1, 0, 1, 1);
  set_arg(&a[2], "half", KJIT_DTYPE_FP16, 0, 0x3c00, 2);
  set_arg(&a[3], "word", KJIT_DTYPE_U32, 0, 0xffffffffu, 4);
  set_arg(&a[4], "dbl", KJIT_DTYPE_FP64, 0, UINT64_C(0x3fe0000000000000), 8);
  expect_ok(launch(scalars, 1, 1, args, 5), "launch scalars");
  expect_ok(sync0(), "synchronize");
  if (copy_back(dhost_out, ds, sizeof dhost_out))
    check(dhost_out[0] == 1 && dhost_out[1] == 0x3c00 &&
              dhost_out[2] == 0xffffffffu &&
              dhost_out[3] == UINT64_C(0x3fe0000000000000),
          "scalars received 1, 0x3c00, 0xffffffff, 0.5");

  /* A trap in a child process (a fresh one: CUDA does not survive fork):
   * the context is lost there, not here. */
  fflush(stdout);
  {
    pid_t pid = fork();
    if (pid == 0) {
      char *child[] = {argv[0], "--trap", argv[1], argv[2], NULL};
      execv("/proc/self/exe", child);
      _exit(100);
    } else {
      int st = 0;
      waitpid(pid, &st, 0);
      failures += WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
  }
  expect_ok(sync0(), "this process's context is still fine");

  {
    kjit_backend_unload_args u;
    kjit_backend_deallocate_args f;
    uint64_t all[4];
    all[0] = dx, all[1] = dy, all[2] = dout, all[3] = ds;
    for (i = 0; i < 4; ++i) {
      INIT(f);
      f.address = all[i];
      expect_ok(be->deallocate(self, &f), "deallocate");
    }
    INIT(u);
    u.kernel = add;
    expect_ok(be->unload(self, &u), "unload add");
    u.kernel = scalars;
    expect_ok(be->unload(self, &u), "unload scalars");
  }
  io.plugin->fini(self);
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures,
         failures == 1 ? "" : "s");
  free(ptx);
  return failures > 99 ? 99 : failures;
}
