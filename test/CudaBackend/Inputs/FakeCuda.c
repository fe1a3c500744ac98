/*===- FakeCuda.c - a scripted CUDA driver for the cuda backend's tests ---===*\
|*                                                                            *|
|* A shared library that stands in for libcuda.so.1 (KJIT_CUDA_DRIVER=path). *|
|* Like the real driver it exports cuGetProcAddress_v2 and hands out the      *|
|* other entry points through it; unlike it, it exports no plain names, so a  *|
|* plugin that took one with dlsym would fail here. Device memory is host     *|
|* memory; a module "loads" the fake cubins the fake finalizers write (the    *|
|* bytes \x7fELF, a 4-byte little-endian length, then text that lists         *|
|* ".entry NAME" and "// params NAME S0 S1 ..." or the PTX of NAME's          *|
|* parameter list, which gives the sizes); a launch runs nothing and          *|
|* logs what it was given to stderr ("fake-cuda: ..."). Pointers into fake    *|
|* allocations are logged as dev<N>+<offset>, so logs are deterministic.      *|
|*                                                                            *|
|* Environment:                                                               *|
|*   FAKE_CUDA_INIT_ERROR=N       cuInit returns N                            *|
|*   FAKE_CUDA_INIT_RECORD=FILE   cuInit appends a line to FILE               *|
|*   FAKE_CUDA_DEVICES=N          N devices (default 1; 0 is allowed)         *|
|*   FAKE_CUDA_CC=XY              compute capability (default 90)             *|
|*   FAKE_CUDA_COOPERATIVE=0      the device cannot launch cooperatively      *|
|*   FAKE_CUDA_MAX_THREADS=N      threads per block the device allows (1024)  *|
|*   FAKE_CUDA_MISSING=NAME       cuGetProcAddress_v2 does not know NAME      *|
|*   FAKE_CUDA_LAUNCH_ERROR=N     every launch returns N at once              *|
|*   FAKE_CUDA_STICKY=K:N         launching kernel K succeeds but makes the   *|
|*                                context sticky with N: every later call     *|
|*                                returns N                                   *|
|*   FAKE_CUDA_RETAIN_ERROR=N     cuDevicePrimaryCtxRetain returns N          *|
|*   FAKE_CUDA_QUIET=1            log launches only (2: nothing, for timing)  *|
|*   FAKE_CUDA_POLLUTE=1          with QUIET=2, each launch calls             *|
|*                                kjit_bench_pollute when the process has it  *|
|*                                (bench/CachePolluter.c, preloaded): the     *|
|*                                cold-cache proxy of the cuda hit path       *|
|*   FAKE_CUDA_LINK_ERROR=N       cuLinkAddData returns N (PTX containing     *|
|*                                "fake-driver-link-error" fails in           *|
|*                                cuLinkComplete with a log, as a compile     *|
|*                                error would)                                *|
|*   FAKE_CUDA_FAILED_CALLS=FILE  every call that returns an error appends    *|
|*                                "NAME -> CUDA_ERROR_X" to FILE: a correct   *|
|*                                run makes none (tools such as               *|
|*                                compute-sanitizer report each one)          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "FakeCubin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  NOT_SUPPORTED = 801
};

static const struct {
  int code;
  const char *name, *text;
} errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
     "PTX JIT compiler library not found"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

static int quiet(void) {
  const char *q = getenv("FAKE_CUDA_QUIET");
  return q && (*q == '1' || *q == '2');
}

#define LOG(...)                                                               \
  do {                                                                         \
    if (!quiet()) {                                                            \
      fprintf(stderr, "fake-cuda: " __VA_ARGS__);                              \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static int initialized, sticky;
static int timing = -1; /* FAKE_CUDA_QUIET=2 without injected errors */
/* The current context is per thread, as in the real driver: a thread that
 * launches without making it current gets CUDA_ERROR_INVALID_CONTEXT. */
static __thread int current_ctx; /* 0: none; else device + 1 */
static int retained[8];

static CUresult check(void) {
  if (!initialized)
    return NOT_INITIALIZED;
  return sticky;
}

/*===--- memory: host malloc, remembered for pointer attributes ---------===*/

enum { MAX_ALLOCS = 256 };
static struct {
  uintptr_t base;
  size_t size;
  void *raw;
} allocs[MAX_ALLOCS];
static int num_allocs;

