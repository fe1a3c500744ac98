/*===- Faults.c - kernel faults, signal stacks, the watchdog ------*- C -*-===*\
|*                                                                            *|
|* A kernel that divides by zero, touches unmapped memory or overflows its    *|
|* stack raises SIGFPE/SIGSEGV/SIGBUS/SIGILL in the worker that runs it. The  *|
|* handlers here, on an alternate signal stack (a stack overflow leaves no    *|
|* room on the faulting one), hand such a fault to the scheduler, which ends  *|
|* the launch with an error instead of the process. Every other fault goes to *|
|* whatever handled the signal before. The watchdog cancels launches that run *|
|* past KJIT_LAUNCH_TIMEOUT by signalling their workers. docs/HostBackend.md  *|
|* ("Faults") has the rationale and what is and is not recoverable.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* sigaltstack, SA_ONSTACK, ucontext registers, pthread_kill: not C99. */
#define _GNU_SOURCE 1

#include "Internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The synchronous signals a kernel's own instructions can raise. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
enum { NUM_FAULT_SIGNALS = sizeof fault_signals / sizeof fault_signals[0] };

static struct sigaction previous[NUM_FAULT_SIGNALS];
static struct sigaction previous_cancel;
static int installed;
static int cancel_signal; /* 0: no timeout, so no cancel signal */

/* The site of the calling thread while it runs a launch's programs. A
 * handler may not call into the dynamic TLS machinery (it may malloc), so
 * the variable is in the static TLS block: initial-exec. */
static __thread host_fault_site *current_site
    __attribute__((tls_model("initial-exec")));

void host_fault_enter(host_fault_site *site) { current_site = site; }
void host_fault_leave(void) { current_site = NULL; }

int host_cancel_signal(void) { return cancel_signal; }

/* Passes a fault that is not a kernel's to the handler that was there
 * before, as if this one had never been installed. For the default action
 * the disposition is restored and the handler returns: the instruction
 * faults again and the process dies as it would have without kjit. */
static void chain(int index, int signo, siginfo_t *info, void *context) {
  struct sigaction *old = &previous[index];
  if (old->sa_flags & SA_SIGINFO) {
    old->sa_sigaction(signo, info, context);
    return;
  }
  if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(signo);
    return;
  }
  /* SIG_IGN cannot ignore a synchronous fault (it would loop): default. */
  signal(signo, SIG_DFL);
  if (info->si_code <= 0) /* sent by kill: send it again, now fatal */
    raise(signo);
}

static void on_fault(int signo, siginfo_t *info, void *context) {
  host_fault_site *site = current_site;
  const ucontext_t *uc = context;
  int index;
  for (index = 0; index < NUM_FAULT_SIGNALS; ++index)
    if (fault_signals[index] == signo)
      break;
  /* Only a fault raised by an instruction (si_code > 0, not kill) while
   * kernel code runs, outside the backend's own runtime calls (which may
   * hold libc locks), is the kernel's. */
  if (index == NUM_FAULT_SIGNALS || !site || !site->in_kernel ||
      site->in_runtime || site->in_handler || info->si_code <= 0) {
    if (index < NUM_FAULT_SIGNALS)
      chain(index, signo, info, context);
    return;
  }
  site->in_handler = 1;
  site->fault.signo = signo;
  site->fault.code = info->si_code;
  site->fault.addr = (uintptr_t)info->si_addr;
  site->fault.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  site->fault.sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  site->recover(site); /* does not return */
}

/* The watchdog's signal: only a thread interrupted inside the kernel's own
 * code is ended there (never in the middle of a context switch, libc or
 * the backend); any other is left to the next signal, sent a little later,
 * or finishes its program and claims no other. */
static void on_cancel(int signo, siginfo_t *info, void *context) {
  host_fault_site *site = current_site;
  const ucontext_t *uc = context;
  uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  (void)signo;
  (void)info;
  if (!site || !site->in_kernel || site->in_handler || !site->cancelled ||
      !*site->cancelled)
    return;
  if (site->in_runtime) {
    site->cancel_pending = 1; /* acted on when the runtime call returns */
    return;
  }
  if (pc < site->text_begin || pc >= site->text_end)
    return;
  site->in_handler = 1;
  site->fault.signo = cancel_signal;
  site->fault.code = 0;
  site->fault.addr = 0;
  site->fault.pc = pc;
  site->fault.sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  site->recover(site);
}

/* A realtime signal nobody handles, from the top (applications and
 * libraries usually take theirs from SIGRTMIN up). 0 when none is free. */
static int pick_cancel_signal(void) {
  int s;
  for (s = SIGRTMAX; s >= SIGRTMIN; --s) {
    struct sigaction old;
    if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
      return s;
  }
  return 0;
}

