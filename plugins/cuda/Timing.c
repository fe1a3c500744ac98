/*===- Timing.c - device times of timed launches ------------------*- C -*-===*\
|*                                                                            *|
|* KJIT_LAUNCH_TIMED: the launch records an event on its stream before and    *|
|* after the kernel and returns; a thread per device polls the end events in  *|
|* launch order, maps the two event times onto CLOCK_MONOTONIC and reports    *|
|* them through report_device_time. The launch never waits for its kernel.    *|
|*                                                                            *|
|* Events are plain timing events: a blocking-sync event would make the GPU   *|
|* raise an interrupt for every record, which costs the launch path           *|
|* microseconds; polling with cuEventQuery, backing off while the GPU is      *|
|* behind, costs it nothing and drains a backlog at once.                     *|
|*                                                                            *|
|* The clock: event times are only comparable with each other, as float      *|
|* milliseconds (cuEventElapsedTime). The timer thread records a calibration  *|
|* event on a private non-blocking stream, which the GPU reaches at once,     *|
|* and waits for it; of three tries it keeps the one with the shortest wait   *|
|* and takes the host time at its end, since the GPU stamps the event after  *|
|* the record was submitted, which is most of the wait. A launch's times are  *|
|* offsets from it. A float holds an offset of a second to well under a       *|
|* microsecond, so the calibration is renewed when it is older than that.     *|
|* docs/CudaBackend.md, "Device times".                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Launches timed at once per device; beyond it a launch goes untimed (a
 * backlog that large means the GPU is far behind the host, and every
 * pending launch holds two events). */
enum { CUDA_TIMED_MAX_IN_FLIGHT = 4096 };
static const uint64_t calibration_max_age_ns = 1000000000u;
enum { CUDA_CALIBRATION_TRIES = 3 };

struct cuda_timed {
  cuda_timed *next;
  struct cuda_timer *timer;
  const cuda_instance *self;
  CUevent start, end;
  CUstream stream;
  const char *kernel; /* interned */
  uint64_t correlation_id;
};

typedef struct cuda_timer {
  cuda_device *dev;
  pthread_mutex_t lock;
  pthread_cond_t wake; /* a launch was queued, or stopping */
  pthread_cond_t idle; /* nothing in flight any more */
  pthread_t thread;
  int stopping;
  /* Queued launches in launch order, and records to reuse. */
  cuda_timed *head, *tail, *free_list;
  /* Begun and not yet reported. */
  size_t in_flight;
  /* Owned by the thread after start-up. */
  CUstream stream;
  /* One event per try: an event keeps only its last record's time, so the
   * try that is kept must be read from its own event. `calibration` is
   * the kept one (one of `tries`). */
  CUevent tries[CUDA_CALIBRATION_TRIES];
  CUevent calibration;
  uint64_t calibration_ns, calibrated_at_ns;
  int warned; /* atomic: the one warning of this device was logged */
} cuda_timer;

/* A device whose timer could not start: its launches go untimed. */
static cuda_timer timer_failed;

int cuda_timing_available(void) {
  return cu.cuEventCreate && cu.cuEventDestroy && cu.cuEventRecord &&
         cu.cuEventSynchronize && cu.cuEventQuery && cu.cuEventElapsedTime &&
         cu.cuStreamCreate && cu.cuStreamDestroy;
}

static void warn_once(const cuda_instance *self, int *flag, const char *what,
                      CUresult r) {
  char text[512], result[256];
  int len;
  if (__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED) || !self->host->log)
    return;
  len = snprintf(text, sizeof text, "cuda backend: launches go untimed: %s%s%s",
                 what, r ? ": " : "",
                 r ? cuda_result_text(r, result, sizeof result) : "");
  if (len < 0)
    return;
  if ((size_t)len >= sizeof text)
    len = (int)sizeof text - 1;
  self->host->log(self->ctx, KJIT_LOG_WARNING, text, (size_t)len);
}