static int find_alloc(uint64_t p, size_t *offset) {
  int i;
  for (i = 0; i < num_allocs; ++i)
    if (allocs[i].raw && p >= allocs[i].base &&
        p < allocs[i].base + allocs[i].size) {
      *offset = (size_t)(p - allocs[i].base);
      return i;
    }
  return -1;
}

static void show_pointer(uint64_t p, char *buf, size_t size) {
  size_t offset;
  int i = find_alloc(p, &offset);
  if (i >= 0)
    snprintf(buf, size, "dev%d+%zu", i, offset);
  else if (p == 0)
    snprintf(buf, size, "null");
  else
    snprintf(buf, size, "host-or-unknown");
}

static CUresult fake_cuMemAlloc(uint64_t *p, size_t size) {
  CUresult r = check();
  void *raw;
  if (r)
    return r;
  if (!current_ctx)
    return INVALID_CONTEXT;
  if (size == 0 || num_allocs == MAX_ALLOCS)
    return INVALID_VALUE;
  if (size > ((size_t)1 << 30))
    return OUT_OF_MEMORY; /* the fake device has 1 GiB */
  if (!(raw = malloc(size + 256)))
    return OUT_OF_MEMORY;
  allocs[num_allocs].raw = raw;
  allocs[num_allocs].base = ((uintptr_t)raw + 255) & ~(uintptr_t)255;
  allocs[num_allocs].size = size;
  *p = allocs[num_allocs].base;
  LOG("cuMemAlloc %zu bytes -> dev%d", size, num_allocs);
  ++num_allocs;
  return OK;
}

static CUresult fake_cuMemFree(uint64_t p) {
  size_t offset;
  int i = find_alloc(p, &offset);
  if (sticky)
    return sticky;
  if (i < 0 || offset)
    return INVALID_VALUE;
  LOG("cuMemFree dev%d", i);
  free(allocs[i].raw);
  allocs[i].raw = NULL;
  return OK;
}

static CUresult fake_copy(void *dst, const void *src, size_t size,
                          uint64_t device, const char *what) {
  size_t offset;
  int i = find_alloc(device, &offset);
  CUresult r = check();
  if (r)
    return r;
  if (i < 0 || offset + size > allocs[i].size)
    return INVALID_VALUE;
  memcpy(dst, src, size);
  LOG("%s %zu bytes dev%d+%zu", what, size, i, offset);
  return OK;
}

static CUresult fake_cuMemcpyHtoDAsync(uint64_t dst, const void *src,
                                       size_t size, void *stream) {
  (void)stream;
  return fake_copy((void *)(uintptr_t)dst, src, size, dst, "cuMemcpyHtoDAsync");
}

static CUresult fake_cuMemcpyDtoHAsync(void *dst, uint64_t src, size_t size,
                                       void *stream) {
  (void)stream;
  return fake_copy(dst, (const void *)(uintptr_t)src, size, src,
                   "cuMemcpyDtoHAsync");
}

static CUresult fake_cuPointerGetAttribute(void *data, int attribute,
                                           uint64_t p) {
  size_t offset;
  char shown[64];
  if (!initialized)
    return NOT_INITIALIZED;
  show_pointer(p, shown, sizeof shown);
  LOG("cuPointerGetAttribute %d %s", attribute, shown);
  if (attribute != 3 || find_alloc(p, &offset) < 0)
    return INVALID_VALUE;
  memcpy(data, &p, sizeof p);
  return OK;
}

/*===--- devices and contexts ------------------------------------------===*/

static CUresult fake_cuInit(unsigned flags) {
  int e = env_int("FAKE_CUDA_INIT_ERROR", 0);
  const char *record = getenv("FAKE_CUDA_INIT_RECORD");
  (void)flags;
  if (record && *record) {
    FILE *f = fopen(record, "a");
    if (f) {
      fputs("cuInit\n", f);
      fclose(f);
    }
  }
  if (e)
    return e;
  initialized = 1;
  return OK;
}

static CUresult fake_cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}

static CUresult fake_cuGetErrorName(CUresult e, const char **name) {
  size_t i;
  for (i = 0; i < sizeof errors / sizeof errors[0]; ++i)
    if (errors[i].code == e) {
      *name = errors[i].name;
      return OK;
    }
  return INVALID_VALUE;
}

static CUresult fake_cuGetErrorString(CUresult e, const char **text) {
  size_t i;
  for (i = 0; i < sizeof errors / sizeof errors[0]; ++i)
    if (errors[i].code == e) {
      *text = errors[i].text;
      return OK;
    }
  return INVALID_VALUE;
}

