/*===- RuntimeTable.c - the runtime table compiled kernels call ---*- C -*-===*\
|*                                                                            *|
|* kjit_host_runtime (HostKernel.h): the calls a host kernel makes back into  *|
|* the backend. barrier waits for the program's other SIMT threads and        *|
|* warp_barrier for those of its warp (fiber mode, Fiber.c), print writes one *|
|* line per call, and assert_fail and bounds_fail record a device failure and *|
|* end the calling thread. Each call marks itself as runtime code, so that a  *|
|* fault in it is not taken for the kernel's and a cancellation waits for it  *|
|* (Scheduler.c).                                                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* sigjmp_buf in Scheduler.h: POSIX, not C99. */
#define _GNU_SOURCE 1

#include "Scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Suspends the calling fiber at a barrier of kind `state` (the workgroup
 * barrier or a warp barrier) until the scheduler (Fiber.c) releases it. In
 * loop mode the object promised no barrier, so its threads run one after
 * another and this one cannot wait for the rest: the thread fails. */
static void wait_at(kjit_host_thread *thread, fiber_state state,
                    const char *what) {
  host_simt *simt = host_simt_of(thread);
  host_worker *w = simt->worker;
  if (simt == &w->loop_simt) {
    host_runtime_enter(w);
    host_record_failure(w->launch, w->program, thread->thread_id[0],
                        KJIT_STATUS_FAILED_PRECONDITION,
                        "kernel %s reached %s in program (%u,%u,%u), thread "
                        "(%u,0,0), but kjit_host_flags_%s lacks "
                        "KJIT_HOST_USES_BARRIER",
                        w->launch->kernel->name, what, thread->program_id[0],
                        thread->program_id[1], thread->program_id[2],
                        thread->thread_id[0], w->launch->kernel->name);
    w->site.in_runtime = 0;
    host_end_thread(simt);
  }
  simt->state = state;
  host_switch_onward(simt);
}

static void rt_barrier(kjit_host_thread *thread) {
  wait_at(thread, FIBER_WAITING, "a barrier");
  /* Resumed: every thread of the program has reached the barrier. */
}

static void rt_warp_barrier(kjit_host_thread *thread) {
  wait_at(thread, FIBER_WARP_WAITING, "a warp barrier");
  /* Resumed: every thread of this thread's warp has reached a warp
   * barrier. The warp's fibers run on this OS thread, one after another,
   * so their memory accesses are ordered already. */
}

static void rt_assert_fail(kjit_host_thread *thread, const char *message,
                           uint64_t message_len) {
  host_simt *simt = host_simt_of(thread);
  host_worker *w = simt->worker;
  host_runtime_enter(w);
  host_record_failure(
      w->launch, w->program, thread->thread_id[0], KJIT_STATUS_ABORTED,
      "device assert failed in kernel %s, program (%u,%u,%u), "
      "thread (%u,0,0): %.*s",
      w->launch->kernel->name, thread->program_id[0], thread->program_id[1],
      thread->program_id[2], thread->thread_id[0],
      message ? (int)(message_len > 4096 ? 4096 : message_len) : 0,
      message ? message : "");
  w->site.in_runtime = 0;
  host_end_thread(simt);
}

static void rt_bounds_fail(kjit_host_thread *thread, const char *message,
                           uint64_t message_len, int64_t offset, int64_t bytes,
                           const kjit_host_extent *extent) {
  host_simt *simt = host_simt_of(thread);
  host_worker *w = simt->worker;
  host_runtime_enter(w);
  host_record_failure(
      w->launch, w->program, thread->thread_id[0], KJIT_STATUS_ABORTED,
      "device assert failed in kernel %s, program (%u,%u,%u), "
      "thread (%u,0,0): %.*s: bytes [%lld, %lld) from the pointer are outside "
      "its buffer, bytes [%lld, %lld)",
      w->launch->kernel->name, thread->program_id[0], thread->program_id[1],
      thread->program_id[2], thread->thread_id[0],
      message ? (int)(message_len > 4096 ? 4096 : message_len) : 0,
      message ? message : "", (long long)offset, (long long)(offset + bytes),
      extent ? (long long)extent->begin : 0,
      extent ? (long long)extent->end : 0);
  w->site.in_runtime = 0;
  host_end_thread(simt);
}

/* A growable line buffer that starts on the stack. */
typedef struct line_buffer {
  char *data;
  size_t used, cap;
  int heap;
} line_buffer;

static void line_append(line_buffer *b, const char *text, size_t len) {
  if (b->used + len > b->cap) {
    size_t cap = 2 * (b->used + len);
    char *grown = malloc(cap);
    if (!grown)
      return; /* drop the tail rather than fail a print */
    memcpy(grown, b->data, b->used);
    if (b->heap)
      free(b->data);
    b->data = grown;
    b->cap = cap;
    b->heap = 1;
  }
  memcpy(b->data + b->used, text, len);
  b->used += len;
}

static void rt_print(kjit_host_thread *thread, const char *prefix,
                     uint64_t prefix_len, const kjit_host_print_arg *args,
                     uint64_t num_args) {
  char stack[512], value[128];
  line_buffer b = {stack, 0, sizeof stack, 0};
  uint64_t i;
  int n;
  size_t off = 0;
  host_worker *w = host_simt_of(thread)->worker;
  host_runtime_enter(w);
  n = snprintf(value, sizeof value, "pid (%u, %u, %u) tid (%u, 0, 0) ",
               thread->program_id[0], thread->program_id[1],
               thread->program_id[2], thread->thread_id[0]);
  line_append(&b, value, (size_t)n);
  if (prefix)
    line_append(&b, prefix, (size_t)prefix_len);
  for (i = 0; i < num_args; ++i) {
    const kjit_host_print_arg *a = &args[i];
    double d;
    /* Values are separated by a space, and from the prefix unless it ends
     * in one (Triton's prefixes usually end in ": "). */
    int space = b.used > 0 && b.data[b.used - 1] != ' ';
    switch (a->kind) {
    case KJIT_HOST_PRINT_SIGNED:
      n = snprintf(value, sizeof value, "%s%lld", space ? " " : "",
                   (long long)a->bits);
      break;
    case KJIT_HOST_PRINT_UNSIGNED:
      n = snprintf(value, sizeof value, "%s%llu", space ? " " : "",
                   (unsigned long long)a->bits);
      break;
    case KJIT_HOST_PRINT_FLOAT:
      memcpy(&d, &a->bits, sizeof d);
      n = snprintf(value, sizeof value, "%s%g", space ? " " : "", d);
      break;
    case KJIT_HOST_PRINT_POINTER:
      n = snprintf(value, sizeof value, "%s0x%llx", space ? " " : "",
                   (unsigned long long)a->bits);
      break;
    default:
      n = snprintf(value, sizeof value, "%s<kind %u>", space ? " " : "",
                   a->kind);
      break;
    }
    if (n > 0)
      line_append(&b, value,
                  (size_t)n < sizeof value ? (size_t)n : sizeof value - 1);
  }
  line_append(&b, "\n", 1);
  /* One write per line: lines of different threads never interleave. A
   * pipe may still split lines over PIPE_BUF; then write the rest. */
  while (off < b.used) {
    ssize_t w = write(STDOUT_FILENO, b.data + off, b.used - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  if (b.heap)
    free(b.data);
  host_runtime_leave(w);
}

const kjit_host_runtime host_runtime_table = {
    rt_barrier, rt_print, rt_assert_fail, rt_bounds_fail, rt_warp_barrier};