static void report(const cuda_timed *t, int32_t code, uint64_t start_ns,
                   uint64_t end_ns) {
  kjit_device_time time;
  const kjit_host_api *host = t->self->host;
  if (!KJIT_HAS_FIELD(host, kjit_host_api, report_device_time) ||
      !host->report_device_time)
    return;
  memset(&time, 0, sizeof time);
  time.struct_size = sizeof time;
  time.correlation_id = t->correlation_id;
  time.kernel_name = t->kernel;
  time.kernel_name_len = t->kernel ? strlen(t->kernel) : 0;
  time.device = t->timer->dev->index;
  time.launch_status = code;
  time.stream = (uint64_t)(uintptr_t)t->stream;
  time.start_ns = start_ns;
  time.end_ns = end_ns < start_ns ? start_ns : end_ns;
  host->report_device_time(t->self->ctx, &time);
}

/* Hands a record back; the last one in flight wakes cuda_timing_drain. */
static void release(cuda_timer *timer, cuda_timed *t) {
  pthread_mutex_lock(&timer->lock);
  t->next = timer->free_list;
  timer->free_list = t;
  if (--timer->in_flight == 0)
    pthread_cond_broadcast(&timer->idle);
  pthread_mutex_unlock(&timer->lock);
}

static void calibrate(cuda_timer *timer) {
  uint64_t best_window = UINT64_MAX, best_ns = 0;
  int attempt, best = -1;
  for (attempt = 0; attempt < CUDA_CALIBRATION_TRIES; ++attempt) {
    CUevent event = timer->tries[attempt];
    uint64_t before, after;
    /* Never the event the current calibration reads: a failed try must
     * leave it as it is. */
    if (event == timer->calibration)
      continue;
    before = cuda_now_ns();
    if (cu.cuEventRecord(event, timer->stream) != CUDA_SUCCESS ||
        cu.cuEventSynchronize(event) != CUDA_SUCCESS)
      break;
    after = cuda_now_ns();
    if (after - before < best_window) {
      best_window = after - before;
      best_ns = after;
      best = attempt;
    }
  }
  if (best < 0)
    return; /* keep the previous one; with none, times stay unreported */
  timer->calibration = timer->tries[best];
  timer->calibration_ns = best_ns;
  timer->calibrated_at_ns = best_ns;
}

static int device_time(cuda_timer *timer, CUevent event, uint64_t *ns) {
  float ms;
  double offset;
  if (cu.cuEventElapsedTime(&ms, timer->calibration, event) != CUDA_SUCCESS)
    return 0;
  offset = (double)ms * 1e6;
  if (offset < 0 && (uint64_t)(-offset) > timer->calibration_ns)
    return 0;
  *ns = (uint64_t)((double)timer->calibration_ns + offset);
  return 1;
}

/* Reports a launch whose end event has completed (r: what cuEventQuery
 * said, success or the error that ended the stream's work). */
static void measure(cuda_timer *timer, cuda_timed *t, CUresult r) {
  uint64_t start_ns, end_ns, now = cuda_now_ns();
  if (r != CUDA_SUCCESS) {
    /* The kernel (or one before it) faulted: the context is sticky, and the
     * next call on the device says so; here the launch's time is when its
     * failure was seen. */
    report(t, cuda_status_code(r), now, now);
    return;
  }
  if (!timer->calibrated_at_ns ||
      now - timer->calibrated_at_ns > calibration_max_age_ns)
    calibrate(timer);
  if (timer->calibrated_at_ns && device_time(timer, t->start, &start_ns) &&
      device_time(timer, t->end, &end_ns))
    report(t, KJIT_STATUS_OK, start_ns, end_ns);
  else
    report(t, KJIT_STATUS_OK, now, now);
}

/* Polling back-off while the oldest launch is still running: short at
 * first (a kernel of microseconds), up to a millisecond (a long kernel or a
 * deep queue). */
enum { POLL_MIN_NS = 20000, POLL_MAX_NS = 1000000 };