static CUresult fake_cuDeviceGetCount(int *n) {
  if (!initialized)
    return NOT_INITIALIZED;
  *n = env_int("FAKE_CUDA_DEVICES", 1);
  return OK;
}

static CUresult fake_cuDeviceGet(int *d, int ordinal) {
  if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 1))
    return INVALID_DEVICE;
  *d = ordinal;
  return OK;
}

static CUresult fake_cuDeviceGetAttribute(int *v, int attribute, int device) {
  int cc = env_int("FAKE_CUDA_CC", 90);
  (void)device;
  switch (attribute) {
  case 1: /* max threads per block */
    *v = env_int("FAKE_CUDA_MAX_THREADS", 1024);
    return OK;
  case 16: /* SMs */
    *v = 132;
    return OK;
  case 75:
    *v = cc / 10;
    return OK;
  case 76:
    *v = cc % 10;
    return OK;
  case 95: /* cooperative launch */
    *v = env_int("FAKE_CUDA_COOPERATIVE", 1);
    return OK;
  case 97: /* max shared memory per block, opt-in */
    *v = 232448;
    return OK;
  default:
    return INVALID_VALUE;
  }
}

static CUresult fake_cuDeviceGetUuid(char *uuid, int device) {
  int i;
  for (i = 0; i < 16; ++i)
    uuid[i] = (char)(0xa0 + i + device);
  return OK;
}

static CUresult fake_cuDevicePrimaryCtxRetain(void **ctx, int device) {
  CUresult r = check();
  if (r)
    return r;
  if ((r = env_int("FAKE_CUDA_RETAIN_ERROR", 0)))
    return r;
  ++retained[device & 7];
  *ctx = (void *)(uintptr_t)(0x1000 + device);
  LOG("cuDevicePrimaryCtxRetain device %d (references: %d)", device,
      retained[device & 7]);
  return OK;
}

static CUresult fake_cuDevicePrimaryCtxRelease(int device) {
  --retained[device & 7];
  LOG("cuDevicePrimaryCtxRelease device %d (references: %d)", device,
      retained[device & 7]);
  return OK;
}

static CUresult fake_cuCtxGetCurrent(void **ctx) {
  *ctx = current_ctx ? (void *)(uintptr_t)(0x1000 + current_ctx - 1) : NULL;
  return OK;
}

static CUresult fake_cuCtxSetCurrent(void *ctx) {
  current_ctx = ctx ? (int)((uintptr_t)ctx - 0x1000) + 1 : 0;
  LOG("cuCtxSetCurrent device %d", current_ctx - 1);
  return OK;
}

static CUresult fake_cuStreamSynchronize(void *stream) {
  CUresult r = check();
  LOG("cuStreamSynchronize stream 0x%llx -> %d",
      (unsigned long long)(uintptr_t)stream, r);
  return r;
}

/*===--- events (silent: only timed launches use them) -----------------===*/

/* An event is the host time at which it was recorded: fake launches run
 * nothing, so a stream's work is done when it is enqueued. */
typedef struct fake_event {
  uint64_t ns;
  int recorded;
} fake_event;

