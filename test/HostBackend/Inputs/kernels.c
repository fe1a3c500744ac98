/*===- kernels.c - hand-written host kernels for backend tests ----*- C -*-===*\
|*                                                                            *|
|* Each kernel follows include/kjit-c/HostKernel.h exactly as the compiler's  *|
|* host lowering would emit it: an entry that runs one SIMT thread, a flags   *|
|* word, and the object-wide ABI version. They also export                    *|
|* kjit_host_signature_<K> (docs/HostBackend.md), so that the backend can     *|
|* check argument counts and types.                                           *|
|*                                                                            *|
|* Built five times (test/HostBackend/CMakeLists.txt): as is (the current    *|
|* ABI version, which the warp-barrier kernels need); with                    *|
|* KJIT_TEST_ABI_VERSION=99 (a wrong ABI version) and =1 (the first one);     *|
|* with KJIT_TEST_NO_ABI (no kjit_host_abi_version at all); linked            *|
|* -z nodelete (stays resident after dlclose).                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/HostKernel.h"

#include <fenv.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef KJIT_TEST_ABI_VERSION
#define KJIT_TEST_ABI_VERSION KJIT_HOST_ABI_VERSION
#endif

#ifndef KJIT_TEST_NO_ABI
EXPORT const uint32_t kjit_host_abi_version = KJIT_TEST_ABI_VERSION;
#endif

/* Declares kernel K's flags and signature and starts its entry. */
#define KERNEL(K, FLAGS, SIGNATURE)                                            \
  EXPORT const uint32_t kjit_host_flags_##K = (FLAGS);                         \
  EXPORT const char kjit_host_signature_##K[] = SIGNATURE;                     \
  EXPORT void kjit_host_entry_##K(kjit_host_thread *thread, void *const *args)

#define ARG(T, i) (*(T const *)args[i])

static uint32_t tid(const kjit_host_thread *t) { return t->thread_id[0]; }
static uint32_t pid(const kjit_host_thread *t) {
  return t->program_id[0] +
         t->num_programs[0] *
             (t->program_id[1] + t->num_programs[1] * t->program_id[2]);
}
static uint32_t global_id(const kjit_host_thread *t) {
  return pid(t) * t->block_dim[0] + tid(t);
}
static void barrier(kjit_host_thread *t) { t->runtime->barrier(t); }
/* ABI 3. */
static void warp_barrier(kjit_host_thread *t) { t->runtime->warp_barrier(t); }
static void fail(kjit_host_thread *t, const char *message) {
  t->runtime->assert_fail(t, message, strlen(message));
}

/* Workgroup memory: TLS of the worker running the program (HostKernel.h).
 * Sized for 32 warps. */
static __thread float partials[1024];
static __thread int64_t shared_ints[1024];

/* out[i] = x[i] + y[i] for i < n: no barrier, so a plain loop. */
KERNEL(vadd, 0, "*fp32,*fp32,*fp32,i32") {
  const float *x = ARG(float *, 0), *y = ARG(float *, 1);
  float *out = ARG(float *, 2);
  int32_t n = ARG(int32_t, 3);
  uint32_t i = global_id(thread);
  if ((int64_t)i < n)
    out[i] = x[i] + y[i];
}

/* out[p] = sum of the program's block of x, by a tree reduction in
 * workgroup memory with a barrier per level. */
KERNEL(reduce, KJIT_HOST_USES_BARRIER, "*fp32,*fp32") {
  const float *x = ARG(float *, 0);
  float *out = ARG(float *, 1);
  uint32_t t = tid(thread), s;
  partials[t] = x[global_id(thread)];
  barrier(thread);
  for (s = thread->block_dim[0] / 2; s > 0; s /= 2) {
    if (t < s)
      partials[t] += partials[t + s];
    barrier(thread);
  }
  if (t == 0)
    out[pid(thread)] = partials[0];
}

/* `rounds` rounds of: publish t * r, barrier, add the right neighbour's
 * value, barrier. Keeps locals live across many barriers. out[g] = sum over
 * r of ((t + 1) % T) * r. */
KERNEL(rounds, KJIT_HOST_USES_BARRIER, "*i64,i32") {
  int64_t *out = ARG(int64_t *, 0);
  int32_t rounds = ARG(int32_t, 1), r;
  uint32_t t = tid(thread), n = thread->block_dim[0];
  int64_t acc = 0;
  for (r = 0; r < rounds; ++r) {
    shared_ints[t] = (int64_t)t * r;
    barrier(thread);
    acc += shared_ints[(t + 1) % n];
    barrier(thread);
  }
  out[global_id(thread)] = acc;
}

