/*===- Fiber.c - fibers: the context switch, stacks and phases ----*- C -*-===*\
|*                                                                            *|
|* A kernel with barriers runs one fiber per SIMT thread: a program's fibers  *|
|* run in turn, each until it waits at a barrier, returns or fails, and hand  *|
|* on to the next, so a barrier costs two user-space switches per thread      *|
|* instead of a futex round trip per thread. Here are the x86-64 context      *|
|* switch (assembly), the fiber stacks with their guard pages, and the loop   *|
|* that runs a program pass by pass, releases the workgroup barrier and the   *|
|* warps' warp barriers, and finds barrier divergence.                        *|
|* docs/HostBackend.md has the rationale.                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* mmap: POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "Scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*===----------------------------------------------------------------------===*\
|* The context switch                                                         *|
\*===----------------------------------------------------------------------===*/

/* What host_switch leaves on the stack of the context it suspends, lowest
 * address first; its saved stack pointer points at the start. Only the
 * SysV callee-saved state needs saving: the switch is an ordinary call, so
 * the compiler already treats every other register as clobbered. The MXCSR
 * and x87 control words are callee-saved too (rounding mode, exception
 * masks), which kernel code is allowed to change. */
typedef struct switch_frame {
  uint32_t mxcsr;
  uint16_t x87_cw;
  uint16_t pad;
  uint64_t r15, r14, r13, r12, rbx, rbp;
  uint64_t ret; /* where the suspended context resumes */
} switch_frame;

/* C99 has no static_assert: a negative array size fails the build. */
typedef char switch_frame_is_64_bytes[sizeof(switch_frame) == 64 ? 1 : -1];

/* host_switch (Scheduler.h) saves the current context's frame on its
 * stack, stores its stack pointer to *save_sp and resumes the context whose
 * stack pointer is next_sp. */
/* First code a fresh fiber runs (reached by host_switch's ret): calls
 * r13(r12) with an ABI-aligned stack. The callee never returns. */
void host_fiber_start(void);

/* Pushes in the reverse order of switch_frame's fields so that the frame
 * reads as the struct; the pops mirror them. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl host_switch\n"
        ".hidden host_switch\n"
        ".type host_switch,@function\n"
        "host_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  leaq -8(%rsp), %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  leaq 8(%rsp), %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size host_switch, .-host_switch\n"
        ".p2align 4\n"
        ".globl host_fiber_start\n"
        ".hidden host_fiber_start\n"
        ".type host_fiber_start,@function\n"
        "host_fiber_start:\n"
        /* rsp is 16-byte aligned here (see fiber_reset), as a call needs. */
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n"
        ".size host_fiber_start, .-host_fiber_start\n");

/*===----------------------------------------------------------------------===*\
|* Fiber scheduling                                                           *|
\*===----------------------------------------------------------------------===*/

/* Suspends the current fiber and resumes the next one of this pass, or
 * the scheduler when it is the last. Switching fiber to fiber costs one
 * switch per thread and pass instead of two through the scheduler. */
void host_switch_onward(host_simt *simt) {
  host_worker *w = simt->worker;
  uint32_t next = simt->position + 1;
  host_simt *to = next < w->num_run ? w->run[next] : NULL;
#ifdef HOST_ASAN
  /* A fiber that will never run again hands its fake stack back; one that
   * waits at a barrier keeps it until it is resumed, however many passes
   * leave it out. */
  __sanitizer_start_switch_fiber(
      simt->state == FIBER_WAITING || simt->state == FIBER_WARP_WAITING
          ? &simt->fake_stack
          : NULL,
      to ? to->stack_top - host_pool.config.stack_bytes : w->thread_stack,
      to ? host_pool.config.stack_bytes : w->thread_stack_size);
#endif
  w->current = to;
  host_switch(&simt->sp, to ? to->sp : w->scheduler_sp);
#ifdef HOST_ASAN
  __sanitizer_finish_switch_fiber(simt->fake_stack, NULL, NULL);
#endif
}

