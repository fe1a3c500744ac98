/*===- Memory.c - device memory of the host backend ---------------*- C -*-===*\
|*                                                                            *|
|* The ABI 1.2 device-memory entries (allocate, deallocate, copy) for the     *|
|* host, whose "device" is the process's own memory: tools and tests drive    *|
|* every backend through the same calls, and on the host they cost a malloc   *|
|* and a memcpy.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* posix_memalign is POSIX, not C99. */
#define _POSIX_C_SOURCE 200112L

#include "Internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The ABI promises 256-byte alignment (what cudaMalloc gives), which also
 * satisfies every divisibility the specializer tests for. */
enum { HOST_ALLOCATION_ALIGNMENT = 256 };

/* The live allocations, sorted by address: debug-mode bounds checks learn
 * a pointer argument's extent here (every tensor of kjit-run is one).
 * Allocations are few and long-lived, so a sorted array under a lock is
 * enough; lookups take log n. */
typedef struct host_range {
  uintptr_t begin, end;
} host_range;

static struct {
  pthread_mutex_t lock;
  host_range *ranges;
  size_t count, capacity;
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The index of the first range that ends after `address`. */
static size_t range_lower_bound(uintptr_t address) {
  size_t lo = 0, hi = live.count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (live.ranges[mid].end <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int remember(uintptr_t begin, uintptr_t end) {
  size_t at;
  pthread_mutex_lock(&live.lock);
  if (live.count == live.capacity) {
    size_t capacity = live.capacity ? 2 * live.capacity : 64;
    host_range *grown = realloc(live.ranges, capacity * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&live.lock);
      return 0;
    }
    live.ranges = grown;
    live.capacity = capacity;
  }
  at = range_lower_bound(begin);
  memmove(live.ranges + at + 1, live.ranges + at,
          (live.count - at) * sizeof *live.ranges);
  live.ranges[at].begin = begin;
  live.ranges[at].end = end;
  ++live.count;
  pthread_mutex_unlock(&live.lock);
  return 1;
}

static void forget(uintptr_t begin) {
  size_t at;
  pthread_mutex_lock(&live.lock);
  at = range_lower_bound(begin);
  if (at < live.count && live.ranges[at].begin == begin) {
    memmove(live.ranges + at, live.ranges + at + 1,
            (live.count - at - 1) * sizeof *live.ranges);
    --live.count;
  }
  if (live.count == 0) {
    free(live.ranges);
    live.ranges = NULL;
    live.capacity = 0;
  }
  pthread_mutex_unlock(&live.lock);
}

int host_find_allocation(uintptr_t address, uintptr_t *begin, uintptr_t *end) {
  size_t at;
  int found = 0;
  pthread_mutex_lock(&live.lock);
  at = range_lower_bound(address);
  if (at < live.count && live.ranges[at].begin <= address) {
    *begin = live.ranges[at].begin;
    *end = live.ranges[at].end;
    found = 1;
  }
  pthread_mutex_unlock(&live.lock);
  return found;
}

kjit_status *host_allocate(void *self, kjit_backend_allocate_args *args) {
  kjit_status *status;
  void *memory = NULL;
  (void)self;
  if (!KJIT_HAS_FIELD(args, kjit_backend_allocate_args, address))
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: allocate arguments too small");
  if ((status = host_check_device(args->device, "allocate")))
    return status;
  if (args->size == 0 || args->size > (uint64_t)SIZE_MAX)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: cannot allocate %llu bytes",
                      (unsigned long long)args->size);
  if (posix_memalign(&memory, HOST_ALLOCATION_ALIGNMENT, (size_t)args->size))
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory allocating %llu bytes",
                      (unsigned long long)args->size);
  if (!remember((uintptr_t)memory, (uintptr_t)memory + (size_t)args->size)) {
    free(memory);
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory allocating %llu bytes",
                      (unsigned long long)args->size);
  }
  args->address = (uint64_t)(uintptr_t)memory;
  return NULL;
}

kjit_status *host_deallocate(void *self, kjit_backend_deallocate_args *args) {
  kjit_status *status;
  (void)self;
  if (!KJIT_HAS_FIELD(args, kjit_backend_deallocate_args, address))
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: deallocate arguments too small");
  if ((status = host_check_device(args->device, "deallocate")))
    return status;
  forget((uintptr_t)args->address);
  free((void *)(uintptr_t)args->address);
  return NULL;
}

kjit_status *host_copy(void *self, kjit_backend_copy_args *args) {
  kjit_status *status;
  void *device_side;
  (void)self;
  if (!KJIT_HAS_FIELD(args, kjit_backend_copy_args, stream))
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: copy arguments too small");
  if ((status = host_check_device(args->device, "copy")))
    return status;
  if (args->size == 0)
    return NULL;
  if (!args->host || !args->address)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: copy of %llu bytes with a null %s "
                      "pointer",
                      (unsigned long long)args->size,
                      args->host ? "device" : "host");
  device_side = (void *)(uintptr_t)args->address;
  switch (args->direction) {
  case KJIT_COPY_HOST_TO_DEVICE:
    memcpy(device_side, args->host, (size_t)args->size);
    return NULL;
  case KJIT_COPY_DEVICE_TO_HOST:
    memcpy(args->host, device_side, (size_t)args->size);
    return NULL;
  default:
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "host backend: copy direction %u is not "
                      "KJIT_COPY_HOST_TO_DEVICE (1) or "
                      "KJIT_COPY_DEVICE_TO_HOST (2)",
                      (unsigned)args->direction);
  }
}