static void *timer_main(void *arg) {
  cuda_timer *timer = arg;
  long pause_ns = POLL_MIN_NS;
  cu.cuCtxSetCurrent(timer->dev->ctx);
  pthread_mutex_lock(&timer->lock);
  for (;;) {
    cuda_timed *t;
    CUresult r;
    while (!timer->head && !timer->stopping)
      pthread_cond_wait(&timer->wake, &timer->lock);
    if (!timer->head)
      break; /* stopping, and every queued launch was reported */
    t = timer->head;
    pthread_mutex_unlock(&timer->lock);
    /* Only this thread removes from the queue, so the head stays. */
    r = cu.cuEventQuery(t->end);
    if (r == CUDA_ERROR_NOT_READY) {
      struct timespec pause = {0, pause_ns};
      nanosleep(&pause, NULL);
      if (pause_ns < POLL_MAX_NS)
        pause_ns *= 2;
      pthread_mutex_lock(&timer->lock);
      continue;
    }
    pause_ns = POLL_MIN_NS;
    pthread_mutex_lock(&timer->lock);
    if (!(timer->head = t->next))
      timer->tail = NULL;
    pthread_mutex_unlock(&timer->lock);
    measure(timer, t, r);
    release(timer, t);
    pthread_mutex_lock(&timer->lock);
  }
  pthread_mutex_unlock(&timer->lock);
  return NULL;
}

/* The device's timer, started on its first timed launch (the caller's
 * thread has the device's context current). */