/* The body of every fiber: one SIMT thread of the current program. */
static void fiber_main(host_simt *simt) {
  host_worker *w = simt->worker;
#ifdef HOST_ASAN
  __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
  w->launch->kernel->entry(&simt->thread, w->launch->args);
  simt->state = FIBER_DONE;
  host_switch_onward(simt);
  /* Unreachable: nothing resumes a finished fiber. */
  abort();
}

/* Prepares a fiber to start at fiber_main on an empty stack. */
static void fiber_reset(host_simt *simt, uint32_t mxcsr, uint16_t x87_cw) {
  /* The frame sits so that after host_switch pops it (rsp = frame + 64),
   * rsp is 16-byte aligned, which host_fiber_start's call needs. */
  switch_frame *frame = (switch_frame *)(simt->stack_top - 64);
  memset(frame, 0, sizeof *frame);
  frame->mxcsr = mxcsr;
  frame->x87_cw = x87_cw;
  frame->r12 = (uint64_t)(uintptr_t)simt;
  frame->r13 = (uint64_t)(uintptr_t)fiber_main;
  frame->ret = (uint64_t)(uintptr_t)host_fiber_start;
  simt->sp = frame;
  simt->state = FIBER_RUNNING;
}

/* Makes room for `threads` fibers: host_simt records and one mapping of
 * stacks, each with an inaccessible guard page below it so that a stack
 * overflow faults instead of corrupting a neighbour. Kept for later
 * programs; replaced only when a launch needs more threads. */
kjit_status *host_fibers_reserve(host_worker *w, uint32_t threads) {
  size_t stack = host_pool.config.stack_bytes, slot = stack + host_pool.page;
  size_t bytes;
  char *base;
  uint32_t i;
  host_simt *fibers;
  host_simt **run;
  if (threads <= w->capacity)
    return NULL;
  bytes = slot * threads;
  base = mmap(NULL, bytes, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: cannot map %u fiber stacks of %zu KiB: %s",
                      threads, stack / 1024, strerror(errno));
  for (i = 0; i < threads; ++i)
    if (mprotect(base + (size_t)i * slot + host_pool.page, stack,
                 PROT_READ | PROT_WRITE) != 0) {
      int err = errno;
      munmap(base, bytes);
      return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                        "host backend: cannot protect fiber stacks: %s",
                        strerror(err));
    }
  fibers = calloc(threads, sizeof *fibers);
  run = calloc(threads, sizeof *run);
  if (!fibers || !run) {
    free(fibers);
    free(run);
    munmap(base, bytes);
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory for %u fibers", threads);
  }
  if (w->stacks)
    munmap(w->stacks, w->stacks_bytes);
  free(w->fibers);
  free(w->run);
  w->stacks = base;
  w->stacks_bytes = bytes;
  w->fibers = fibers;
  w->run = run;
  w->capacity = threads;
  for (i = 0; i < threads; ++i) {
    fibers[i].worker = w;
    fibers[i].stack_top = base + (size_t)(i + 1) * slot;
  }
  return NULL;
}

void host_fibers_free(host_worker *w) {
  if (w->stacks)
    munmap(w->stacks, w->stacks_bytes);
  free(w->fibers);
  free(w->run);
}

/* Writes thread numbers as ranges ("0-63, 70"), at most a few of them. */
static void format_threads(char *out, size_t size, host_simt **list,
                           uint32_t count) {
  uint32_t i = 0, ranges = 0;
  size_t used = 0;
  out[0] = '\0';
  while (i < count && used + 1 < size) {
    uint32_t first = list[i]->thread.thread_id[0], last = first;
    int n;
    while (i + 1 < count && list[i + 1]->thread.thread_id[0] == last + 1)
      last = list[++i]->thread.thread_id[0];
    ++i;
    if (++ranges > 8) {
      snprintf(out + used, size - used, ", ...");
      return;
    }
    n = first == last
            ? snprintf(out + used, size - used, "%s%u", used ? ", " : "", first)
            : snprintf(out + used, size - used, "%s%u-%u", used ? ", " : "",
                       first, last);
    if (n < 0)
      return;
    used += (size_t)n;
  }
}

/* One past the last thread of the warp that starts at thread `first`: a
 * partial last warp ends at the program's last thread. */