kjit_status *host_faults_install(int want_cancel) {
  struct sigaction sa;
  int i;
  if (installed)
    return NULL;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  /* SA_NODEFER: the handler leaves by siglongjmp or a context switch
   * without restoring the signal mask, so the signal must not be added to
   * it, or the worker's next fault would kill the process. */
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sa.sa_sigaction = on_fault;
  for (i = 0; i < NUM_FAULT_SIGNALS; ++i)
    if (sigaction(fault_signals[i], &sa, &previous[i]) != 0) {
      int err = errno;
      while (i-- > 0)
        sigaction(fault_signals[i], &previous[i], NULL);
      return host_error(KJIT_STATUS_INTERNAL,
                        "host backend: cannot install fault handlers: %s",
                        strerror(err));
    }
  installed = 1;
  if (want_cancel && (cancel_signal = pick_cancel_signal()) != 0) {
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sa.sa_sigaction = on_cancel;
    if (sigaction(cancel_signal, &sa, &previous_cancel) != 0)
      cancel_signal = 0;
  }
  if (want_cancel && !cancel_signal)
    return host_error(KJIT_STATUS_UNAVAILABLE,
                      "host backend: KJIT_LAUNCH_TIMEOUT is set, but every "
                      "realtime signal (SIGRTMIN to SIGRTMAX) is in use, so "
                      "none is left to cancel launches with");
  return NULL;
}

/* Puts the previous handlers back, where ours is still the one installed
 * (someone who installed theirs on top keeps it). */
void host_faults_uninstall(void) {
  int i;
  if (!installed)
    return;
  for (i = 0; i < NUM_FAULT_SIGNALS; ++i) {
    struct sigaction now;
    if (sigaction(fault_signals[i], NULL, &now) == 0 &&
        (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_fault)
      sigaction(fault_signals[i], &previous[i], NULL);
  }
  if (cancel_signal) {
    struct sigaction now;
    if (sigaction(cancel_signal, NULL, &now) == 0 &&
        (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_cancel)
      sigaction(cancel_signal, &previous_cancel, NULL);
    cancel_signal = 0;
  }
  installed = 0;
}

/*===----------------------------------------------------------------------===*\
|* Alternate signal stacks                                                    *|
\*===----------------------------------------------------------------------===*/

/* Big enough for the handler (a few hundred bytes) plus the kernel's signal
 * frame with the full AVX-512 state (about 3 KiB), with room to spare. */
enum { ALTSTACK_BYTES = 64 * 1024 };

kjit_status *host_altstack_use(host_altstack *s) {
  stack_t mine, old;
  s->pushed = 0;
  if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE) &&
      old.ss_size >= ALTSTACK_BYTES / 4)
    return NULL; /* the thread has one (the application's, ASan's): use it */
  if (!s->memory) {
    void *p = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                        "host backend: cannot map a signal stack: %s",
                        strerror(errno));
    s->memory = p;
  }
  mine.ss_sp = s->memory;
  mine.ss_size = ALTSTACK_BYTES;
  mine.ss_flags = 0;
  if (sigaltstack(&mine, &old) != 0)
    return host_error(KJIT_STATUS_INTERNAL,
                      "host backend: cannot set a signal stack: %s",
                      strerror(errno));
  s->saved_sp = old.ss_sp;
  s->saved_size = old.ss_size;
  s->saved_flags = old.ss_flags;
  s->pushed = 1;
  return NULL;
}

void host_altstack_restore(host_altstack *s) {
  if (s->pushed) {
    stack_t old;
    old.ss_sp = s->saved_sp;
    old.ss_size = s->saved_size;
    old.ss_flags = s->saved_flags & SS_DISABLE;
    sigaltstack(&old, NULL);
  }
  s->pushed = 0;
}

void host_altstack_free(host_altstack *s) {
  host_altstack_restore(s);
  if (s->memory)
    munmap(s->memory, ALTSTACK_BYTES);
  s->memory = NULL;
}

/*===----------------------------------------------------------------------===*\
|* What a fault was                                                           *|
\*===----------------------------------------------------------------------===*/

void host_describe_fault(char *out, size_t size, const host_fault *f,
                         const host_fault_stack *stack) {
  const char *what = NULL;
  unsigned long long addr = (unsigned long long)f->addr;
  switch (f->signo) {
  case SIGFPE:
    what = f->code == FPE_INTDIV   ? "integer division by zero or overflow"
           : f->code == FPE_INTOVF ? "integer overflow"
                                   : "arithmetic exception";
    snprintf(out, size, "SIGFPE (%s)", what);
    return;
  case SIGILL:
    snprintf(out, size,
             "SIGILL (illegal instruction: a trap or unreachable "
             "code was reached)");
    return;
  case SIGBUS:
    snprintf(out, size, "SIGBUS (bus error at address 0x%llx)", addr);
    return;
  case SIGSEGV:
    if (stack && stack->guard_hit) {
      snprintf(out, size,
               "SIGSEGV (stack overflow: the fiber's %zu KiB stack is "
               "exhausted; KJIT_HOST_STACK_KIB sets its size)",
               stack->fiber_stack_bytes / 1024);
      return;
    }
    /* A push, call or stack probe just below the stack pointer. */
    if (f->addr + 65536 >= f->sp && f->addr < f->sp + 4096) {
      snprintf(out, size,
               "SIGSEGV (stack overflow at address 0x%llx: the "
               "worker thread's stack is exhausted)",
               addr);
      return;
    }
    snprintf(out, size, "SIGSEGV (%s at address 0x%llx)",
             f->code == SEGV_ACCERR ? "access to protected memory"
                                    : "access to unmapped memory",
             addr);
    return;
  default:
    snprintf(out, size, "signal %d", f->signo);
  }
}

