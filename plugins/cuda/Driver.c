/*===- Driver.c - the CUDA driver, opened at run time -------------*- C -*-===*\
|*                                                                            *|
|* The plugin links no CUDA library: it opens libcuda.so.1 (KJIT_CUDA_DRIVER  *|
|* names another file, for tests) with dlopen, takes cuGetProcAddress_v2      *|
|* with dlsym, and resolves every other entry point through it for CUDA 13.0, *|
|* which picks each name's current ABI (a plain dlsym("cuMemAlloc") would    *|
|* return the legacy one). Without a driver or a device the plugin still      *|
|* loads: device_count answers 0, and every entry that needs a device says    *|
|* why there is none. Devices, their primary contexts and their sticky        *|
|* errors live here too.                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "Internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cuda_driver_api cu;
cuda_device *cuda_devices;
int32_t cuda_num_devices;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
/* Empty when the driver is usable; else the reason, for every entry. */
static char driver_error[1024];
static int driver_version;
/* The library's real path, once dlopen succeeded (for the fingerprint). */
static char driver_path[PATH_MAX];

/*===----------------------------------------------------------------------===*\
|* Error names                                                                *|
\*===----------------------------------------------------------------------===*/

const char *cuda_result_name(CUresult r, char *buf, size_t size) {
  const char *name = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &name) == CUDA_SUCCESS &&
      name) {
    snprintf(buf, size, "%s", name);
    return buf;
  }
  snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}

const char *cuda_result_text(CUresult r, char *buf, size_t size) {
  const char *text = NULL;
  char name[64];
  cuda_result_name(r, name, sizeof name);
  if (cu.cuGetErrorString && cu.cuGetErrorString(r, &text) == CUDA_SUCCESS &&
      text)
    snprintf(buf, size, "%s (%s)", name, text);
  else
    snprintf(buf, size, "%s", name);
  return buf;
}

int cuda_is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return 1;
  default:
    return 0;
  }
}

int32_t cuda_status_code(CUresult r) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    return KJIT_STATUS_RESOURCE_EXHAUSTED;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return KJIT_STATUS_INVALID_ARGUMENT;
  case CUDA_ERROR_NOT_FOUND:
    return KJIT_STATUS_NOT_FOUND;
  default:
    return cuda_is_sticky(r) ? KJIT_STATUS_ABORTED : KJIT_STATUS_INTERNAL;
  }
}

/*===----------------------------------------------------------------------===*\
|* Loading                                                                    *|
\*===----------------------------------------------------------------------===*/

/* The entry points, by the base name cuGetProcAddress wants. */
static const struct {
  const char *name;
  size_t offset;
  int optional;
} entries[] = {
#define CUDA_ENTRY(n, opt) {#n, offsetof(cuda_driver_api, n), opt}
    CUDA_ENTRY(cuGetErrorName, 0),
    CUDA_ENTRY(cuGetErrorString, 0),
    CUDA_ENTRY(cuDriverGetVersion, 0),
    CUDA_ENTRY(cuInit, 0),
    CUDA_ENTRY(cuDeviceGetCount, 0),
    CUDA_ENTRY(cuDeviceGet, 0),
    CUDA_ENTRY(cuDeviceGetAttribute, 0),
    CUDA_ENTRY(cuDeviceGetUuid, 0),
    CUDA_ENTRY(cuDevicePrimaryCtxRetain, 0),
    CUDA_ENTRY(cuDevicePrimaryCtxRelease, 0),
    CUDA_ENTRY(cuCtxGetCurrent, 0),
    CUDA_ENTRY(cuCtxSetCurrent, 0),
    CUDA_ENTRY(cuModuleLoadData, 0),
    CUDA_ENTRY(cuModuleUnload, 0),
    CUDA_ENTRY(cuModuleGetFunction, 0),
    CUDA_ENTRY(cuFuncGetParamInfo, 1),
    CUDA_ENTRY(cuFuncSetAttribute, 0),
    CUDA_ENTRY(cuLaunchKernel, 0),
    CUDA_ENTRY(cuLaunchKernelEx, 0),
    CUDA_ENTRY(cuPointerGetAttribute, 0),
    CUDA_ENTRY(cuStreamSynchronize, 0),
    CUDA_ENTRY(cuMemAlloc, 0),
    CUDA_ENTRY(cuMemFree, 0),
    CUDA_ENTRY(cuMemcpyHtoDAsync, 0),
    CUDA_ENTRY(cuMemcpyDtoHAsync, 0),
    CUDA_ENTRY(cuEventCreate, 1),
    CUDA_ENTRY(cuEventDestroy, 1),
    CUDA_ENTRY(cuEventRecord, 1),
    CUDA_ENTRY(cuEventSynchronize, 1),
    CUDA_ENTRY(cuEventQuery, 1),
    CUDA_ENTRY(cuEventElapsedTime, 1),
    CUDA_ENTRY(cuStreamCreate, 1),
    CUDA_ENTRY(cuStreamDestroy, 1),
    CUDA_ENTRY(cuLinkCreate, 1),
    CUDA_ENTRY(cuLinkAddData, 1),
    CUDA_ENTRY(cuLinkComplete, 1),
    CUDA_ENTRY(cuLinkDestroy, 1),
#undef CUDA_ENTRY
};

