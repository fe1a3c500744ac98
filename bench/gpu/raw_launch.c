/*===- raw_launch.c - the floor: cuLaunchKernel of an empty kernel
 * ---------===//
 *
 * Loads a cubin or PTX file (default: empty.ptx beside the binary's
 * share/ folder, or the path given), then times N back-to-back
 * cuLaunchKernel calls of the empty kernels e1 (one pointer) and e8 (four
 * pointers, four u32) followed by one cuCtxSynchronize: host wall time per
 * launch. Rounds of e1 and e8 alternate (ABAB); the median, min and max over
 * the rounds are printed as one JSON line per kernel. libcuda.so.1 is opened
 * with dlopen and every entry point is resolved through cuGetProcAddress
 * (redteam note 12: plain dlsym returns legacy ABIs), so this builds without
 * the CUDA toolkit and runs wherever a driver is installed.
 *
 *   kjit-raw-launch [--module FILE] [--iters N] [--rounds R]
 *
 * Exit status: 0 measured, 1 a CUDA error, 2 bad usage, 3 no driver.
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

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

static int check(CUresult r, const char *what) {
  if (r != 0) {
    const char *s = "?";
    if (cuGetErrorString)
      cuGetErrorString(r, &s);
    fprintf(stderr, "raw_launch: %s failed: %d (%s)\n", what, r, s);
    exit(1);
  }
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *data;
  long n;
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = malloc((size_t)n + 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(data);
    return NULL;
  }
  data[n] = 0; /* PTX must be NUL-terminated */
  fclose(f);
  *size = (size_t)n;
  return data;
}

#define RESOLVE(name)                                                          \
  do {                                                                         \
    int status = 0;                                                            \
    if (getProc(#name, (void **)&name, 12000, 0, &status) != 0 || !name) {     \
      fprintf(stderr, "raw_launch: cannot resolve %s\n", #name);               \
      return 3;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  const char *modulePath = NULL;
  long iters = 20000, rounds = 11;
  int i, r, which;
  void *lib;
  GetProcAddress getProc;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f1, f8;
  CUdeviceptr p;
  unsigned n = 5;
  void *a1[1], *a8[8];
  double *t1, *t8;
  char *image;
  size_t imageSize = 0;

  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--module") && i + 1 < argc)
      modulePath = argv[++i];
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atol(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--module FILE] [--iters N] [--rounds R]\n",
              argv[0]);
      return 2;
    }
  }
  if (!modulePath || iters < 1 || rounds < 1) {
    fprintf(stderr, "raw_launch: --module FILE (cubin or PTX) is required\n");
    return 2;
  }
  image = readFile(modulePath, &imageSize);
  if (!image) {
    fprintf(stderr, "raw_launch: cannot read %s\n", modulePath);
    return 2;
  }

  lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "raw_launch: %s\n", dlerror());
    return 3;
  }
  *(void **)&getProc = dlsym(lib, "cuGetProcAddress_v2");
  if (!getProc) {
    fprintf(stderr, "raw_launch: no cuGetProcAddress_v2 in libcuda.so.1\n");
    return 3;
  }
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

  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
  check(cuModuleGetFunction(&f1, mod, "e1"), "cuModuleGetFunction(e1)");
  check(cuModuleGetFunction(&f8, mod, "e8"), "cuModuleGetFunction(e8)");
  check(cuMemAlloc(&p, 1 << 20), "cuMemAlloc");
  a1[0] = &p;
  for (i = 0; i < 4; ++i)
    a8[i] = &p;
  for (i = 4; i < 8; ++i)
    a8[i] = &n;

  /* Warm both kernels up. */
  check(cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, 0, a1, 0), "launch");
  check(cuLaunchKernel(f8, 1, 1, 1, 32, 1, 1, 0, 0, a8, 0), "launch");
  check(cuCtxSynchronize(), "cuCtxSynchronize");

  t1 = malloc(sizeof(double) * (size_t)rounds);
  t8 = malloc(sizeof(double) * (size_t)rounds);
  for (r = 0; r < rounds; ++r) {
    for (which = 0; which < 2; ++which) {
      CUfunction f = which ? f8 : f1;
      void **args = which ? a8 : a1;
      double t0 = now();
      long k;
      for (k = 0; k < iters; ++k)
        check(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, 0), "launch");
      check(cuCtxSynchronize(), "cuCtxSynchronize");
      (which ? t8 : t1)[r] = (now() - t0) * 1e6 / (double)iters;
    }
  }
  for (which = 0; which < 2; ++which) {
    double *t = which ? t8 : t1;
    double lo, hi, med;
    med = median(t, (int)rounds); /* sorts t */
    lo = t[0];
    hi = t[rounds - 1];
    printf("{\"bench\": \"raw_cuLaunchKernel\", \"args\": %d, "
           "\"us_per_launch_median\": %.3f, \"us_per_launch_min\": %.3f, "
           "\"us_per_launch_max\": %.3f, \"iters\": %ld, \"rounds\": %ld}\n",
           which ? 8 : 1, med, lo, hi, iters, rounds);
  }
  return 0;
}