static uint32_t warp_end(uint32_t first, uint32_t threads) {
  return threads - first > HOST_WARP_SIZE ? first + HOST_WARP_SIZE : threads;
}

/* The failure of a program whose fibers can no longer run although some
 * wait at a barrier that the others will never reach: the first warp with
 * threads at a warp barrier (its other threads returned or wait at the
 * workgroup barrier), or, when no thread waits at a warp barrier, the
 * threads that returned while the others wait at the workgroup barrier. */
static void record_divergence(host_worker *w, uint32_t threads) {
  host_launch *launch = w->launch;
  const uint32_t *pid = w->loop_simt.thread.program_id;
  char list[160], others[160];
  uint32_t i, k = 0;
  for (i = 0; i < threads && w->fibers[i].state != FIBER_WARP_WAITING; ++i)
    ;
  if (i < threads) {
    uint32_t first = i - i % HOST_WARP_SIZE, end = warp_end(first, threads);
    uint32_t n_warp = 0, n_done = 0, n_group = 0;
    host_simt *at_warp[HOST_WARP_SIZE], *done[HOST_WARP_SIZE],
        *at_group[HOST_WARP_SIZE];
    for (i = first; i < end; ++i) {
      host_simt *f = &w->fibers[i];
      if (f->state == FIBER_WARP_WAITING)
        at_warp[n_warp++] = f;
      else if (f->state == FIBER_DONE)
        done[n_done++] = f;
      else if (f->state == FIBER_WAITING)
        at_group[n_group++] = f;
    }
    format_threads(others, sizeof others, at_warp, n_warp);
    if (n_done) {
      format_threads(list, sizeof list, done, n_done);
      host_record_failure(
          launch, w->program, done[0]->thread.thread_id[0], KJIT_STATUS_ABORTED,
          "warp barrier divergence in kernel %s, program (%u,%u,%u), warp "
          "%u: thread%s %s returned while thread%s %s wait%s at a warp "
          "barrier",
          launch->kernel->name, pid[0], pid[1], pid[2], first / HOST_WARP_SIZE,
          n_done == 1 ? "" : "s", list, n_warp == 1 ? "" : "s", others,
          n_warp == 1 ? "s" : "");
    } else {
      format_threads(list, sizeof list, at_group, n_group);
      host_record_failure(
          launch, w->program, at_warp[0]->thread.thread_id[0],
          KJIT_STATUS_ABORTED,
          "warp barrier divergence in kernel %s, program (%u,%u,%u), warp "
          "%u: thread%s %s wait%s at a warp barrier while thread%s %s "
          "wait%s at a workgroup barrier",
          launch->kernel->name, pid[0], pid[1], pid[2], first / HOST_WARP_SIZE,
          n_warp == 1 ? "" : "s", others, n_warp == 1 ? "s" : "",
          n_group == 1 ? "" : "s", list, n_group == 1 ? "s" : "");
    }
    return;
  }
  /* No fiber is to run, so the run list is free to hold the threads that
   * returned. */
  for (i = 0; i < threads; ++i)
    if (w->fibers[i].state == FIBER_DONE)
      w->run[k++] = &w->fibers[i];
  format_threads(list, sizeof list, w->run, k);
  host_record_failure(
      launch, w->program, w->run[0]->thread.thread_id[0], KJIT_STATUS_ABORTED,
      "barrier divergence in kernel %s, program (%u,%u,%u): "
      "thread%s %s returned while others wait at a barrier",
      launch->kernel->name, pid[0], pid[1], pid[2], k == 1 ? "" : "s", list);
}

/* Runs one program as fibers, pass by pass. A pass runs the fibers of the
 * run list, each until it waits at a barrier, returns or fails. Then every
 * warp of the pass whose threads all wait at a warp barrier is released,
 * and those warps alone make the next pass, while the other fibers stay
 * suspended. When no warp is released, the fibers that wait can only wait
 * for the workgroup barrier: it is released when every thread waits at it
 * (all of them make the next pass); if some returned instead, or a warp
 * waits at a warp barrier that some of its threads will never reach, the
 * program diverged. A pass, and so every run list, holds whole warps: the
 * first pass and a released workgroup barrier hold every thread, a
 * released warp barrier whole warps. A warp outside the pass has not
 * moved, and was not complete at a warp barrier after the pass before (or
 * it would be in this one), so looking at the pass's warps finds every
 * warp to release, at a cost of the pass's threads. */
