/*===- Workers.c - the worker pool: threads, settings, fork -------*- C -*-===*\
|*                                                                            *|
|* The pool of OS threads that run launches: its settings from the            *|
|* environment, the helper threads (started by the first launch, so that      *|
|* loading the plugin costs no thread), the hand-off of a launch to them with *|
|* the launching thread working too, the watchdog's cancel, and the fork      *|
|* handlers that keep a forked child's pool whole. Helpers block every signal *|
|* but the fault and cancel ones. docs/HostBackend.md has the rationale.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* sched_getaffinity: GNU, not C99. */
#define _GNU_SOURCE 1

#include "Scheduler.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

host_pool_state host_pool = {.launch_lock = PTHREAD_MUTEX_INITIALIZER,
                             .lock = PTHREAD_MUTEX_INITIALIZER,
                             .wake = PTHREAD_COND_INITIALIZER,
                             .done = PTHREAD_COND_INITIALIZER};

/* Unblocks the signals the fault handlers and the watchdog need in a
 * worker: a synchronous fault while blocked kills the process. */
static void unblock_fault_signals(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  sigaddset(&set, SIGBUS);
  sigaddset(&set, SIGFPE);
  sigaddset(&set, SIGILL);
  if (host_cancel_signal())
    sigaddset(&set, host_cancel_signal());
  pthread_sigmask(SIG_UNBLOCK, &set, old);
}

/* The watchdog's cancel (Faults.c): no program starts any more, and every
 * worker still running one of the launch is signalled; the handler ends
 * the SIMT thread when it finds it in the kernel's code. */
static void cancel_launch(host_launch *launch) {
  unsigned i;
  __atomic_store_n(&launch->cancelled, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&launch->aborted, 1, __ATOMIC_RELAXED);
  for (i = 0; i < host_pool.num_workers; ++i)
    if (__atomic_load_n(&host_pool.workers[i].launch, __ATOMIC_ACQUIRE) ==
        launch)
      pthread_kill(host_pool.workers[i].thread, host_cancel_signal());
}

/* A helper thread: waits for launches and runs programs of each. */
static void *worker_main(void *arg) {
  host_worker *w = arg;
  uint64_t seen = 0;
  kjit_status *status = host_altstack_use(&w->altstack);
  /* Without a signal stack a fault still ends the launch, unless it is a
   * stack overflow. */
  if (status)
    host_api->status_destroy(status);
  unblock_fault_signals(NULL);
  pthread_mutex_lock(&host_pool.lock);
  for (;;) {
    host_launch *launch;
    while (!host_pool.stopping && host_pool.generation == seen)
      pthread_cond_wait(&host_pool.wake, &host_pool.lock);
    if (host_pool.stopping)
      break;
    seen = host_pool.generation;
    /* Only as many helpers as the launch has programs for take part; a
     * late waker of a finished launch finds it fully claimed. */
    if (host_pool.claimed >= host_pool.wanted)
      continue;
    ++host_pool.claimed;
    launch = host_pool.current;
    __atomic_store_n(&w->launch, launch, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&host_pool.lock);
    host_run_programs(w, launch);
    pthread_mutex_lock(&host_pool.lock);
    if (++host_pool.finished == host_pool.wanted)
      pthread_cond_signal(&host_pool.done);
  }
  pthread_mutex_unlock(&host_pool.lock);
  host_altstack_free(&w->altstack);
  return NULL;
}

/* Counts the CPUs this process may run on (affinity and cpusets count,
 * the machine's total does not). */
