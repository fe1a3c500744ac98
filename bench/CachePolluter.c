/*===- CachePolluter.c - what a driver's launch does to the L1 caches -----===*\
|*                                                                            *|
|* kjit_bench_pollute does to the caches roughly what a driver's              *|
|* cuLaunchKernel does between two of the runtime's launches in a GPU launch  *|
|* loop: it runs 80 KiB of code that nothing else runs (1024 functions of     *|
|* about 70 bytes, called through a table: the L1 instruction cache, the      *|
|* branch target buffer) and writes 128 KiB of data (the L1 data cache). The  *|
|* launch path around it then misses on every line it touches, code and data, *|
|* and callgrind's cache simulation counts those lines                        *|
|* (scripts/dispatch-cache-proxy.sh, docs/Dispatch.md "A proxy for cold       *|
|* caches"). The null backend calls it (KJIT_BENCH_NULL_POLLUTE=1), and so    *|
|* does the fake CUDA driver's launch when it finds it in the process         *|
|* (FAKE_CUDA_POLLUTE=1, this library preloaded).                             *|
\*===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>

/* The one symbol of the library. */
__attribute__((visibility("default"))) void kjit_bench_pollute(void);

/* A polluting function's body: multiplies and adds that the compiler cannot
 * fold into one another (the empty asm hides each result), about 8 bytes of
 * code each. */
#define STEP(x)                                                                \
  do {                                                                         \
    (x) = (x) * 0x9E3779B97F4A7C15ull + 1;                                     \
    __asm__ volatile("" : "+r"(x));                                            \
  } while (0)
/* A function of about 70 bytes, named f<five base-4 digits>. */
#define POLLUTER(n)                                                            \
  __attribute__((noinline)) static uint64_t f##n(uint64_t x) {                 \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    STEP(x);                                                                   \
    return x;                                                                  \
  }
#define X4(M, p) M(p##0) M(p##1) M(p##2) M(p##3)
#define X16(M, p) X4(M, p##0) X4(M, p##1) X4(M, p##2) X4(M, p##3)
#define X64(M, p) X16(M, p##0) X16(M, p##1) X16(M, p##2) X16(M, p##3)
#define X256(M, p) X64(M, p##0) X64(M, p##1) X64(M, p##2) X64(M, p##3)
#define X1024(M) X256(M, 0) X256(M, 1) X256(M, 2) X256(M, 3)
X1024(POLLUTER)
#define POINTER(n) f##n,
static uint64_t (*const kPolluters[])(uint64_t) = {X1024(POINTER)};
enum { kPolluteFunctions = sizeof(kPolluters) / sizeof(kPolluters[0]) };

static volatile unsigned char polluteData[128 << 10];

void kjit_bench_pollute(void) {
  uint64_t x = 1;
  for (int i = 0; i < kPolluteFunctions; ++i)
    x = kPolluters[i](x);
  for (size_t i = 0; i < sizeof(polluteData); i += 64)
    polluteData[i] = (unsigned char)(polluteData[i] + x);
}