static uint64_t fake_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static CUresult fake_cuEventCreate(fake_event **event, unsigned flags) {
  (void)flags;
  *event = calloc(1, sizeof **event);
  return *event ? OK : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

static CUresult fake_cuEventDestroy(fake_event *event) {
  free(event);
  return OK;
}

static CUresult fake_cuEventRecord(fake_event *event, void *stream) {
  CUresult r = check();
  (void)stream;
  if (r == OK) {
    event->ns = fake_now_ns();
    event->recorded = 1;
  }
  return r;
}

static CUresult fake_cuEventSynchronize(fake_event *event) {
  (void)event;
  return check();
}

static CUresult fake_cuEventQuery(fake_event *event) {
  (void)event;
  return check();
}

static CUresult fake_cuEventElapsedTime(float *ms, fake_event *start,
                                        fake_event *end) {
  if (!start->recorded || !end->recorded)
    return 600; /* CUDA_ERROR_NOT_READY */
  *ms = (float)(((double)end->ns - (double)start->ns) / 1e6);
  return OK;
}

static CUresult fake_cuStreamCreate(void **stream, unsigned flags) {
  static char streams[16];
  static int next;
  (void)flags;
  *stream = &streams[next++ % 16];
  return OK;
}

static CUresult fake_cuStreamDestroy(void *stream) {
  (void)stream;
  return OK;
}

/*===--- modules and functions -----------------------------------------===*/

/* Like the real driver, the fake owns a module's functions (freed with the
 * module) and every loaded module (a sticky context refuses
 * cuModuleUnload, and the plugin then drops its handle: the modules stay
 * with the driver until the process ends, on the list below). */
typedef struct fake_function fake_function;

typedef struct fake_module {
  char *text;
  fake_function *functions;
  struct fake_module *prev, *next;
} fake_module;

struct fake_function {
  fake_module *module;
  fake_function *next;
  char name[128];
  size_t sizes[64];
  int num_params; /* -1: no "// params" line */
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_module *modules;

static CUresult fake_cuModuleLoadData(void **module, const void *image) {
  const unsigned char *b = image;
  uint32_t len;
  fake_module *m;
  CUresult r = check();
  if (r)
    return r;
  if (!current_ctx)
    return INVALID_CONTEXT;
  if (memcmp(b, "\177ELF", 4) != 0)
    return INVALID_IMAGE;
  len = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
        (uint32_t)b[7] << 24;
  if (len > (1u << 24))
    return INVALID_IMAGE;
  m = calloc(1, sizeof *m);
  m->text = malloc(len + 1);
  memcpy(m->text, b + 8, len);
  m->text[len] = '\0';
  if (strstr(m->text, "fake-invalid-image")) {
    free(m->text);
    free(m);
    return INVALID_IMAGE;
  }
  pthread_mutex_lock(&modules_lock);
  if ((m->next = modules))
    modules->prev = m;
  modules = m;
  pthread_mutex_unlock(&modules_lock);
  *module = m;
  LOG("cuModuleLoadData %u bytes: %.*s", len, (int)strcspn(m->text, "\n"),
      m->text);
  return OK;
}

static CUresult fake_cuModuleUnload(void *module) {
  fake_module *m = module;
  if (sticky)
    return sticky;
  LOG("cuModuleUnload");
  pthread_mutex_lock(&modules_lock);
  if (m->prev)
    m->prev->next = m->next;
  else
    modules = m->next;
  if (m->next)
    m->next->prev = m->prev;
  pthread_mutex_unlock(&modules_lock);
  while (m->functions) {
    fake_function *f = m->functions;
    m->functions = f->next;
    free(f);
  }
  free(m->text);
  free(m);
  return OK;
}

static int ident(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

/* "<prefix>NAME" followed by a non-identifier character. */
static const char *find_word(const char *text, const char *prefix,
                             const char *name) {
  size_t pl = strlen(prefix), nl = strlen(name);
  const char *p = text;
  while ((p = strstr(p, prefix))) {
    if (strncmp(p + pl, name, nl) == 0 && !ident(p[pl + nl]))
      return p + pl + nl;
    p += pl;
  }
  return NULL;
}

/* The sizes of the parameters of the PTX entry whose list starts after
 * `p` (at its "("): each ".param" gives the bytes of its type (.u64, .b32,
 * .f16, ...), times N for an array "NAME[N]". -1 when the list cannot be
 * read. */
static int ptx_params(const char *p, size_t *sizes) {
  const char *end;
  int n = 0;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    ++p;
  if (*p != '(' || !(end = strchr(p + 1, ')')))
    return -1;
  ++p;
  while (p < end && (p = strstr(p, ".param")) && p < end) {
    const char *stop = memchr(p, ',', (size_t)(end - p));
    size_t bits = 0, count = 1;
    if (!stop)
      stop = end;
    for (p += 6; p < stop; ++p) {
      if (p[0] == '.' && p[1] && strchr("bsuf", p[1]) && p[2] >= '1' &&
          p[2] <= '9')
        bits = strtoul(p + 2, NULL, 10);
      else if (p[0] == '[')
        count = strtoul(p + 1, NULL, 10);
    }
    if (!bits || bits % 8 || n == 64)
      return -1;
    sizes[n++] = bits / 8 * count;
  }
  return n;
}

static CUresult fake_cuModuleGetFunction(void **function, void *module,
                                         const char *name) {
  fake_module *m = module;
  fake_function *f;
  const char *p, *entry;
  CUresult r = check();
  if (r)
    return r;
  if (!(entry = find_word(m->text, ".entry ", name)))
    return NOT_FOUND;
  f = calloc(1, sizeof *f);
  f->module = m;
  snprintf(f->name, sizeof f->name, "%s", name);
  f->num_params = -1;
  if ((p = find_word(m->text, "// params ", name))) {
    char *end;
    f->num_params = 0;
    for (;;) {
      long v = strtol(p, &end, 10);
      if (end == p || f->num_params == 64)
        break;
      f->sizes[f->num_params++] = (size_t)v;
      p = end;
    }
  } else {
    f->num_params = ptx_params(entry, f->sizes);
  }
  pthread_mutex_lock(&modules_lock);
  f->next = m->functions;
  m->functions = f;
  pthread_mutex_unlock(&modules_lock);
  *function = f;
  return OK;
}

/* Parameters lie at multiples of their sizes (PTX's natural alignment). */
static CUresult fake_cuFuncGetParamInfo(void *function, size_t index,
                                        size_t *offset, size_t *size) {
  fake_function *f = function;
  size_t i, o = 0;
  if (f->num_params < 0)
    return NOT_SUPPORTED;
  if (index >= (size_t)f->num_params)
    return INVALID_VALUE;
  for (i = 0; i <= index; ++i) {
    o = (o + f->sizes[i] - 1) / f->sizes[i] * f->sizes[i];
    if (i < index)
      o += f->sizes[i];
  }
  *offset = o;
  *size = f->sizes[index];
  return OK;
}

static CUresult fake_cuFuncSetAttribute(void *function, int attribute,
                                        int value) {
  fake_function *f = function;
  LOG("cuFuncSetAttribute %s attribute %d = %d", f->name, attribute, value);
  return OK;
}

/*===--- launches ------------------------------------------------------===*/

typedef struct {
  int id;
  char pad[4];
  union {
    char pad[64];
    struct {
      unsigned x, y, z;
    } cluster;
    int value;
  } v;
} fake_attr;

typedef struct {
  unsigned gx, gy, gz, bx, by, bz, smem;
  void *stream;
  fake_attr *attrs;
  unsigned num_attrs;
} fake_config;

/* Two kernels of Inputs/kernels.ptx run for real, on the host: "add"
 * (out[i] = x[i] + y[i] for i < n, over the grid's threads) and "scalars"
 * (out[0..3] = its scalar parameters' bytes, widened), so that tests see
 * what reached the kernel. */
static void run(const fake_function *f, const unsigned *grid,
                const unsigned *block, void **params) {
  if (!params)
    return;
  if (strcmp(f->name, "add") == 0 && f->num_params == 4) {
    float *x, *y, *out;
    int32_t n;
    uint64_t threads = (uint64_t)grid[0] * block[0], i;
    memcpy(&x, params[0], 8);
    memcpy(&y, params[1], 8);
    memcpy(&out, params[2], 8);
    memcpy(&n, params[3], 4);
    for (i = 0; i < threads && i < (uint64_t)(n < 0 ? 0 : n); ++i)
      out[i] = x[i] + y[i];
  } else if (strcmp(f->name, "scalars") == 0 && f->num_params == 5) {
    uint64_t *out, v[4] = {0, 0, 0, 0};
    memcpy(&out, params[0], 8);
    memcpy(&v[0], params[1], 1);
    memcpy(&v[1], params[2], 2);
    memcpy(&v[2], params[3], 4);
    memcpy(&v[3], params[4], 8);
    memcpy(out, v, sizeof v);
  }
}

static CUresult launch(fake_function *f, const unsigned *grid,
                       const unsigned *block, unsigned smem, void *stream,
                       void **params, const fake_attr *attrs, unsigned nattrs) {
  char line[2048];
  size_t used = 0;
  int i;
  unsigned a;
  static const char *sticky_spec;
  static void (*pollute)(void);
  CUresult r = check();
  if (r)
    return r;
  if (timing < 0)
    sticky_spec = getenv("FAKE_CUDA_STICKY");
  if (current_ctx != 1)
    return INVALID_CONTEXT;
  if (timing < 0) {
    timing = env_int("FAKE_CUDA_QUIET", 0) >= 2 && !sticky_spec &&
             !env_int("FAKE_CUDA_LAUNCH_ERROR", 0);
    if (timing && env_int("FAKE_CUDA_POLLUTE", 0))
      *(void **)&pollute = dlsym(RTLD_DEFAULT, "kjit_bench_pollute");
  }
  if (timing) {
    if (pollute)
      pollute(); /* the caches as a driver's launch leaves them */
    return OK;   /* nothing to log or inject: as cheap as a call can be */
  }
  if ((r = env_int("FAKE_CUDA_LAUNCH_ERROR", 0)))
    return r;
  used +=
      (size_t)snprintf(line + used, sizeof line - used,
                       "launch %s grid=%u,%u,%u block=%u,%u,%u smem=%u "
                       "stream=0x%llx params=[",
                       f->name, grid[0], grid[1], grid[2], block[0], block[1],
                       block[2], smem, (unsigned long long)(uintptr_t)stream);
  for (i = 0; i < f->num_params && params; ++i) {
    uint64_t v = 0;
    char shown[64];
    memcpy(&v, params[i], f->sizes[i] < 8 ? f->sizes[i] : 8);
    if (f->sizes[i] == 8 && find_alloc(v, &(size_t){0}) >= 0)
      show_pointer(v, shown, sizeof shown);
    else
      snprintf(shown, sizeof shown, "0x%llx:%zu", (unsigned long long)v,
               f->sizes[i]);
    used += (size_t)snprintf(line + used, sizeof line - used, "%s%s",
                             i ? " " : "", shown);
  }
  used += (size_t)snprintf(line + used, sizeof line - used, "]");
  for (a = 0; a < nattrs; ++a) {
    if (attrs[a].id == 2)
      used += (size_t)snprintf(line + used, sizeof line - used,
                               " cooperative=%d", attrs[a].v.value);
    else if (attrs[a].id == 6)
      used += (size_t)snprintf(line + used, sizeof line - used, " pdl=%d",
                               attrs[a].v.value);
    else if (attrs[a].id == 4)
      used += (size_t)snprintf(line + used, sizeof line - used,
                               " cluster=%u,%u,%u", attrs[a].v.cluster.x,
                               attrs[a].v.cluster.y, attrs[a].v.cluster.z);
    else
      used += (size_t)snprintf(line + used, sizeof line - used, " attr%d",
                               attrs[a].id);
  }
  fprintf(stderr, "fake-cuda: %s\n", line);
  run(f, grid, block, params);
  if (sticky_spec) {
    const char *colon = strchr(sticky_spec, ':');
    if (colon && (size_t)(colon - sticky_spec) == strlen(f->name) &&
        strncmp(sticky_spec, f->name, strlen(f->name)) == 0)
      sticky = atoi(colon + 1); /* found by the next call */
  }
  return OK;
}

static CUresult fake_cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned smem, void *stream,
                                    void **params, void **extra) {
  unsigned grid[3], block[3];
  (void)extra;
  grid[0] = gx, grid[1] = gy, grid[2] = gz;
  block[0] = bx, block[1] = by, block[2] = bz;
  return launch(function, grid, block, smem, stream, params, NULL, 0);
}

static CUresult fake_cuLaunchKernelEx(const fake_config *c, void *function,
                                      void **params, void **extra) {
  unsigned grid[3], block[3];
  (void)extra;
  grid[0] = c->gx, grid[1] = c->gy, grid[2] = c->gz;
  block[0] = c->bx, block[1] = c->by, block[2] = c->bz;
  return launch(function, grid, block, c->smem, c->stream, params, c->attrs,
                c->num_attrs);
}

/*===--- the JIT linker: PTX to the fake cubin format -------------------===*/

typedef struct fake_link {
  int target;
  char *log;
  size_t log_size;
  char *info; /* CU_JIT_INFO_LOG_BUFFER, written when CU_JIT_LOG_VERBOSE */
  size_t info_size;
  int verbose;
  char *ptx;
  unsigned char *cubin;
} fake_link;

static CUresult fake_cuLinkCreate(unsigned n, int *options, void **values,
                                  void **state) {
  fake_link *l;
  unsigned i;
  CUresult r = check();
  if (r)
    return r;
  if (!current_ctx)
    return INVALID_CONTEXT;
  l = calloc(1, sizeof *l);
  for (i = 0; i < n; ++i) {
    if (options[i] == 5) /* CU_JIT_ERROR_LOG_BUFFER */
      l->log = values[i];
    else if (options[i] == 6) /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */
      l->log_size = (size_t)(uintptr_t)values[i];
    else if (options[i] == 9) /* CU_JIT_TARGET */
      l->target = (int)(uintptr_t)values[i];
    else if (options[i] == 3) /* CU_JIT_INFO_LOG_BUFFER */
      l->info = values[i];
    else if (options[i] == 4) /* CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES */
      l->info_size = (size_t)(uintptr_t)values[i];
    else if (options[i] == 12) /* CU_JIT_LOG_VERBOSE */
      l->verbose = (int)(uintptr_t)values[i];
  }
  *state = l;
  return OK;
}

static CUresult fake_cuLinkAddData(void *state, int type, void *data,
                                   size_t size, const char *name, unsigned n,
                                   int *options, void **values) {
  fake_link *l = state;
  CUresult r;
  (void)name, (void)n, (void)options, (void)values;
  if ((r = env_int("FAKE_CUDA_LINK_ERROR", 0)))
    return r;
  /* The driver reads PTX as a C string: it must end with its NUL. */
  if (type != 1 || !size || ((const char *)data)[size - 1] != '\0')
    return INVALID_VALUE;
  l->ptx = strdup(data);
  return OK;
}

static CUresult fake_cuLinkComplete(void *state, void **cubin, size_t *size) {
  fake_link *l = state;
  char head[128];
  if (!l->ptx)
    return INVALID_VALUE;
  if (strstr(l->ptx, "fake-driver-link-error")) {
    if (l->log && l->log_size)
      snprintf(l->log, l->log_size,
               "ptxas application ptx input; error   : Unresolved "
               "extern function '__nv_expf'\n");
    return 218; /* CUDA_ERROR_INVALID_PTX */
  }
  /* CUjit_target: sm_90 is 90, sm_90a 0x10000 + 90, sm_100f 0x20000 + 100. */
  snprintf(head, sizeof head, "fake-cubin by the driver for target %s%d\n",
           l->target >= 0x20000   ? "0x20000+"
           : l->target >= 0x10000 ? "0x10000+"
                                  : "",
           l->target & 0xffff);
  l->cubin = fake_cubin(head, l->ptx, strlen(l->ptx), size);
  *cubin = l->cubin;
  if (l->verbose && l->info && l->info_size) {
    char *report = fake_report(l->ptx);
    snprintf(l->info, l->info_size, "%s", report ? report : "");
    free(report);
  }
  return OK;
}

static CUresult fake_cuLinkDestroy(void *state) {
  fake_link *l = state;
  free(l->ptx);
  free(l->cubin);
  free(l);
  return OK;
}

/*===--- failed calls --------------------------------------------------===*/

/* FAKE_CUDA_FAILED_CALLS: each call that returns an error, one line. */
static void record_failure(const char *name, CUresult r) {
  const char *path = getenv("FAKE_CUDA_FAILED_CALLS");
  const char *code = NULL;
  FILE *f;
  if (!path || !*path || !(f = fopen(path, "a")))
    return;
  if (fake_cuGetErrorName(r, &code) != OK)
    code = "CUDA error";
  fprintf(f, "%s -> %s (%d)\n", name, code, r);
  fclose(f);
}

/* What the plugin is handed for each entry point: the fake's function,
 * with its failures recorded. */
#define COUNTED(n, params, args)                                               \
  static CUresult counted_##n params {                                         \
    CUresult r = fake_##n args;                                                \
    if (r != OK)                                                               \
      record_failure(#n, r);                                                   \
    return r;                                                                  \
  }
COUNTED(cuInit, (unsigned flags), (flags))
COUNTED(cuDriverGetVersion, (int *v), (v))
COUNTED(cuGetErrorName, (CUresult e, const char **name), (e, name))
COUNTED(cuGetErrorString, (CUresult e, const char **text), (e, text))
COUNTED(cuDeviceGetCount, (int *n), (n))
COUNTED(cuDeviceGet, (int *d, int ordinal), (d, ordinal))
COUNTED(cuDeviceGetAttribute, (int *v, int attribute, int device),
        (v, attribute, device))
COUNTED(cuDeviceGetUuid, (char *uuid, int device), (uuid, device))
COUNTED(cuDevicePrimaryCtxRetain, (void **ctx, int device), (ctx, device))
COUNTED(cuDevicePrimaryCtxRelease, (int device), (device))
COUNTED(cuCtxGetCurrent, (void **ctx), (ctx))
COUNTED(cuCtxSetCurrent, (void *ctx), (ctx))
COUNTED(cuModuleLoadData, (void **module, const void *image), (module, image))
COUNTED(cuModuleUnload, (void *module), (module))
COUNTED(cuModuleGetFunction, (void **function, void *module, const char *name),
        (function, module, name))
COUNTED(cuFuncGetParamInfo,
        (void *function, size_t index, size_t *offset, size_t *size),
        (function, index, offset, size))
COUNTED(cuFuncSetAttribute, (void *function, int attribute, int value),
        (function, attribute, value))
COUNTED(cuLaunchKernel,
        (void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
         unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
         void **extra),
        (function, gx, gy, gz, bx, by, bz, smem, stream, params, extra))
COUNTED(cuLaunchKernelEx,
        (const fake_config *c, void *function, void **params, void **extra),
        (c, function, params, extra))
COUNTED(cuPointerGetAttribute, (void *data, int attribute, uint64_t p),
        (data, attribute, p))
COUNTED(cuStreamSynchronize, (void *stream), (stream))
COUNTED(cuMemAlloc, (uint64_t *p, size_t size), (p, size))
COUNTED(cuMemFree, (uint64_t p), (p))
COUNTED(cuMemcpyHtoDAsync,
        (uint64_t dst, const void *src, size_t size, void *stream),
        (dst, src, size, stream))
COUNTED(cuMemcpyDtoHAsync, (void *dst, uint64_t src, size_t size, void *stream),
        (dst, src, size, stream))
COUNTED(cuEventCreate, (fake_event * *event, unsigned flags), (event, flags))
COUNTED(cuEventDestroy, (fake_event * event), (event))
COUNTED(cuEventRecord, (fake_event * event, void *stream), (event, stream))
COUNTED(cuEventSynchronize, (fake_event * event), (event))
COUNTED(cuEventQuery, (fake_event * event), (event))
COUNTED(cuEventElapsedTime, (float *ms, fake_event *start, fake_event *end),
        (ms, start, end))
COUNTED(cuStreamCreate, (void **stream, unsigned flags), (stream, flags))
COUNTED(cuStreamDestroy, (void *stream), (stream))
COUNTED(cuLinkCreate, (unsigned n, int *options, void **values, void **state),
        (n, options, values, state))
COUNTED(cuLinkAddData,
        (void *state, int type, void *data, size_t size, const char *name,
         unsigned n, int *options, void **values),
        (state, type, data, size, name, n, options, values))
COUNTED(cuLinkComplete, (void *state, void **cubin, size_t *size),
        (state, cubin, size))
COUNTED(cuLinkDestroy, (void *state), (state))
#undef COUNTED

/*===--- cuGetProcAddress_v2 -------------------------------------------===*/

#define ENTRY(n) {#n, (void (*)(void))counted_##n}
static const struct {
  const char *name;
  void (*fn)(void);
} table[] = {
    ENTRY(cuInit),
    ENTRY(cuDriverGetVersion),
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
    ENTRY(cuDeviceGetCount),
    ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetAttribute),
    ENTRY(cuDeviceGetUuid),
    ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease),
    ENTRY(cuCtxGetCurrent),
    ENTRY(cuCtxSetCurrent),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuFuncGetParamInfo),
    ENTRY(cuFuncSetAttribute),
    ENTRY(cuLaunchKernel),
    ENTRY(cuLaunchKernelEx),
    ENTRY(cuPointerGetAttribute),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuMemAlloc),
    ENTRY(cuMemFree),
    ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuEventCreate),
    ENTRY(cuEventDestroy),
    ENTRY(cuEventRecord),
    ENTRY(cuEventSynchronize),
    ENTRY(cuEventQuery),
    ENTRY(cuEventElapsedTime),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy),
    ENTRY(cuLinkCreate),
    ENTRY(cuLinkAddData),
    ENTRY(cuLinkComplete),
    ENTRY(cuLinkDestroy),
};

#ifndef FAKE_CUDA_NO_ENTRY
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                    uint64_t flags, int *status) {
  const char *missing = getenv("FAKE_CUDA_MISSING");
  size_t i;
  *pfn = NULL;
  if (version != 13000 || flags != 0) {
    /* The plugin must ask for the CUDA 13.0 ABI with the default flags. */
    LOG("cuGetProcAddress_v2 %s version %d flags %llu: refused", symbol,
        version, (unsigned long long)flags);
    *status = 2; /* CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT */
    record_failure("cuGetProcAddress_v2", NOT_FOUND);
    return NOT_FOUND;
  }
  if (!(missing && strcmp(missing, symbol) == 0))
    for (i = 0; i < sizeof table / sizeof table[0]; ++i)
      if (strcmp(table[i].name, symbol) == 0) {
        memcpy(pfn, &table[i].fn, sizeof *pfn);
        *status = 0;
        return OK;
      }
  *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  record_failure("cuGetProcAddress_v2", NOT_FOUND);
  return NOT_FOUND;
}
#else
EXPORT int cuInit(unsigned flags) { return fake_cuInit(flags); }
#endif
