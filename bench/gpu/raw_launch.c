/*===- raw_launch.c - the floor: cuLaunchKernel of an empty kernel --------===*\
|*                                                                            *|
|* Times N back-to-back cuLaunchKernel calls of the empty kernels e1 (one    *|
|* pointer) and e8 (four pointers, four u32) of a PTX or cubin file, then    *|
|* one cuCtxSynchronize: host wall time per launch (RawDriver.h). Rounds of  *|
|* e1 and e8 alternate (ABAB); the median, min and max over the rounds are   *|
|* printed as one JSON line per kernel.                                       *|
|*                                                                            *|
|*   kjit-raw-launch --module FILE [--iters N] [--rounds R]                   *|
|*                                                                            *|
|* Exit status: 0 measured, 1 a CUDA error, 2 bad usage, 3 no driver.         *|
\*===----------------------------------------------------------------------===*/
#include "RawDriver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *module_path = NULL;
  long iters = 20000, rounds = 11, r;
  char error[512];
  double *times[2];
  int i, which, status;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--module") && i + 1 < argc)
      module_path = argv[++i];
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atol(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s --module FILE [--iters N] [--rounds R]\n",
              argv[0]);
      return 2;
    }
  }
  if (!module_path || iters < 1 || rounds < 1) {
    fprintf(stderr, "raw_launch: --module FILE (cubin or PTX) is required, "
                    "and N and R must be positive\n");
    return 2;
  }
  if ((status = raw_driver_open(module_path, error, sizeof error))) {
    fprintf(stderr, "raw_launch: %s\n", error);
    return status;
  }
  times[0] = malloc(sizeof(double) * (size_t)rounds);
  times[1] = malloc(sizeof(double) * (size_t)rounds);
  if (!times[0] || !times[1])
    return 1;
  for (r = 0; r < rounds; ++r)
    for (which = 0; which < 2; ++which)
      if ((times[which][r] = raw_driver_time(which ? 8 : 1, iters, 32)) < 0)
        return 1;
  for (which = 0; which < 2; ++which) {
    double *t = times[which];
    qsort(t, (size_t)rounds, sizeof(double), compare);
    printf("{\"bench\": \"raw_cuLaunchKernel\", \"args\": %d, "
           "\"us_per_launch_median\": %.3f, \"us_per_launch_min\": %.3f, "
           "\"us_per_launch_max\": %.3f, \"iters\": %ld, \"rounds\": %ld}\n",
           which ? 8 : 1,
           rounds % 2 ? t[rounds / 2] : (t[rounds / 2 - 1] + t[rounds / 2]) / 2,
           t[0], t[rounds - 1], iters, rounds);
  }
  return 0;
}
