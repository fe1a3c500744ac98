/*===- RawDriver.h - the bare driver floor, shared by the GPU benches -----===*\
|*                                                                            *|
|* The floor of a launch: cuLaunchKernel of the empty kernels e1 (one        *|
|* pointer) and e8 (four pointers, four u32) of empty.ptx, on device 0's     *|
|* primary context and the legacy default stream, with nothing of kjit in    *|
|* between. kjit-raw-launch times it alone; kjit-gpu-dispatch --raw-module   *|
|* times it in the same process as kjit's launches, round after round, so    *|
|* that both run on one context, one CPU and one instance of the GPU. The    *|
|* driver is opened with dlopen and every entry point is resolved through    *|
|* cuGetProcAddress_v2 (plain dlsym returns legacy ABIs), so this builds     *|
|* without the CUDA toolkit.                                                  *|
\*===----------------------------------------------------------------------===*/
#ifndef KJIT_BENCH_GPU_RAWDRIVER_H
#define KJIT_BENCH_GPU_RAWDRIVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens libcuda.so.1, initializes it, makes device 0's primary context
 * current on the calling thread and loads `module_path` (PTX or cubin),
 * whose e1 and e8 it looks up; allocates 1 MiB for their pointers. Returns
 * 0, or writes why not into `error` and returns 3 (no driver) or 1 (a CUDA
 * error or an unreadable module). */
int raw_driver_open(const char *module_path, char *error, size_t error_size);

/* Launches e1 (`args` 1) or e8 (`args` 8) `iters` times back to back with
 * blocks of `threads` threads, then synchronizes the context; returns the
 * host wall time per launch in microseconds, or a negative value after a
 * CUDA error (written to stderr). */
double raw_driver_time(int args, long iters, unsigned threads);

/* A monotonic clock in seconds. */
double raw_driver_now(void);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_BENCH_GPU_RAWDRIVER_H */