static unsigned available_cpus(void) {
  cpu_set_t set;
  long n;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return (unsigned)CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

void host_config_from_environment(host_config *config) {
  const char *workers = getenv("KJIT_HOST_WORKERS");
  const char *stack = getenv("KJIT_HOST_STACK_KIB");
  const char *timeout = getenv("KJIT_LAUNCH_TIMEOUT");
  char *end;
  unsigned long v;
  config->workers = available_cpus();
  if (workers && *workers) {
    errno = 0;
    v = strtoul(workers, &end, 10);
    if (!errno && !*end && v >= 1 && v <= 4096)
      config->workers = (unsigned)v;
  }
  config->stack_bytes = 64 * 1024;
  if (stack && *stack) {
    errno = 0;
    v = strtoul(stack, &end, 10);
    if (!errno && !*end && v >= 4 && v <= 1024 * 1024)
      config->stack_bytes = (size_t)v * 1024;
  }
  /* Seconds, fractions allowed; 0 or empty: no limit. A value that is not
   * a number fails every launch rather than run without the limit asked
   * for. */
  config->timeout_ns = 0;
  config->bad_timeout = NULL;
  if (timeout && *timeout) {
    double seconds;
    errno = 0;
    seconds = strtod(timeout, &end);
    if (errno || *end || end == timeout || !(seconds >= 0) || seconds > 1e6)
      config->bad_timeout = timeout;
    else
      config->timeout_ns = (uint64_t)(seconds * 1e9);
  }
}

/* Frees the workers' stacks, fibers and the launching slot's signal stack
 * (no thread runs on them: at shutdown they were joined, after a fork they
 * do not exist); the next launch starts a new pool. */
static void free_workers(void) {
  unsigned i;
  for (i = 0; host_pool.workers && i < host_pool.config.workers; ++i)
    host_fibers_free(&host_pool.workers[i]);
  if (host_pool.workers)
    host_altstack_free(&host_pool.workers[0].altstack);
  free(host_pool.workers);
  host_pool.workers = NULL;
  host_pool.num_workers = 0;
  host_pool.generation = 0;
}

/* fork: only the forking thread lives on in the child, so the helpers and
 * the watchdog are gone while the pool still counts them (a launch of
 * several programs would wait for them forever). The prepare handler takes
 * the pool's locks, so that no launch is under way and the pool's state is
 * whole at the fork; the child frees what the dead threads owned and starts
 * anew on its next launch. glibc unregisters the handlers when the plugin
 * is unloaded (they are registered with the plugin's DSO handle). */
static void pool_prepare_fork(void) {
  pthread_mutex_lock(&host_pool.launch_lock);
  pthread_mutex_lock(&host_pool.lock);
  host_watchdog_prepare_fork();
}

static void pool_parent_after_fork(void) {
  host_watchdog_parent_after_fork();
  pthread_mutex_unlock(&host_pool.lock);
  pthread_mutex_unlock(&host_pool.launch_lock);
}

static void pool_child_after_fork(void) {
  host_watchdog_child_after_fork();
  free_workers();
  host_pool.current = NULL;
  host_pool.wanted = host_pool.claimed = host_pool.finished = 0;
  host_pool.stopping = 0;
  /* The child's copies are held by this thread; condition variables may
   * have had waiters that no longer exist. */
  pthread_cond_init(&host_pool.wake, NULL);
  pthread_cond_init(&host_pool.done, NULL);
  pthread_mutex_unlock(&host_pool.lock);
  pthread_mutex_unlock(&host_pool.launch_lock);
}

static void register_fork_handlers(void) {
  pthread_atfork(pool_prepare_fork, pool_parent_after_fork,
                 pool_child_after_fork);
}

void host_pool_init(const host_config *config) {
  static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
  long page = sysconf(_SC_PAGESIZE);
  pthread_once(&fork_once, register_fork_handlers);
  host_pool.config = *config;
  host_pool.page = page > 0 ? (size_t)page : 4096;
  /* Stacks are whole pages so that guard pages stay page-aligned. */
  host_pool.config.stack_bytes =
      (host_pool.config.stack_bytes + host_pool.page - 1) / host_pool.page *
      host_pool.page;
  host_pool.stopping = 0;
}

/* Starts the helper threads on first use, so that loading the plugin (or
 * a process that never launches on the host) costs no threads. */
static kjit_status *start_pool(void) {
  unsigned i, n = host_pool.config.workers;
  sigset_t all, old;
  kjit_status *status;
  host_pool.workers = calloc(n, sizeof *host_pool.workers);
  if (!host_pool.workers)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory for %u workers", n);
  /* Before the helpers start: they unblock the signals installed here. */
  if ((status = host_faults_install(host_pool.config.timeout_ns != 0))) {
    if (host_api->status_code(status) != KJIT_STATUS_UNAVAILABLE) {
      free(host_pool.workers);
      host_pool.workers = NULL;
      return status;
    }
    /* No signal to cancel with: launches run, without the limit, and the
     * first one says why. */
    host_pool.config.timeout_ns = 0;
    host_pool.cancel_error = status;
  }
  host_pool.num_workers = 1; /* slot 0: whichever thread launches */
  /* Helpers block every signal: signals stay with the application's own
   * threads, whose handlers expect them. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (i = 1; i < n; ++i) {
    host_worker *w = &host_pool.workers[i];
    w->index = i;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
      break; /* fewer workers is slower, not wrong */
    host_pool.num_workers = i + 1;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return NULL;
}

kjit_status *host_pool_run(host_launch *launch) {
  kjit_status *status = NULL;
  unsigned helpers;
  host_worker *self;
  sigset_t old_mask;
  int timed;
  pthread_mutex_lock(&host_pool.launch_lock);
  if (host_pool.config.bad_timeout) {
    status = host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': KJIT_LAUNCH_TIMEOUT='%s' is "
                        "not a number of seconds (such as 2 or 0.5; 0 for no "
                        "limit)",
                        launch->kernel->name, host_pool.config.bad_timeout);
    goto out;
  }
  if (!host_pool.num_workers && (status = start_pool()) != NULL)
    goto out;
  if (host_pool.cancel_error) {
    status = host_pool.cancel_error;
    host_pool.cancel_error = NULL;
    goto out;
  }
  /* Slot 0 is whichever thread launches: it needs a signal stack for a
   * stack overflow, and the fault signals unblocked, while it runs
   * programs. */
  self = &host_pool.workers[0];
  self->thread = pthread_self();
  if ((status = host_altstack_use(&self->altstack)) != NULL)
    goto out;
  timed = host_pool.config.timeout_ns != 0;
  unblock_fault_signals(&old_mask);
  if (timed && (status = host_watchdog_arm(launch, host_pool.config.timeout_ns,
                                           cancel_launch)) != NULL) {
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    host_altstack_restore(&self->altstack);
    goto out;
  }
  helpers = host_pool.num_workers - 1;
  if (launch->num_programs - 1 < helpers)
    helpers = (unsigned)(launch->num_programs - 1);
  if (helpers) {
    pthread_mutex_lock(&host_pool.lock);
    host_pool.current = launch;
    host_pool.wanted = helpers;
    host_pool.claimed = host_pool.finished = 0;
    ++host_pool.generation;
    pthread_cond_broadcast(&host_pool.wake);
    pthread_mutex_unlock(&host_pool.lock);
  }
  /* The launching thread works too: a one-program launch wakes nobody. */
  __atomic_store_n(&self->launch, launch, __ATOMIC_RELEASE);
  host_run_programs(self, launch);
  if (helpers) {
    pthread_mutex_lock(&host_pool.lock);
    while (host_pool.finished < host_pool.wanted)
      pthread_cond_wait(&host_pool.done, &host_pool.lock);
    host_pool.current = NULL;
    pthread_mutex_unlock(&host_pool.lock);
  }
  if (timed) {
    host_watchdog_disarm();
    /* A cancel that found no worker in the kernel's code (they were all
     * between programs) still fails the launch. */
    if (launch->cancelled && !launch->error_code)
      host_record_failure(
          launch, launch->num_programs, 0, KJIT_STATUS_DEADLINE_EXCEEDED,
          "launch of kernel %s cancelled: it ran past its time "
          "limit of %g s (KJIT_LAUNCH_TIMEOUT)",
          launch->kernel->name, (double)host_pool.config.timeout_ns / 1e9);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  host_altstack_restore(&self->altstack);
out:
  pthread_mutex_unlock(&host_pool.launch_lock);
  return status;
}

void host_pool_shutdown(void) {
  unsigned i;
  pthread_mutex_lock(&host_pool.launch_lock);
  pthread_mutex_lock(&host_pool.lock);
  host_pool.stopping = 1;
  pthread_cond_broadcast(&host_pool.wake);
  pthread_mutex_unlock(&host_pool.lock);
  for (i = 1; i < host_pool.num_workers; ++i)
    pthread_join(host_pool.workers[i].thread, NULL);
  host_watchdog_shutdown();
  free_workers();
  host_faults_uninstall();
  if (host_pool.cancel_error)
    host_api->status_destroy(host_pool.cancel_error);
  host_pool.cancel_error = NULL;
  pthread_mutex_unlock(&host_pool.launch_lock);
}