/* The PTX ISA version the compiler should emit for sm_<cc>: the oldest one
 * that knows the architecture, and at least 8.0 (CUDA 12.0). */
static const char *ptx_version_for(int cc) {
  if (cc == 100 || cc == 101 || cc == 120)
    return "86";
  if (cc == 103 || cc == 121)
    return "88";
  if (cc >= 100)
    return "90";
  return "80";
}

static void load_driver(void) {
  const char *path = getenv("KJIT_CUDA_DRIVER");
  cuGetProcAddress_v2_fn gpa;
  void *dl, *sym;
  CUresult r;
  char text[256];
  int count = 0, i;
  size_t e;
  if (!path || !*path)
    path = "libcuda.so.1";
  dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *err = dlerror();
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: %s cannot be opened (%s)", path,
             err ? err : "dlopen failed");
    return;
  }
  {
    struct link_map *map = NULL;
    if (dlinfo(dl, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name ||
        !realpath(map->l_name, driver_path))
      snprintf(driver_path, sizeof driver_path, "%s", path);
  }
  sym = dlsym(dl, "cuGetProcAddress_v2");
  if (!sym) {
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: %s has no symbol cuGetProcAddress_v2 (not a "
             "CUDA driver, or one older than CUDA 12.0)",
             path);
    return; /* never dlclose a driver: it may have started threads */
  }
  /* POSIX guarantees the conversion; memcpy keeps -pedantic quiet. */
  memcpy(&gpa, &sym, sizeof sym);
  for (e = 0; e < sizeof entries / sizeof entries[0]; ++e) {
    void *fn = NULL;
    int found = -1;
    r = gpa(entries[e].name, &fn, CUDA_API_VERSION_USED,
            CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !fn) {
      if (entries[e].optional)
        continue;
      if (cu.cuDriverGetVersion)
        cu.cuDriverGetVersion(&driver_version);
      snprintf(driver_error, sizeof driver_error,
               "no CUDA device: the CUDA driver %s (version %d) has no entry "
               "point %s for CUDA %d (cuGetProcAddress_v2 returned %d, symbol "
               "status %d)",
               path, driver_version, entries[e].name, CUDA_API_VERSION_USED,
               (int)r, found);
      return;
    }
    memcpy((char *)&cu + entries[e].offset, &fn, sizeof fn);
  }
  cu.cuDriverGetVersion(&driver_version);
  if ((r = cu.cuInit(0)) != CUDA_SUCCESS) {
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: cuInit failed: %s",
             cuda_result_text(r, text, sizeof text));
    return;
  }
  if ((r = cu.cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: cuDeviceGetCount failed: %s",
             cuda_result_text(r, text, sizeof text));
    return;
  }
  if (count <= 0) {
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: the CUDA driver (version %d) reports no device",
             driver_version);
    return;
  }
  cuda_devices = calloc((size_t)count, sizeof *cuda_devices);
  if (!cuda_devices) {
    snprintf(driver_error, sizeof driver_error,
             "no CUDA device: out of memory");
    return;
  }
  for (i = 0; i < count; ++i) {
    cuda_device *d = &cuda_devices[i];
    int v = 0;
    CUuuid uuid;
    d->index = i;
    pthread_mutex_init(&d->lock, NULL);
    if ((r = cu.cuDeviceGet(&d->handle, i)) != CUDA_SUCCESS) {
      snprintf(driver_error, sizeof driver_error,
               "no CUDA device: cuDeviceGet(%d) failed: %s", i,
               cuda_result_text(r, text, sizeof text));
      return;
    }
#define CUDA_ATTR(attr, dst)                                                   \
  do {                                                                         \
    v = 0;                                                                     \
    cu.cuDeviceGetAttribute(&v, attr, d->handle);                              \
    (dst) = v;                                                                 \
  } while (0)
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->major);
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->minor);
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->sms);
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d->max_threads);
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              d->max_smem_optin);
    CUDA_ATTR(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, d->cooperative);
#undef CUDA_ATTR
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", d->major, d->minor);
    snprintf(d->ptx, sizeof d->ptx, "%s",
             ptx_version_for(d->major * 10 + d->minor));
    memset(&uuid, 0, sizeof uuid);
    if (cu.cuDeviceGetUuid(&uuid, d->handle) == CUDA_SUCCESS)
      memcpy(d->uuid, uuid.bytes, sizeof d->uuid);
  }
  cuda_num_devices = count;
}

/* Whether the driver is unusable, without making a status. */
static int driver_unusable(void) {
  pthread_once(&driver_once, load_driver);
  return driver_error[0] != 0;
}

kjit_status *cuda_driver_status(void) {
  pthread_once(&driver_once, load_driver);
  if (driver_error[0])
    return cuda_error(KJIT_STATUS_UNAVAILABLE, "%s", driver_error);
  return NULL;
}