/* Nothing but `count` barriers: measures the cost of one barrier. */
KERNEL(barriers, KJIT_HOST_USES_BARRIER, "i32") {
  int32_t count = ARG(int32_t, 0), i;
  for (i = 0; i < count; ++i)
    barrier(thread);
}

/* Threads 0 and 1 of program 0 print the values of every print kind. */
KERNEL(printer, 0, "*fp32,i32,i1") {
  const float *x = ARG(float *, 0);
  int32_t n = ARG(int32_t, 1);
  uint8_t flag = ARG(uint8_t, 2);
  kjit_host_print_arg values[5];
  double d = x[tid(thread)];
  static const char prefix[] = "values: ";
  if (pid(thread) != 0 || tid(thread) > 1)
    return;
  values[0].kind = KJIT_HOST_PRINT_FLOAT;
  values[0].bits_width = 32;
  memcpy(&values[0].bits, &d, sizeof d);
  values[1].kind = KJIT_HOST_PRINT_SIGNED;
  values[1].bits_width = 32;
  values[1].bits = (uint64_t)(int64_t)(n - 100 * (int32_t)tid(thread));
  values[2].kind = KJIT_HOST_PRINT_UNSIGNED;
  values[2].bits_width = 1;
  values[2].bits = flag;
  values[3].kind = KJIT_HOST_PRINT_POINTER;
  values[3].bits_width = 64;
  values[3].bits = 0xdeadbeef0ull;
  values[4].kind = KJIT_HOST_PRINT_UNSIGNED;
  values[4].bits_width = 64;
  values[4].bits = 18446744073709551615ull;
  thread->runtime->print(thread, prefix, sizeof prefix - 1, values, 5);
  /* A print without a prefix, and one without values. */
  thread->runtime->print(thread, NULL, 0, values, 2);
  thread->runtime->print(thread, "no values", 9, NULL, 0);
}

/* Every thread of every program prints one line: its global id and `tag`. */
KERNEL(chatty, 0, "i32") {
  kjit_host_print_arg values[2];
  static const char prefix[] = "chatty";
  values[0].kind = KJIT_HOST_PRINT_UNSIGNED;
  values[0].bits_width = 32;
  values[0].bits = global_id(thread);
  values[1].kind = KJIT_HOST_PRINT_SIGNED;
  values[1].bits_width = 32;
  values[1].bits = (uint64_t)(int64_t)ARG(int32_t, 0);
  thread->runtime->print(thread, prefix, sizeof prefix - 1, values, 2);
}

/* Every thread writes 1, except thread `bad_thread` of program
 * `bad_program` (-1: of every program), which fails an assert first. */
KERNEL(asserter, 0, "*i32,i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  int32_t bad_program = ARG(int32_t, 1), bad_thread = ARG(int32_t, 2);
  if ((bad_program < 0 || (uint32_t)bad_program == pid(thread)) &&
      (uint32_t)bad_thread == tid(thread))
    fail(thread, "x < n (x = 7, n = 5)");
  out[global_id(thread)] = 1;
}

/* The same with a barrier: threads write 1 before and 2 after it, and the
 * failing thread asserts before reaching it. */
KERNEL(assert_barrier, KJIT_HOST_USES_BARRIER, "*i32,i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  int32_t bad_program = ARG(int32_t, 1), bad_thread = ARG(int32_t, 2);
  out[global_id(thread)] = 1;
  if ((bad_program < 0 || (uint32_t)bad_program == pid(thread)) &&
      (uint32_t)bad_thread == tid(thread))
    fail(thread, "assert before the barrier");
  barrier(thread);
  out[global_id(thread)] = 2;
}

/* Threads with t >= cut return early; the others wait at a barrier. */
KERNEL(divergent, KJIT_HOST_USES_BARRIER, "*i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  int32_t cut = ARG(int32_t, 1);
  out[global_id(thread)] = 1;
  if ((int32_t)tid(thread) >= cut && (cut >= 0 || tid(thread) % 2))
    return;
  barrier(thread);
  out[global_id(thread)] = 2;
}

/* Calls a barrier although its flags say it has none. */
KERNEL(lying, 0, "*i32") {
  int32_t *out = ARG(int32_t *, 0);
  barrier(thread);
  out[global_id(thread)] = 1;
}

/*===----------------------------------------------------------------------===*\
|* Warp barriers (warp-barrier.test)                                          *|
\*===----------------------------------------------------------------------===*/

/* The thread's warp: its first thread and its width (the last warp of a
 * program whose width is not a multiple of 32 is partial). */
