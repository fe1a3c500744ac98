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

#include <stdlib.h>
#include <string.h>

/* The ABI promises 256-byte alignment (what cudaMalloc gives), which also
 * satisfies every divisibility the specializer tests for. */
enum { HOST_ALLOCATION_ALIGNMENT = 256 };

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