static cuda_timer *get_timer(const cuda_instance *self, cuda_device *dev) {
  cuda_timer *timer = __atomic_load_n(&dev->timer, __ATOMIC_ACQUIRE);
  static int warned;
  CUresult r = CUDA_SUCCESS;
  const char *what = NULL;
  if (timer)
    return timer == &timer_failed ? NULL : timer;
  pthread_mutex_lock(&dev->lock);
  if (!(timer = dev->timer)) {
    timer = calloc(1, sizeof *timer);
    if (!timer)
      what = "out of memory";
    else if ((r = cu.cuStreamCreate(&timer->stream, CU_STREAM_NON_BLOCKING)))
      what = "cuStreamCreate failed";
    else if ((r = cu.cuEventCreate(&timer->tries[0], 0)) ||
             (r = cu.cuEventCreate(&timer->tries[1], 0)) ||
             (r = cu.cuEventCreate(&timer->tries[2], 0)))
      what = "cuEventCreate failed";
    if (!what) {
      timer->dev = dev;
      pthread_mutex_init(&timer->lock, NULL);
      pthread_cond_init(&timer->wake, NULL);
      pthread_cond_init(&timer->idle, NULL);
      if (pthread_create(&timer->thread, NULL, timer_main, timer) != 0)
        what = "cannot start the timer thread";
    }
    if (what) {
      int i;
      for (i = 0; timer && i < CUDA_CALIBRATION_TRIES; ++i)
        if (timer->tries[i])
          cu.cuEventDestroy(timer->tries[i]);
      if (timer && timer->stream)
        cu.cuStreamDestroy(timer->stream);
      free(timer);
      timer = &timer_failed;
      warn_once(self, &warned, what, r);
    }
    __atomic_store_n(&dev->timer, timer, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&dev->lock);
  return timer == &timer_failed ? NULL : timer;
}

cuda_timed *cuda_timed_begin(const cuda_instance *self, cuda_device *dev,
                             CUstream stream) {
  cuda_timer *timer;
  cuda_timed *t;
  CUresult r;
  if (!cuda_timing_available() || !(timer = get_timer(self, dev)))
    return NULL;
  pthread_mutex_lock(&timer->lock);
  if (timer->in_flight >= CUDA_TIMED_MAX_IN_FLIGHT) {
    pthread_mutex_unlock(&timer->lock);
    return NULL; /* this launch goes untimed; later ones are timed again */
  }
  if ((t = timer->free_list))
    timer->free_list = t->next;
  ++timer->in_flight;
  pthread_mutex_unlock(&timer->lock);
  if (!t) {
    /* A new record: its events are created once and reused. */
    if (!(t = calloc(1, sizeof *t))) {
      warn_once(self, &timer->warned, "out of memory", CUDA_SUCCESS);
      goto untimed;
    }
    t->timer = timer;
    if ((r = cu.cuEventCreate(&t->start, 0)) ||
        (r = cu.cuEventCreate(&t->end, 0))) {
      warn_once(self, &timer->warned, "cuEventCreate failed", r);
      if (t->start)
        cu.cuEventDestroy(t->start);
      free(t);
      goto untimed;
    }
  }
  t->self = self;
  t->stream = stream;
  if ((r = cu.cuEventRecord(t->start, stream)) != CUDA_SUCCESS) {
    /* A sticky error is the launch's to report; others are timing's. */
    if (!cuda_is_sticky(r))
      warn_once(self, &timer->warned, "cuEventRecord failed", r);
    release(timer, t);
    return NULL;
  }
  return t;
untimed:
  pthread_mutex_lock(&timer->lock);
  if (--timer->in_flight == 0)
    pthread_cond_broadcast(&timer->idle);
  pthread_mutex_unlock(&timer->lock);
  return NULL;
}

void cuda_timed_end(cuda_timed *t, const char *kernel, uint64_t correlation_id,
                    CUresult launched) {
  cuda_timer *timer = t->timer;
  CUresult r = launched;
  t->kernel = kernel;
  t->correlation_id = correlation_id;
  t->next = NULL;
  if (r == CUDA_SUCCESS &&
      (r = cu.cuEventRecord(t->end, t->stream)) == CUDA_SUCCESS) {
    pthread_mutex_lock(&timer->lock);
    if (timer->tail)
      timer->tail->next = t;
    else
      timer->head = t;
    timer->tail = t;
    pthread_cond_signal(&timer->wake);
    pthread_mutex_unlock(&timer->lock);
    return;
  }
  {
    /* Nothing ran, or its end cannot be observed (a fault made the
     * context sticky): the launch's time is now, with the error's code. */
    uint64_t now = cuda_now_ns();
    report(t, cuda_status_code(r), now, now);
  }
  release(timer, t);
}

void cuda_timing_drain(const cuda_instance *self) {
  int32_t i;
  (void)self; /* every device's launches, whoever timed them */
  for (i = 0; i < cuda_num_devices; ++i) {
    cuda_timer *timer =
        __atomic_load_n(&cuda_devices[i].timer, __ATOMIC_ACQUIRE);
    if (!timer || timer == &timer_failed)
      continue;
    pthread_mutex_lock(&timer->lock);
    while (timer->in_flight)
      pthread_cond_wait(&timer->idle, &timer->lock);
    pthread_mutex_unlock(&timer->lock);
  }
}

void cuda_timing_shutdown(void) {
  int32_t i;
  int k;
  for (i = 0; i < cuda_num_devices; ++i) {
    cuda_timer *timer = cuda_devices[i].timer;
    cuda_timed *t;
    if (!timer || timer == &timer_failed)
      continue;
    cu.cuCtxSetCurrent(cuda_devices[i].ctx); /* the events' context */
    pthread_mutex_lock(&timer->lock);
    timer->stopping = 1;
    pthread_cond_signal(&timer->wake);
    pthread_mutex_unlock(&timer->lock);
    pthread_join(timer->thread, NULL);
    while ((t = timer->free_list)) {
      timer->free_list = t->next;
      cu.cuEventDestroy(t->start);
      cu.cuEventDestroy(t->end);
      free(t);
    }
    for (k = 0; k < CUDA_CALIBRATION_TRIES; ++k)
      cu.cuEventDestroy(timer->tries[k]);
    cu.cuStreamDestroy(timer->stream);
    pthread_cond_destroy(&timer->wake);
    pthread_cond_destroy(&timer->idle);
    pthread_mutex_destroy(&timer->lock);
    free(timer);
    cuda_devices[i].timer = NULL;
  }
}