static uint32_t warp_first(const kjit_host_thread *t) {
  return tid(t) - tid(t) % 32;
}
static uint32_t warp_width(const kjit_host_thread *t) {
  uint32_t first = warp_first(t), n = t->block_dim[0];
  return n - first < 32 ? n - first : 32;
}
/* The next lane of the thread's warp, as a thread id. */
static uint32_t warp_next(const kjit_host_thread *t) {
  return warp_first(t) + (tid(t) - warp_first(t) + 1) % warp_width(t);
}

/* Warp w runs `base + w * step` rounds of: publish (t + 1) * (r + 1), warp
 * barrier, add the next lane's value, warp barrier. Warp barriers only, so
 * warps run out of step. out[g] = sum over the rounds of
 * (next + 1) * (r + 1). */
KERNEL(warp_rounds, KJIT_HOST_USES_BARRIER, "*i64,i32,i32") {
  int64_t *out = ARG(int64_t *, 0);
  int32_t base = ARG(int32_t, 1), step = ARG(int32_t, 2), r;
  uint32_t t = tid(thread), next = warp_next(thread);
  int32_t rounds = base + (int32_t)(t / 32) * step;
  int64_t acc = 0;
  for (r = 0; r < rounds; ++r) {
    shared_ints[t] = (int64_t)(t + 1) * (r + 1);
    warp_barrier(thread);
    acc += shared_ints[next];
    warp_barrier(thread);
  }
  out[global_id(thread)] = acc;
}

/* `rounds` rounds of: warp w does w + 1 exchanges with the next lane as in
 * warp_rounds (so warps reach the workgroup barrier at different times,
 * some still between warp barriers while others wait at it), publishes
 * (t + 1) * (r + 1), and after a workgroup barrier adds 1000 times the
 * value of thread (t + 32) % n, of the next warp. */
KERNEL(warp_mixed, KJIT_HOST_USES_BARRIER, "*i64,i32") {
  int64_t *out = ARG(int64_t *, 0);
  int32_t rounds = ARG(int32_t, 1), r;
  uint32_t t = tid(thread), n = thread->block_dim[0];
  uint32_t next = warp_next(thread), j;
  int64_t acc = 0;
  for (r = 0; r < rounds; ++r) {
    for (j = 0; j <= t / 32; ++j) {
      shared_ints[t] = (int64_t)(t + 1) * (r * 64 + j + 1);
      warp_barrier(thread);
      acc += shared_ints[next];
      warp_barrier(thread);
    }
    shared_ints[t] = (int64_t)(t + 1) * (r + 1);
    barrier(thread);
    acc += 1000 * shared_ints[(t + 32) % n];
    barrier(thread);
  }
  out[global_id(thread)] = acc;
}

/* Every thread writes 1, passes a warp barrier and writes 2, except in warp
 * `warp`, whose lanes from `cut` on do something else first: return
 * (how 0), wait at the workgroup barrier (how 1) or fail an assert
 * (how 2). */
KERNEL(warp_divergent, KJIT_HOST_USES_BARRIER, "*i32,i32,i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  int32_t warp = ARG(int32_t, 1), cut = ARG(int32_t, 2), how = ARG(int32_t, 3);
  uint32_t t = tid(thread);
  out[global_id(thread)] = 1;
  if ((int32_t)(t / 32) == warp && (int32_t)(t % 32) >= cut) {
    if (how == 0)
      return;
    if (how == 1)
      barrier(thread);
    else
      fail(thread, "lane past the cut");
  }
  warp_barrier(thread);
  out[global_id(thread)] = 2;
}

/* Calls a warp barrier although its flags say it has no barrier. */
KERNEL(warp_lying, 0, "*i32") {
  int32_t *out = ARG(int32_t *, 0);
  warp_barrier(thread);
  out[global_id(thread)] = 1;
}

/* Writes the bytes each scalar argument's storage holds, zero-extended to
 * 64 bits, so the test sees exactly what the backend passed. */
KERNEL(scalars, 0, "*u64,i1,fp16,bf16,i64,fp32,fp64,i8,u32,u16") {
  uint64_t *out = ARG(uint64_t *, 0);
  uint32_t f32;
  uint64_t f64;
  if (global_id(thread) != 0)
    return;
  out[0] = ARG(uint8_t, 1);
  out[1] = ARG(uint16_t, 2);
  out[2] = ARG(uint16_t, 3);
  out[3] = (uint64_t)ARG(int64_t, 4);
  memcpy(&f32, args[5], 4);
  out[4] = f32;
  memcpy(&f64, args[6], 8);
  out[5] = f64;
  out[6] = ARG(uint8_t, 7);
  out[7] = ARG(uint32_t, 8);
  out[8] = ARG(uint16_t, 9);
}