/*===----------------------------------------------------------------------===*\
|* The watchdog                                                               *|
\*===----------------------------------------------------------------------===*/

/* One thread, started by the first launch with a time limit. Launches take
 * turns on the pool, so it watches at most one at a time. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake; /* CLOCK_MONOTONIC */
  pthread_cond_t idle;
  pthread_t thread;
  int started, stopping;
  host_launch *launch; /* the launch watched, NULL when none */
  uint64_t deadline_ns;
  int firing; /* signalling workers now */
  void (*cancel)(host_launch *);
} dog = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

/* How often a cancelled launch's workers are signalled again, for a worker
 * that was outside the kernel's code when the last signal came. */
enum { RESIGNAL_NS = 20 * 1000 * 1000 };

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *watchdog_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&dog.lock);
  while (!dog.stopping) {
    struct timespec until;
    if (!dog.launch) {
      pthread_cond_wait(&dog.wake, &dog.lock);
      continue;
    }
    if (now_ns() < dog.deadline_ns) {
      until.tv_sec = (time_t)(dog.deadline_ns / 1000000000u);
      until.tv_nsec = (long)(dog.deadline_ns % 1000000000u);
      pthread_cond_timedwait(&dog.wake, &dog.lock, &until);
      continue;
    }
    /* Past the deadline: cancel (again), then look again a little later. */
    dog.firing = 1;
    pthread_mutex_unlock(&dog.lock);
    dog.cancel(dog.launch);
    pthread_mutex_lock(&dog.lock);
    dog.firing = 0;
    pthread_cond_broadcast(&dog.idle);
    dog.deadline_ns = now_ns() + RESIGNAL_NS;
  }
  pthread_mutex_unlock(&dog.lock);
  return NULL;
}

kjit_status *host_watchdog_arm(host_launch *launch, uint64_t timeout_ns,
                               void (*cancel)(host_launch *)) {
  kjit_status *status = NULL;
  pthread_mutex_lock(&dog.lock);
  if (!dog.started) {
    pthread_condattr_t attr;
    sigset_t all, old;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&dog.wake, &attr);
    pthread_condattr_destroy(&attr);
    /* The watchdog takes no signals: they stay with the application. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    dog.stopping = 0;
    if (pthread_create(&dog.thread, NULL, watchdog_main, NULL) == 0)
      dog.started = 1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!dog.started) {
      pthread_cond_destroy(&dog.wake);
      status = host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                          "host backend: cannot start the watchdog thread "
                          "for KJIT_LAUNCH_TIMEOUT");
      goto out;
    }
  }
  dog.cancel = cancel;
  dog.launch = launch;
  dog.deadline_ns = now_ns() + timeout_ns;
  pthread_cond_signal(&dog.wake);
out:
  pthread_mutex_unlock(&dog.lock);
  return status;
}

void host_watchdog_disarm(void) {
  pthread_mutex_lock(&dog.lock);
  dog.launch = NULL;
  /* Once this returns, no signal for the launch is on its way. */
  while (dog.firing)
    pthread_cond_wait(&dog.idle, &dog.lock);
  pthread_cond_signal(&dog.wake);
  pthread_mutex_unlock(&dog.lock);
}

/* fork (Workers.c): the watchdog's lock is held across it; in the
 * child the watchdog thread no longer exists, and the next launch with a
 * time limit starts a new one. */
void host_watchdog_prepare_fork(void) { pthread_mutex_lock(&dog.lock); }

void host_watchdog_parent_after_fork(void) { pthread_mutex_unlock(&dog.lock); }

void host_watchdog_child_after_fork(void) {
  if (dog.started)
    pthread_cond_init(&dog.idle, NULL);
  dog.started = 0;
  dog.stopping = 0;
  dog.launch = NULL;
  dog.firing = 0;
  pthread_mutex_unlock(&dog.lock);
}

void host_watchdog_shutdown(void) {
  pthread_mutex_lock(&dog.lock);
  if (!dog.started) {
    pthread_mutex_unlock(&dog.lock);
    return;
  }
  dog.stopping = 1;
  pthread_cond_signal(&dog.wake);
  pthread_mutex_unlock(&dog.lock);
  pthread_join(dog.thread, NULL);
  pthread_cond_destroy(&dog.wake);
  dog.started = 0;
}