int cuda_driver_can_link(void) {
  return !driver_unusable() && cu.cuLinkCreate && cu.cuLinkAddData &&
         cu.cuLinkComplete && cu.cuLinkDestroy;
}

const char *cuda_driver_path(void) {
  pthread_once(&driver_once, load_driver);
  return driver_path;
}

void cuda_driver_identity(char *buf, size_t size) {
  char file[128];
  if (driver_unusable()) {
    snprintf(buf, size, "missing");
    return;
  }
  cuda_file_identity(driver_path, file, sizeof file);
  snprintf(buf, size, "%d:%s", driver_version, file);
}

kjit_status *cuda_get_device(int32_t device, const char *entry,
                             cuda_device **out) {
  kjit_status *status = cuda_driver_status();
  if (status)
    return status;
  if (device < 0 || device >= cuda_num_devices)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: %s for device %d, but the CUDA driver "
                      "reports %d device%s (0 to %d)",
                      entry, (int)device, (int)cuda_num_devices,
                      cuda_num_devices == 1 ? "" : "s",
                      (int)cuda_num_devices - 1);
  *out = &cuda_devices[device];
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* Contexts                                                                   *|
\*===----------------------------------------------------------------------===*/

kjit_status *cuda_make_current_slow(cuda_device *dev) {
  CUcontext ctx = __atomic_load_n(&dev->ctx, __ATOMIC_ACQUIRE), current = NULL;
  CUresult r;
  char text[256];
  if (!ctx) {
    pthread_mutex_lock(&dev->lock);
    if (!(ctx = dev->ctx)) {
      r = cu.cuDevicePrimaryCtxRetain(&ctx, dev->handle);
      if (r != CUDA_SUCCESS) {
        pthread_mutex_unlock(&dev->lock);
        return cuda_error(cuda_status_code(r),
                          "cannot retain the primary context of CUDA device "
                          "%d: %s",
                          (int)dev->index,
                          cuda_result_text(r, text, sizeof text));
      }
      __atomic_store_n(&dev->ctx, ctx, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&dev->lock);
  }
  if (cu.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx)
    return NULL;
  if ((r = cu.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
    return cuda_error(cuda_status_code(r),
                      "cannot make the primary context of CUDA device %d "
                      "current: %s",
                      (int)dev->index, cuda_result_text(r, text, sizeof text));
  return NULL;
}

void cuda_release_contexts(void) {
  int32_t i;
  for (i = 0; i < cuda_num_devices; ++i) {
    cuda_device *d = &cuda_devices[i];
    pthread_mutex_lock(&d->lock);
    if (d->ctx) {
      cu.cuDevicePrimaryCtxRelease(d->handle);
      __atomic_store_n(&d->ctx, NULL, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&d->last_kernel, NULL, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&d->lock);
  }
}

/*===----------------------------------------------------------------------===*\
|* Sticky errors                                                              *|
\*===----------------------------------------------------------------------===*/

kjit_status *cuda_sticky_error(cuda_device *dev) {
  kjit_status *status;
  pthread_mutex_lock(&dev->lock);
  status = cuda_error(KJIT_STATUS_ABORTED, "%s",
                      dev->sticky_message ? dev->sticky_message
                                          : "the CUDA context is unusable");
  pthread_mutex_unlock(&dev->lock);
  return status;
}

kjit_status *cuda_mark_sticky(const cuda_instance *self, cuda_device *dev,
                              CUresult r, const char *entry) {
  const char *kernel = __atomic_load_n(&dev->last_kernel, __ATOMIC_RELAXED);
  char text[256], message[768];
  int first = 0;
  pthread_mutex_lock(&dev->lock);
  if (!dev->sticky) {
    char in[256];
    if (kernel)
      snprintf(in, sizeof in, "in kernel '%s'", kernel);
    else
      snprintf(in, sizeof in, "in work enqueued before this call");
    snprintf(message, sizeof message,
             "the CUDA context of device %d is unusable after %s %s (found "
             "by %s); every later call on the device fails, and the process "
             "must restart to use it again",
             (int)dev->index, cuda_result_text(r, text, sizeof text), in,
             entry);
    dev->sticky_message = strdup(message);
    __atomic_store_n(&dev->sticky, r, __ATOMIC_RELEASE);
    first = 1;
  }
  pthread_mutex_unlock(&dev->lock);
  if (first && self && self->host &&
      KJIT_HAS_FIELD(self->host, kjit_host_api, report_async_error) &&
      self->host->report_async_error)
    self->host->report_async_error(
        self->ctx, kernel, kernel ? strlen(kernel) : 0,
        cuda_error(KJIT_STATUS_ABORTED, "%s", message));
  return cuda_sticky_status(dev);
}

kjit_status *cuda_call_error(const cuda_instance *self, cuda_device *dev,
                             CUresult r, const char *entry, const char *what) {
  char text[256];
  if (dev && cuda_is_sticky(r))
    return cuda_mark_sticky(self, dev, r, entry);
  return cuda_error(cuda_status_code(r), "%s: %s", what,
                    cuda_result_text(r, text, sizeof text));
}