/* Odd threads round downward, even ones to nearest; each divides after a
 * barrier, so each fiber must keep its own MXCSR across switches. */
KERNEL(fpround, KJIT_HOST_USES_BARRIER, "*u32") {
  uint32_t *out = ARG(uint32_t *, 0);
  volatile float two = 2.0f, three = 3.0f;
  /* volatile: the division must happen before the mode is restored. */
  volatile float q;
  int old = fegetround();
  fesetround(tid(thread) % 2 ? FE_DOWNWARD : FE_TONEAREST);
  barrier(thread);
  barrier(thread);
  q = two / three;
  fesetround(old);
  {
    float result = q;
    memcpy(&out[global_id(thread)], &result, 4);
  }
}

/* No signature: the backend cannot check count or types, and passes what
 * it is given. Writes 1 through its first argument. */
EXPORT const uint32_t kjit_host_flags_nosig = 0;
EXPORT void kjit_host_entry_nosig(kjit_host_thread *thread, void *const *args) {
  ARG(int32_t *, 0)[global_id(thread)] = 1;
}

/* Has an entry but no flags symbol. */
EXPORT void kjit_host_entry_noflags(kjit_host_thread *thread,
                                    void *const *args) {
  (void)thread;
  (void)args;
}

/*===----------------------------------------------------------------------===*\
|* Faults (faults.test and the fault tests): kernels that break the machine   *|
\*===----------------------------------------------------------------------===*/

/* Thread `who` of program 0 computes a / b, every other writes 1: with
 * b = 0 (or a = INT_MIN, b = -1) the division traps (SIGFPE). volatile:
 * the compiler must emit the idiv. */
KERNEL(divide, 0, "*i32,i32,i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  volatile int32_t a = ARG(int32_t, 1), b = ARG(int32_t, 2);
  uint32_t g = global_id(thread);
  out[g] = (int32_t)g == ARG(int32_t, 3) ? a / b : 1;
}

/* The same with barriers, so in fibers. */
KERNEL(divide_fibers, KJIT_HOST_USES_BARRIER, "*i32,i32,i32,i32") {
  int32_t *out = ARG(int32_t *, 0);
  volatile int32_t a = ARG(int32_t, 1), b = ARG(int32_t, 2);
  uint32_t g = global_id(thread);
  barrier(thread);
  out[g] = (int32_t)g == ARG(int32_t, 3) ? a / b : 1;
  barrier(thread);
}

/* Thread `who` stores through the address it is given (unmapped: 8). */
KERNEL(poke, 0, "*i32,u64,i32") {
  int32_t *out = ARG(int32_t *, 0);
  uint32_t g = global_id(thread);
  if ((int32_t)g == ARG(int32_t, 2))
    *(volatile int32_t *)(uintptr_t)ARG(uint64_t, 1) = 1;
  out[g] = 1;
}

/* Recursion `depth` deep, each frame with a buffer the optimizer cannot
 * drop: overflows any stack when deep enough. */
__attribute__((noinline)) static int32_t down(int32_t depth) {
  volatile char frame[256];
  frame[0] = (char)depth;
  if (depth <= 0)
    return frame[0];
  return down(depth - 1) + frame[0];
}

KERNEL(recurse, 0, "*i32,i32") {
  ARG(int32_t *, 0)[global_id(thread)] = down(ARG(int32_t, 1));
}

KERNEL(recurse_fibers, KJIT_HOST_USES_BARRIER, "*i32,i32") {
  barrier(thread);
  ARG(int32_t *, 0)[global_id(thread)] = down(ARG(int32_t, 1));
}

/* Thread 0 of program 0 spins for ever (while stop stays 0); the others
 * write 1. */
KERNEL(spin, 0, "*i32,i32") {
  volatile int32_t stop = ARG(int32_t, 1);
  uint32_t g = global_id(thread);
  if (g == 0)
    while (!stop)
      ;
  ARG(int32_t *, 0)[g] = 1;
}

KERNEL(spin_fibers, KJIT_HOST_USES_BARRIER, "*i32,i32") {
  volatile int32_t stop = ARG(int32_t, 1);
  uint32_t g = global_id(thread);
  barrier(thread);
  if (g == 0)
    while (!stop)
      ;
  ARG(int32_t *, 0)[g] = 1;
}

/* Spins in the runtime's print: cancelled when a print returns. */
KERNEL(spin_print, 0, "i32") {
  static const char prefix[] = "spin";
  volatile int32_t stop = ARG(int32_t, 0);
  if (global_id(thread) == 0)
    while (!stop)
      thread->runtime->print(thread, prefix, 0, NULL, 0);
}
