/*===- DriverLink.c - the driver's JIT linker as a finalizer ------*- C -*-===*\
|*                                                                            *|
|* cuLinkCreate / cuLinkAddData(PTX) / cuLinkComplete assemble PTX with the   *|
|* ptxas built into the driver and hand back the cubin, which the runtime     *|
|* caches like any other. It runs in process with the library that is         *|
|* already loaded for the context: no process to start (ptxas) and no 100 MB  *|
|* library to open (nvJitLink). The cubin depends on the driver's version,    *|
|* which is therefore part of the fingerprint (Toolkit.c).                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINK_LOG_SIZE = 16384 };

/* CUjit_target for "sm_90", "sm_90a" or "sm_100f"; 0 when it is none. */
static int jit_target(const char *arch) {
  char *end = NULL;
  long cc;
  if (strncmp(arch, "sm_", 3) != 0)
    return 0;
  cc = strtol(arch + 3, &end, 10);
  if (cc <= 0 || cc > 0xffff || !end)
    return 0;
  if (end[0] == '\0')
    return (int)cc;
  if (end[1] != '\0')
    return 0;
  if (end[0] == 'a')
    return CU_COMPUTE_ACCELERATED_TARGET_BASE + (int)cc;
  if (end[0] == 'f')
    return CU_COMPUTE_FAMILY_TARGET_BASE + (int)cc;
  return 0;
}

kjit_status *cuda_driver_link(const cuda_instance *self, cuda_device *dev,
                              const char *ptx, size_t ptx_size,
                              const char *arch, const char *kernel,
                              uint8_t **cubin, size_t *cubin_size,
                              char **info_log) {
  CUjit_option options[6] = {CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_TARGET,
                             CU_JIT_INFO_LOG_BUFFER,
                             CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_LOG_VERBOSE};
  void *values[6];
  char *log = NULL, *info = NULL, *text = NULL, what[512], code[64];
  CUlinkState state = NULL;
  kjit_status *status = NULL;
  const char *step = "cuLinkCreate";
  void *linked = NULL;
  size_t linked_size = 0;
  int target = jit_target(arch);
  CUresult r;
  if (!target)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "finalize of kernel '%s': '%s' is not an architecture "
                      "the driver's JIT linker knows",
                      kernel, arch);
  if ((status = cuda_make_current(dev)))
    return status;
  /* The driver reads PTX as a C string. */
  if (!(text = malloc(ptx_size + 1)) || !(log = calloc(1, LINK_LOG_SIZE)) ||
      !(info = calloc(1, LINK_LOG_SIZE))) {
    free(text);
    free(log);
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "finalize of kernel '%s': out of memory", kernel);
  }
  memcpy(text, ptx, ptx_size);
  text[ptx_size] = '\0';
  values[0] = log;
  values[1] = (void *)(uintptr_t)(LINK_LOG_SIZE - 1);
  values[2] = (void *)(uintptr_t)target;
  values[3] = info;
  values[4] = (void *)(uintptr_t)(LINK_LOG_SIZE - 1);
  values[5] = (void *)(uintptr_t)1;
  if ((r = cu.cuLinkCreate(6, options, values, &state)) != CUDA_SUCCESS)
    goto fail;
  step = "cuLinkAddData";
  if ((r = cu.cuLinkAddData(state, CU_JIT_INPUT_PTX, text, ptx_size + 1,
                            "kernel.ptx", 0, NULL, NULL)) != CUDA_SUCCESS)
    goto fail;
  step = "cuLinkComplete";
  if ((r = cu.cuLinkComplete(state, &linked, &linked_size)) != CUDA_SUCCESS)
    goto fail;
  /* The cubin belongs to the link state: copy it out before destroying. */
  if (!(*cubin = malloc(linked_size ? linked_size : 1))) {
    status = cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                        "finalize of kernel '%s': out of memory", kernel);
    goto out;
  }
  memcpy(*cubin, linked, linked_size);
  *cubin_size = linked_size;
  *info_log = info; /* NUL-terminated: calloc'd, one byte never written */
  info = NULL;
  goto out;
fail:
  if (cuda_is_sticky(r)) {
    snprintf(what, sizeof what, "finalize of kernel '%s' for %s: %s failed",
             kernel, arch, step);
    status = cuda_call_error(self, dev, r, step, what);
    goto out;
  }
  {
    size_t n = strnlen(log, LINK_LOG_SIZE - 1);
    while (n && (log[n - 1] == '\n' || log[n - 1] == '\r'))
      --n;
    status = cuda_error(
        cuda_status_code(r),
        "finalize of kernel '%s' for %s: the driver's JIT linker (%s) failed "
        "in %s: %s (%d)%s%.*s",
        kernel, arch, cuda_driver_path(), step,
        cuda_result_name(r, code, sizeof code), (int)r, n ? ":\n" : "", (int)n,
        log);
  }
out:
  if (state)
    cu.cuLinkDestroy(state);
  free(log);
  free(info);
  free(text);
  return status;
}