void host_run_program_fibers(host_worker *w, uint32_t threads) {
  host_launch *launch = w->launch;
  uint32_t i, mxcsr;
  /* Threads that wait at the workgroup barrier, returned or failed, counted
   * over the passes since the workgroup barrier was last released. */
  uint32_t at_group = 0, done = 0, failed = 0;
  uint16_t x87_cw;
  /* Fibers start with the worker's floating-point control state. */
  __asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_cw));
  for (i = 0; i < threads; ++i) {
    host_simt *f = &w->fibers[i];
    f->thread = w->loop_simt.thread;
    f->thread.thread_id[0] = i;
    f->thread.backend = f;
    fiber_reset(f, mxcsr, x87_cw);
    f->position = i;
    w->run[i] = f;
  }
  w->num_run = threads;

  for (;;) {
    uint32_t n = w->num_run, k = 0;
    /* One pass: each fiber of the run list runs until it waits at a
     * barrier, returns or fails, handing on to the next; the last hands
     * back to us. */
    w->current = w->run[0];
#ifdef HOST_ASAN
    __sanitizer_start_switch_fiber(&w->scheduler_fake_stack,
                                   w->run[0]->stack_top -
                                       host_pool.config.stack_bytes,
                                   host_pool.config.stack_bytes);
#endif
    w->site.in_kernel = 1;
    host_switch(&w->scheduler_sp, w->run[0]->sp);
    w->site.in_kernel = 0;
#ifdef HOST_ASAN
    __sanitizer_finish_switch_fiber(w->scheduler_fake_stack, NULL, NULL);
#endif
    w->current = NULL;
    if (w->faulted) {
      /* A fault (or the watchdog) ended a fiber: the program stops. */
      host_record_fault(w, w->faulted);
      w->faulted = NULL;
      return;
    }
    if (__atomic_load_n(&launch->aborted, __ATOMIC_RELAXED))
      return; /* another program faulted: stop at this barrier */
    /* Count the pass warp by warp; a warp all of whose threads wait at a
     * warp barrier moves to the front of the run list (k never passes the
     * warp's first entry, so the copy overwrites nothing unread). */
    for (i = 0; i < n;) {
      uint32_t start = i, first = w->run[i]->thread.thread_id[0];
      uint32_t end, at_warp = 0;
      first -= first % HOST_WARP_SIZE;
      end = warp_end(first, threads);
      for (; i < n && w->run[i]->thread.thread_id[0] < end; ++i) {
        fiber_state s = w->run[i]->state;
        at_warp += s == FIBER_WARP_WAITING;
        at_group += s == FIBER_WAITING;
        done += s == FIBER_DONE;
        failed += s == FIBER_FAILED;
      }
      if (at_warp == end - first)
        for (; start < i; ++start) {
          host_simt *f = w->run[start];
          f->state = FIBER_RUNNING;
          f->position = k;
          w->run[k++] = f;
        }
    }
    w->num_run = k;
    if (k)
      continue; /* the released warps run on; the others stay suspended */
    if (done == threads || failed) {
      /* Every thread has returned (or failed): the program is complete.
       * Or failed threads will never reach the barrier the others wait at;
       * the failure is recorded, so stop the program here. */
      return;
    }
    if (at_group < threads) {
      record_divergence(w, threads);
      return;
    }
    /* Everyone waits: release the barrier and run the next phase. After a
     * pass of every thread the run list still holds every fiber in thread
     * order (no warp was released, so nothing moved). */
    for (i = 0; i < threads; ++i) {
      host_simt *f = &w->fibers[i];
      f->state = FIBER_RUNNING;
      if (n != threads) {
        f->position = i;
        w->run[i] = f;
      }
    }
    w->num_run = threads;
    at_group = 0;
  }
}
