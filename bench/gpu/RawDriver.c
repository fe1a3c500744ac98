/*===- RawDriver.c - the bare driver floor (RawDriver.h) ------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "RawDriver.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef CUresult (*GetProcAddress)(const char *, void **, int, uint64_t, int *);

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuGetErrorString)(CUresult, const char **);

static CUfunction e1, e8;
static CUdeviceptr buffer;
static unsigned scalar = 5;
static void *args1[1], *args8[8];

static const char *describe(CUresult r) {
  const char *s = "?";
  if (cuGetErrorString)
    cuGetErrorString(r, &s);
  return s;
}

double raw_driver_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The whole file, NUL-terminated (PTX must be). */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  char *data = NULL;
  long n;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1)) &&
      fread(data, 1, (size_t)n, f) == (size_t)n)
    data[n] = 0;
  else {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

int raw_driver_open(const char *module_path, char *error, size_t error_size) {
  GetProcAddress get_proc;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUresult r;
  char *image;
  int i;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(error, error_size, "%s", dlerror());
    return 3;
  }
  *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(error, error_size, "no cuGetProcAddress_v2 in libcuda.so.1");
    return 3;
  }
#define RESOLVE(name)                                                          \
  do {                                                                         \
    int found = 0;                                                             \
    if (get_proc(#name, (void **)&name, 12000, 0, &found) != 0 || !name) {     \
      snprintf(error, error_size, "cannot resolve %s", #name);                 \
      return 3;                                                                \
    }                                                                          \
  } while (0)
  RESOLVE(cuGetErrorString);
  RESOLVE(cuInit);
  RESOLVE(cuDeviceGet);
  RESOLVE(cuDevicePrimaryCtxRetain);
  RESOLVE(cuCtxSetCurrent);
  RESOLVE(cuModuleLoadData);
  RESOLVE(cuModuleGetFunction);
  RESOLVE(cuMemAlloc);
  RESOLVE(cuLaunchKernel);
  RESOLVE(cuCtxSynchronize);
#undef RESOLVE
  image = read_file(module_path);
  if (!image) {
    snprintf(error, error_size, "cannot read %s", module_path);
    return 1;
  }
#define CHECK(call, what)                                                      \
  do {                                                                         \
    if ((r = (call)) != 0) {                                                   \
      snprintf(error, error_size, "%s failed: %d (%s)", what, r, describe(r)); \
      free(image);                                                             \
      return 1;                                                                \
    }                                                                          \
  } while (0)
  CHECK(cuInit(0), "cuInit");
  CHECK(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  CHECK(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CHECK(cuModuleLoadData(&mod, image), "cuModuleLoadData");
  CHECK(cuModuleGetFunction(&e1, mod, "e1"), "cuModuleGetFunction(e1)");
  CHECK(cuModuleGetFunction(&e8, mod, "e8"), "cuModuleGetFunction(e8)");
  CHECK(cuMemAlloc(&buffer, 1 << 20), "cuMemAlloc");
#undef CHECK
  free(image);
  args1[0] = &buffer;
  for (i = 0; i < 4; ++i)
    args8[i] = &buffer;
  for (i = 4; i < 8; ++i)
    args8[i] = &scalar;
  /* Both kernels once, so that the first timed launch is not a first use. */
  if (raw_driver_time(1, 1, 32) < 0 || raw_driver_time(8, 1, 32) < 0) {
    snprintf(error, error_size, "the warm-up launches failed");
    return 1;
  }
  return 0;
}

double raw_driver_time(int args, long iters, unsigned threads) {
  CUfunction f = args == 8 ? e8 : e1;
  void **params = args == 8 ? args8 : args1;
  double t0 = raw_driver_now();
  CUresult r;
  long k;
  for (k = 0; k < iters; ++k)
    if ((r = cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, 0, params, 0))) {
      fprintf(stderr, "raw driver: cuLaunchKernel failed: %d (%s)\n", r,
              describe(r));
      return -1;
    }
  if ((r = cuCtxSynchronize())) {
    fprintf(stderr, "raw driver: cuCtxSynchronize failed: %d (%s)\n", r,
            describe(r));
    return -1;
  }
  return (raw_driver_now() - t0) * 1e6 / (double)iters;
}
