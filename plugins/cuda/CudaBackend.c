/*===- CudaBackend.c - the CUDA backend plugin --------------------*- C -*-===*\
|*                                                                            *|
|* libkjit-cuda.so: the backend named "cuda". It finalizes PTX to a cubin for *|
|* the device's sm_XY (Toolkit.c), loads cubins into the device's primary     *|
|* context, and launches them on the caller's stream through the driver API,  *|
|* which it opens at run time (Driver.c). Built only against include/kjit-c   *|
|* and the private CudaApi.h: no cuda.h, no link to libcuda.                  *|
|* docs/CudaBackend.md describes behaviour, messages and settings.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE 1

#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The version of this backend; joins the fingerprint. Bump it whenever
 *  the way kernels are finalized or run changes in a way a cached artifact
 *  could notice. */
#define CUDA_BACKEND_VERSION "1.0.0"

/* Dynamic shared memory a function may use without opting in. */
enum { CUDA_DEFAULT_SMEM = 48 * 1024 };
/* Arguments whose storage lives on the launching thread's stack. */
enum { CUDA_STACK_ARGS = 64 };

static unsigned cuda_users;
static pthread_mutex_t cuda_users_lock = PTHREAD_MUTEX_INITIALIZER;

/*===----------------------------------------------------------------------===*\
|* describe, device_count, fingerprint, options                               *|
\*===----------------------------------------------------------------------===*/

static const char fmt_ptx[] = "ptx", fmt_cubin[] = "cubin";
static const kjit_artifact_format cuda_format_ptx = {
    sizeof(kjit_artifact_format), NULL, fmt_ptx, sizeof fmt_ptx - 1};
static const kjit_artifact_format cuda_format_cubin = {
    sizeof(kjit_artifact_format), NULL, fmt_cubin, sizeof fmt_cubin - 1};
static const kjit_artifact_format *const cuda_formats[] = {&cuda_format_ptx,
                                                           &cuda_format_cubin};

static void build_options(cuda_device *dev) {
  const char *libdevice;
  size_t n = 0;
  if (__atomic_load_n(&dev->options_ready, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&dev->lock);
  if (!dev->options_ready) {
    kjit_option *o = &dev->options[n++];
    o->struct_size = sizeof *o;
    o->name = "ptx";
    o->name_len = 3;
    o->value = dev->ptx;
    o->value_len = strlen(dev->ptx);
    if ((libdevice = cuda_libdevice_path())) {
      o = &dev->options[n++];
      o->struct_size = sizeof *o;
      o->name = "libdevice";
      o->name_len = 9;
      o->value = libdevice;
      o->value_len = strlen(libdevice);
    }
    dev->option_list[0] = &dev->options[0];
    dev->option_list[1] = &dev->options[1];
    dev->num_options = n;
    __atomic_store_n(&dev->options_ready, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&dev->lock);
}

static kjit_status *cuda_describe(void *self,
                                  kjit_backend_describe_args *args) {
  cuda_device *dev;
  kjit_status *status;
  (void)self;
  if ((status = cuda_get_device(args->device, "describe", &dev)))
    return status;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, arch_len)) {
    args->target = "cuda";
    args->target_len = 4;
    args->arch = dev->arch;
    args->arch_len = strlen(dev->arch);
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, warp_size))
    args->warp_size = 32;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, formats)) {
    args->num_formats = 2;
    args->formats = cuda_formats;
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, multiprocessor_count))
    args->multiprocessor_count = dev->sms;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, max_threads_per_block))
    args->max_threads_per_block = dev->max_threads;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args,
                     max_shared_memory_per_block))
    args->max_shared_memory_per_block = dev->max_smem_optin;
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, uuid))
    memcpy(args->uuid, dev->uuid, sizeof args->uuid);
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, compile_options)) {
    build_options(dev);
    args->num_compile_options = dev->num_options;
    args->compile_options = dev->option_list;
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_describe_args, launch_flags))
    args->launch_flags = KJIT_LAUNCH_PDL |
                         (dev->cooperative ? KJIT_LAUNCH_COOPERATIVE : 0u) |
                         (cuda_timing_available() ? KJIT_LAUNCH_TIMED : 0u);
  return NULL;
}

static kjit_status *cuda_device_count(void *self,
                                      kjit_backend_device_count_args *args) {
  kjit_status *status = cuda_driver_status();
  if (status) {
    const char *message;
    size_t len;
    cuda_host_api->status_message(status, &message, &len);
    cuda_verbose(self, "device_count 0: %.*s", (int)len, message);
    cuda_host_api->status_destroy(status);
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_device_count_args, count))
    args->count = status ? 0 : cuda_num_devices;
  return NULL;
}

static void release_malloced(void *owner, const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  free(owner);
}

static kjit_status *
cuda_fingerprint_entry(void *self, kjit_backend_fingerprint_args *args) {
  char *toolkit = NULL, *text;
  kjit_status *status;
  cuda_device *dev;
  size_t len;
  int n;
  (void)self;
  if (!KJIT_HAS_FIELD(args, kjit_backend_fingerprint_args, fingerprint))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: fingerprint arguments too small");
  if ((status = cuda_get_device(args->device, "fingerprint", &dev)))
    return status;
  if ((status = cuda_toolkit_fingerprint(&toolkit)))
    return status;
  len = strlen(toolkit);
  if (!(text = malloc(len + 128))) {
    free(toolkit);
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  n = snprintf(text, len + 128,
               "kjit-cuda-backend;version=" CUDA_BACKEND_VERSION
               ";target=cuda;arch=%s;ptx=%s;%s",
               dev->arch, dev->ptx, toolkit);
  free(toolkit);
  args->fingerprint.data = (const uint8_t *)text;
  args->fingerprint.size = n < 0 ? 0 : (size_t)n;
  args->fingerprint.owner = text;
  args->fingerprint.release = release_malloced;
  return NULL;
}

/* No options: what changes code (the finalizer, the toolkit) comes from the
 * environment, read once per process, and joins the fingerprint. */
static kjit_status *cuda_parse_options(void *self,
                                       kjit_backend_parse_options_args *args) {
  (void)self;
  if (args->num_options > 0 && args->options && args->options[0]) {
    const kjit_option *o = args->options[0];
    return cuda_error(
        KJIT_STATUS_INVALID_ARGUMENT,
        "unknown option '%.*s=%.*s': the cuda backend takes no options (set "
        "KJIT_CUDA_FINALIZER, KJIT_CUDA_HOME or KJIT_CUDA_PTXAS in the "
        "environment)",
        o->name ? (int)o->name_len : 0, o->name ? o->name : "",
        o->value ? (int)o->value_len : 0, o->value ? o->value : "");
  }
  args->options_handle = NULL;
  return NULL;
}

static void cuda_destroy_options(void *self, void *handle) {
  (void)self;
  (void)handle;
}

/*===----------------------------------------------------------------------===*\
|* finalize                                                                   *|
\*===----------------------------------------------------------------------===*/

static int is_elf(const uint8_t *bytes, size_t size) {
  return bytes && size >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' &&
         bytes[2] == 'L' && bytes[3] == 'F';
}

static int format_is(const kjit_backend_finalize_args *args, const char *f) {
  return args->format && args->format_len == strlen(f) &&
         memcmp(args->format, f, args->format_len) == 0;
}

/* The architecture to finalize for: the device's sm_XY, or its
 * architecture-specific variant (sm_90a, sm_100f) when the PTX's .target
 * names one: ptxas and nvJitLink refuse to assemble PTX for sm_90a into
 * plain sm_90, and the variant runs only on that very architecture, which
 * the device has. PTX for another (older) target is compiled for the
 * device's own. */
static void ptx_arch(const uint8_t *ptx, size_t size, const char *device,
                     char *out, size_t out_size) {
  static const char directive[] = ".target";
  size_t n = strlen(device), i, limit = size < 65536 ? size : 65536;
  snprintf(out, out_size, "%s", device);
  for (i = 0; i + sizeof directive + n < limit; ++i) {
    const char *p = (const char *)ptx + i;
    if (memcmp(p, directive, sizeof directive - 1) != 0)
      continue;
    p += sizeof directive - 1;
    while ((size_t)(p - (const char *)ptx) < limit && (*p == ' ' || *p == '\t'))
      ++p;
    if ((size_t)(p - (const char *)ptx) + n + 2 <= limit &&
        memcmp(p, device, n) == 0 && (p[n] == 'a' || p[n] == 'f') &&
        !(p[n + 1] == '_' || (p[n + 1] >= '0' && p[n + 1] <= '9') ||
          (p[n + 1] >= 'a' && p[n + 1] <= 'z')))
      snprintf(out, out_size, "%s%c", device, p[n]);
    return; /* only the first .target counts */
  }
}

static kjit_status *cuda_finalize(void *self,
                                  kjit_backend_finalize_args *args) {
  int32_t device = KJIT_HAS_FIELD(args, kjit_backend_finalize_args, device)
                       ? args->device
                       : 0;
  int name_len = args->kernel_name ? (int)args->kernel_name_len : 0;
  const char *name = args->kernel_name ? args->kernel_name : "";
  kjit_status *status;
  cuda_device *dev;
  uint8_t *out = NULL;
  size_t out_size = 0;
  char *report = NULL;
  if ((status = cuda_get_device(device, "finalize", &dev)))
    return status;
  if (format_is(args, fmt_ptx)) {
    if (!args->artifact || args->artifact_size == 0)
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "finalize of kernel '%.*s': the PTX is empty", name_len,
                        name);
    char arch[sizeof dev->arch + 2];
    ptx_arch(args->artifact, args->artifact_size, dev->arch, arch, sizeof arch);
    if ((status = cuda_finalize_ptx(
             self, dev, (const char *)args->artifact, args->artifact_size, arch,
             name, (size_t)name_len, &out, &out_size, &report)))
      return status;
  } else if (format_is(args, fmt_cubin)) {
    if (!is_elf(args->artifact, args->artifact_size))
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "finalize of kernel '%.*s': the cubin is not an ELF "
                        "file (%zu bytes)",
                        name_len, name, args->artifact_size);
    if (!(out = malloc(args->artifact_size)))
      return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(out, args->artifact, args->artifact_size);
    out_size = args->artifact_size;
  } else {
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "format '%.*s' is not accepted by the cuda backend "
                      "(accepted: ptx, cubin)",
                      args->format ? (int)args->format_len : 0,
                      args->format ? args->format : "");
  }
  args->loadable.data = out;
  args->loadable.size = out_size;
  args->loadable.owner = out;
  args->loadable.release = release_malloced;
  if (report && KJIT_HAS_FIELD(args, kjit_backend_finalize_args, info)) {
    args->info.data = (const uint8_t *)report;
    args->info.size = strlen(report);
    args->info.owner = report;
    args->info.release = release_malloced;
  } else {
    free(report);
  }
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* load and unload                                                            *|
\*===----------------------------------------------------------------------===*/

static void free_kernel(cuda_kernel *k) {
  free(k->param_sizes);
  free(k->pointer_cache);
  free(k->value_slots);
  free(k->pointer_values);
  free(k);
}

/* The kernel's parameters, against which launches are checked: how many
 * there are comes from the load's template (ABI 1.4), the sizes of those
 * from the driver (cuFuncGetParamInfo, CUDA 12.4+). The driver has no call
 * that counts them (CUDA 13.0's cuda.h), and asking for the parameter past
 * the last one to find the end is a call that fails on every correct load,
 * which tools such as compute-sanitizer report as an API error; so the
 * driver is asked only about the parameters the template names. When one
 * of those is past the end, the template disagrees with the kernel: that
 * call fails, and the kernel takes the parameters before it. Without a
 * template or cuFuncGetParamInfo the parameters are unknown and launches
 * are not checked against them. */
static void read_params(cuda_kernel *k, const kjit_arg *const *args,
                        size_t num_args) {
  size_t count = 0, n, offset, size, i;
  uint32_t *sizes;
  k->num_params = SIZE_MAX;
  if (!cu.cuFuncGetParamInfo || !args || num_args == 0)
    return;
  /* Launches pass no constexpr arguments (copy_args skips them). */
  for (i = 0; i < num_args; ++i) {
    if (!args[i])
      return;
    count += !args[i]->is_constexpr;
  }
  if (count == 0 || count > 4096 || !(sizes = malloc(count * sizeof *sizes)))
    return;
  for (n = 0; n < count; ++n) {
    CUresult r = cu.cuFuncGetParamInfo(k->function, n, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE)
      break; /* past the last parameter: the kernel takes n */
    if (r != CUDA_SUCCESS) {
      free(sizes);
      return; /* unknown: launches are not checked */
    }
    sizes[n] = (uint32_t)size;
  }
  k->param_sizes = sizes;
  k->num_params = n;
}

/* Whether a kjit_arg's bits_size is a storage size (1, 2, 4 or 8). */
static int storage_size(uint32_t size) {
  return size == 1 || size == 2 || size == 4 || size == 8;
}

/* Checks once what copy_args checks of every launch's signature fields
 * (ABI 1.4): with a template that passes, launches may give values alone.
 * One that does not is not taken (launches then pass kjit_args and fail
 * with copy_args' message). Returns whether it was taken. */
static int take_template(cuda_kernel *k, const kjit_arg *const *args,
                         size_t n) {
  cuda_value_slot *slots;
  uint32_t *pointers;
  size_t i, num_pointers = 0;
  if (!args || n == 0 || (k->num_params != SIZE_MAX && n != k->num_params))
    return 0;
  for (i = 0; i < n; ++i) {
    const kjit_arg *a = args[i];
    if (!a || !KJIT_HAS_FIELD(a, kjit_arg, bits_size) || a->is_constexpr ||
        !storage_size(a->bits_size) ||
        (k->num_params != SIZE_MAX && a->bits_size != k->param_sizes[i]))
      return 0;
  }
  slots = calloc(n, sizeof *slots);
  pointers = calloc(n, sizeof *pointers);
  if (!slots || !pointers) {
    free(slots);
    free(pointers);
    return 0; /* launches pass kjit_args */
  }
  for (i = 0; i < n; ++i) {
    const kjit_arg *a = args[i];
    size_t len = a->name ? a->name_len : 0;
    slots[i].name = cuda_intern_name(a->name ? a->name : "", len);
    if (!slots[i].name) {
      free(slots);
      free(pointers);
      return 0;
    }
    slots[i].name_len = len;
    if ((a->flags & KJIT_ARG_FLAG_POINTER) && !(a->flags & KJIT_ARG_FLAG_NULL))
      pointers[num_pointers++] = (uint32_t)i;
  }
  k->value_slots = slots;
  k->num_values = n;
  k->pointer_values = pointers;
  k->num_pointer_values = num_pointers;
  return 1;
}

static kjit_status *cuda_load(void *self, kjit_backend_load_args *args) {
  int name_len = args->kernel_name ? (int)args->kernel_name_len : 0;
  const char *name = args->kernel_name ? args->kernel_name : "";
  kjit_status *status;
  cuda_device *dev;
  cuda_kernel *k;
  CUresult r;
  char what[512];
  void *aligned = NULL;
  const void *image = args->loadable;
  /* The arguments every launch will pass (ABI 1.4), or none. */
  int has_template = KJIT_HAS_FIELD(args, kjit_backend_load_args, args);
  const kjit_arg *const *template_args = has_template ? args->args : NULL;
  size_t num_template_args = has_template ? args->num_args : 0;
  if ((status = cuda_get_device(args->device, "load", &dev)))
    return status;
  if ((status = cuda_sticky_status(dev)))
    return status;
  if (name_len == 0 || name_len > 1024 || memchr(name, '\0', (size_t)name_len))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: load with an empty, overlong or "
                      "NUL-containing kernel name");
  if (!is_elf(args->loadable, args->loadable_size))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cannot load kernel '%.*s': the loadable bytes are not "
                      "a cubin (no ELF magic in %zu bytes)",
                      name_len, name, args->loadable_size);
  if ((status = cuda_make_current(dev)))
    return status;
  if (!(k = calloc(1, sizeof *k)) ||
      !(k->name = cuda_intern_name(name, (size_t)name_len))) {
    free(k);
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  k->dev = dev;
  /* The driver parses the ELF in place: give it aligned bytes. */
  if ((uintptr_t)image % 8) {
    if (!(aligned = malloc(args->loadable_size))) {
      free_kernel(k);
      return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    memcpy(aligned, image, args->loadable_size);
    image = aligned;
  }
  r = cu.cuModuleLoadData(&k->module, image);
  free(aligned);
  if (r != CUDA_SUCCESS) {
    snprintf(what, sizeof what,
             "cannot load kernel '%s' on device %d: cuModuleLoadData failed",
             k->name, (int)dev->index);
    free_kernel(k);
    return cuda_call_error(self, dev, r, "load", what);
  }
  if ((r = cu.cuModuleGetFunction(&k->function, k->module, k->name)) !=
      CUDA_SUCCESS) {
    snprintf(what, sizeof what,
             "cannot load kernel '%s': the cubin has no kernel of that name "
             "(cuModuleGetFunction)",
             k->name);
    cu.cuModuleUnload(k->module);
    free_kernel(k);
    return cuda_call_error(self, dev, r, "load", what);
  }
  read_params(k, template_args, num_template_args);
  k->cache_slots =
      k->num_params == SIZE_MAX ? CUDA_UNKNOWN_PARAMS_CACHE : k->num_params;
  if (k->cache_slots &&
      !(k->pointer_cache = calloc(k->cache_slots * (CUDA_POINTER_WAYS + 1),
                                  sizeof(uint64_t)))) {
    cu.cuModuleUnload(k->module);
    free_kernel(k);
    return cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (KJIT_HAS_FIELD(args, kjit_backend_load_args, takes_values) &&
      take_template(k, template_args, num_template_args))
    args->takes_values = 1;
  args->kernel = k;
  return NULL;
}

static kjit_status *cuda_unload(void *self, kjit_backend_unload_args *args) {
  cuda_kernel *k = args->kernel;
  kjit_status *status = NULL;
  CUresult r;
  char what[512];
  if (!k)
    return NULL;
  /* A context that is unusable took its modules with it. */
  if (!__atomic_load_n(&k->dev->sticky, __ATOMIC_ACQUIRE) &&
      !(status = cuda_make_current(k->dev)) &&
      (r = cu.cuModuleUnload(k->module)) != CUDA_SUCCESS) {
    snprintf(what, sizeof what, "unload of kernel '%s': cuModuleUnload failed",
             k->name);
    status = cuda_call_error(self, k->dev, r, "unload", what);
  }
  free_kernel(k);
  return status;
}

/*===----------------------------------------------------------------------===*\
|* launch                                                                     *|
\*===----------------------------------------------------------------------===*/

/* What check_launch accepts without looking further, as one expression:
 * no flags, no clusters, dynamic shared memory within the default, a
 * power-of-two num_warps the device allows and a grid within CUDA's
 * limits. Most launches are such; the others go through check_launch,
 * which alone words the refusals. */
static int plain_launch(const cuda_kernel *k,
                        const kjit_backend_launch_args *args, uint32_t flags,
                        const uint32_t *cluster) {
  uint32_t nw = args->num_warps;
  return !flags && !cluster && args->shared_memory_bytes <= CUDA_DEFAULT_SMEM &&
         nw != 0 && (nw & (nw - 1)) == 0 &&
         (!k->dev->max_threads || nw <= k->dev->max_threads / 32) &&
         args->grid[0] <= 0x7fffffffu && args->grid[1] <= 65535u &&
         args->grid[2] <= 65535u;
}

__attribute__((noinline)) static kjit_status *
check_launch(const cuda_kernel *k, const kjit_backend_launch_args *args,
             uint32_t flags, const uint32_t *cluster) {
  /* cluster: NULL, or the launch's clusters with some dimension set. */
  const cuda_device *dev = k->dev;
  uint32_t nw = args->num_warps;
  uint32_t unknown =
      flags & ~(KJIT_LAUNCH_COOPERATIVE | KJIT_LAUNCH_PDL | KJIT_LAUNCH_TIMED);
  if (nw == 0 || (nw & (nw - 1)) != 0)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': num_warps must be a power of 2 "
                      "(got %u)",
                      k->name, (unsigned)nw);
  if (dev->max_threads && nw > dev->max_threads / 32)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': num_warps=%u means %llu threads "
                      "per block, but device %d allows at most %u",
                      k->name, (unsigned)nw, 32ull * nw, (int)dev->index,
                      (unsigned)dev->max_threads);
  /* CUDA's own grid limits (compute capability 3.0 and later): 2^31 - 1
   * blocks along x, 65535 along y and z. */
  if (args->grid[0] > 0x7fffffffu || args->grid[1] > 65535u ||
      args->grid[2] > 65535u)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': grid %ux%ux%u is beyond what "
                      "CUDA launches: at most 2147483647 programs along x "
                      "and 65535 along y and z",
                      k->name, args->grid[0], args->grid[1], args->grid[2]);
  if (unknown)
    return cuda_error(KJIT_STATUS_UNIMPLEMENTED,
                      "launch of kernel '%s': launch flags 0x%x are not known "
                      "to the cuda backend",
                      k->name, (unsigned)unknown);
  if ((flags & KJIT_LAUNCH_COOPERATIVE) && !dev->cooperative)
    return cuda_error(KJIT_STATUS_UNIMPLEMENTED,
                      "launch of kernel '%s': device %d does not support "
                      "cooperative launches",
                      k->name, (int)dev->index);
  if (cluster) {
    int i;
    if (dev->major < 9)
      return cuda_error(KJIT_STATUS_UNIMPLEMENTED,
                        "launch of kernel '%s': clusters need sm_90 or newer, "
                        "and device %d is %s",
                        k->name, (int)dev->index, dev->arch);
    for (i = 0; i < 3; ++i) {
      uint32_t c = cluster[i] ? cluster[i] : 1;
      if (args->grid[i] % c)
        return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                          "launch of kernel '%s': grid %ux%ux%u is not a "
                          "multiple of clusters of %ux%ux%u",
                          k->name, args->grid[0], args->grid[1], args->grid[2],
                          cluster[0] ? cluster[0] : 1,
                          cluster[1] ? cluster[1] : 1,
                          cluster[2] ? cluster[2] : 1);
    }
  }
  if (args->shared_memory_bytes > CUDA_DEFAULT_SMEM && dev->max_smem_optin &&
      args->shared_memory_bytes > dev->max_smem_optin)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': %u bytes of dynamic shared "
                      "memory requested, but device %d allows at most %llu "
                      "per block",
                      k->name, (unsigned)args->shared_memory_bytes,
                      (int)dev->index, (unsigned long long)dev->max_smem_optin);
  return NULL;
}

static const char *arg_name(const kjit_arg *a, int *len) {
  *len = a->name ? (int)a->name_len : 0;
  return a->name ? a->name : "";
}

/* Whether `bits` was validated as device memory for slot `n` of `k`. */
static int pointer_cached(const cuda_kernel *k, size_t n, uint64_t bits) {
  int w;
  if (n >= k->cache_slots)
    return 0;
  for (w = 0; w < CUDA_POINTER_WAYS; ++w)
    if (__atomic_load_n(&k->pointer_cache[w * k->cache_slots + n],
                        __ATOMIC_RELAXED) == bits)
      return 1;
  return 0;
}

/* Checks that pointer argument `n` (`name`), not in the slot's cache, is
 * device memory, caches it, and replaces *bits with the device's address
 * of it (which may differ for memory the driver maps). */
__attribute__((noinline)) static kjit_status *
check_pointer(const cuda_instance *self, cuda_kernel *k, size_t n,
              const char *name, int len, uint64_t *bits) {
  CUdeviceptr device_address = 0;
  CUresult r = cu.cuPointerGetAttribute(
      &device_address, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, *bits);
  if (r == CUDA_ERROR_INVALID_VALUE)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': Pointer argument (at %zu) "
                      "cannot be accessed from Triton (cpu tensor?): "
                      "'%.*s' is 0x%llx, which is not CUDA memory",
                      k->name, n, len, name, (unsigned long long)*bits);
  if (r != CUDA_SUCCESS) {
    char what[512];
    snprintf(what, sizeof what,
             "launch of kernel '%s': checking pointer argument %zu "
             "('%.*s' = 0x%llx) failed: cuPointerGetAttribute",
             k->name, n, len, name, (unsigned long long)*bits);
    return cuda_call_error(self, k->dev, r, "a pointer check", what);
  }
  if (device_address == *bits && n < k->cache_slots) {
    uint64_t *counter =
        &k->pointer_cache[CUDA_POINTER_WAYS * k->cache_slots + n];
    uint64_t way =
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED) % CUDA_POINTER_WAYS;
    __atomic_store_n(&k->pointer_cache[way * k->cache_slots + n], *bits,
                     __ATOMIC_RELAXED);
  }
  *bits = device_address;
  return NULL;
}

/* Copies the arguments into slots (and params), checking them against the
 * kernel's parameters; validates pointers (cached per slot). */
__attribute__((noinline)) static kjit_status *
copy_args(const cuda_instance *self, cuda_kernel *k,
          const kjit_backend_launch_args *args, uint64_t *slots, void **params,
          size_t *count) {
  kjit_status *status;
  size_t i, n = 0;
  for (i = 0; i < args->num_args; ++i) {
    const kjit_arg *a = args->args ? args->args[i] : NULL;
    uint64_t bits;
    int len;
    const char *name;
    if (!a)
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu is NULL", k->name,
                        i);
    if (a->is_constexpr)
      continue; /* folded into the code; the runtime does not pass them */
    name = arg_name(a, &len);
    if (!KJIT_HAS_FIELD(a, kjit_arg, bits_size))
      return cuda_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "launch of kernel '%s': argument %zu ('%.*s') is a "
                        "kjit_arg of %zu bytes, without ABI 1.1's storage "
                        "fields; the cuda backend needs a runtime of ABI 1.1 "
                        "or newer",
                        k->name, n, len, name, a->struct_size);
    if (k->num_params != SIZE_MAX && n >= k->num_params) {
      size_t given = n;
      for (; i < args->num_args; ++i)
        given += args->args[i] && !args->args[i]->is_constexpr;
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': %zu arguments given, but the "
                        "compiled kernel takes %zu",
                        k->name, given, k->num_params);
    }
    if (!storage_size(a->bits_size))
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu ('%.*s') has "
                        "bits_size %u; storage is 1, 2, 4 or 8 bytes",
                        k->name, n, len, name, (unsigned)a->bits_size);
    if (k->num_params != SIZE_MAX && a->bits_size != k->param_sizes[n])
      return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu ('%.*s', %.*s) "
                        "has %u bytes, but parameter %zu of the compiled "
                        "kernel has %u",
                        k->name, n, len, name, a->type ? (int)a->type_len : 0,
                        a->type ? a->type : "", (unsigned)a->bits_size, n,
                        (unsigned)k->param_sizes[n]);
    bits = a->bits;
    if (a->bits_size < 8)
      bits &= (UINT64_C(1) << (8 * a->bits_size)) - 1;
    if ((a->flags & KJIT_ARG_FLAG_POINTER) &&
        !(a->flags & KJIT_ARG_FLAG_NULL) && bits != 0 &&
        !pointer_cached(k, n, bits) &&
        (status = check_pointer(self, k, n, name, len, &bits)))
      return status;
    slots[n] = bits;
    params[n] = &slots[n];
    ++n;
  }
  if (k->num_params != SIZE_MAX && n != k->num_params)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': %zu argument%s given, but the "
                      "compiled kernel takes %zu",
                      k->name, n, n == 1 ? "" : "s", k->num_params);
  *count = n;
  return NULL;
}

/* copy_args for a launch of values (ABI 1.4): the template's checks were
 * made at load, so only the count and the pointers are checked here. */
static kjit_status *copy_values(const cuda_instance *self, cuda_kernel *k,
                                const kjit_backend_launch_args *args,
                                uint64_t *slots, void **params) {
  const cuda_value_slot *value = k->value_slots;
  kjit_status *status;
  size_t n;
  if (!value)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': values given, but its load "
                      "took no argument template",
                      k->name);
  if (args->num_args != k->num_values)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': %zu values given, but its load "
                      "took a template of %zu arguments",
                      k->name, args->num_args, k->num_values);
  for (n = 0; n < k->num_values; ++n) {
    slots[n] = args->values[n];
    params[n] = &slots[n];
  }
  /* Then the template's pointers, each against its slot's cache. */
  for (n = 0; n < k->num_pointer_values; ++n) {
    uint32_t at = k->pointer_values[n];
    if (slots[at] != 0 && !pointer_cached(k, at, slots[at]) &&
        (status = check_pointer(self, k, at, value[at].name,
                                (int)value[at].name_len, &slots[at])))
      return status;
  }
  return NULL;
}

/* The launch through cuLaunchKernelEx, with its attributes: cooperative,
 * PDL, clusters. Out of cuda_launch, like every rare path, so that a plain
 * launch runs through few cache lines of code (between two launches the
 * driver's own code evicts much of the instruction cache). */
__attribute__((noinline)) static CUresult
launch_with_attributes(const cuda_kernel *k,
                       const kjit_backend_launch_args *args, uint32_t flags,
                       const uint32_t *cluster, void **params) {
  CUlaunchAttribute attrs[3];
  CUlaunchConfig config;
  unsigned n = 0;
  memset(attrs, 0, sizeof attrs);
  if (flags & KJIT_LAUNCH_COOPERATIVE) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n++].value.cooperative = 1;
  }
  if (flags & KJIT_LAUNCH_PDL) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = cluster[0] ? cluster[0] : 1;
    attrs[n].value.clusterDim.y = cluster[1] ? cluster[1] : 1;
    attrs[n++].value.clusterDim.z = cluster[2] ? cluster[2] : 1;
  }
  memset(&config, 0, sizeof config);
  config.gridDimX = args->grid[0];
  config.gridDimY = args->grid[1];
  config.gridDimZ = args->grid[2];
  config.blockDimX = 32 * args->num_warps;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = args->shared_memory_bytes;
  config.hStream = (CUstream)(uintptr_t)args->stream;
  config.attrs = attrs;
  config.numAttrs = n;
  return cu.cuLaunchKernelEx(&config, k->function, params, NULL);
}

/* What a launch the driver refused says. */
__attribute__((noinline, cold)) static kjit_status *
launch_failed(const cuda_instance *self, const cuda_kernel *k,
              const kjit_backend_launch_args *args, CUresult r) {
  char what[512], entry[300];
  snprintf(what, sizeof what,
           "launch of kernel '%s' (grid %ux%ux%u, %u threads, %u bytes of "
           "dynamic shared memory, stream 0x%llx) failed",
           k->name, args->grid[0], args->grid[1], args->grid[2],
           32 * args->num_warps, (unsigned)args->shared_memory_bytes,
           (unsigned long long)args->stream);
  snprintf(entry, sizeof entry, "the launch of kernel '%s'", k->name);
  return cuda_call_error(self, k->dev, r, entry, what);
}

/* Every launch cuda_launch_plain does not make: kjit_args, flags, clusters,
 * large dynamic shared memory, timing, many arguments, an empty grid, a
 * pointer not validated yet, a sticky context, and every error. */
__attribute__((noinline)) static kjit_status *
cuda_launch_general(void *self, kjit_backend_launch_args *args) {
  cuda_kernel *k = args->kernel;
  uint64_t stack_slots[CUDA_STACK_ARGS];
  void *stack_params[CUDA_STACK_ARGS];
  uint64_t *slots = stack_slots;
  void **params = stack_params;
  const uint32_t *cluster = NULL;
  uint32_t flags = 0, smem = args->shared_memory_bytes;
  cuda_timed *timed = NULL;
  CUstream stream = (CUstream)(uintptr_t)args->stream;
  kjit_status *status;
  size_t count = 0;
  CUresult r;
  if (!k)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: launch of a NULL kernel handle");
  if ((status = cuda_sticky_status(k->dev)))
    return status;
  /* cluster stays NULL unless the launch asks for clusters. */
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, cluster)) {
    flags = args->flags;
    if (args->cluster[0] | args->cluster[1] | args->cluster[2])
      cluster = args->cluster;
  }
  if (!plain_launch(k, args, flags, cluster) &&
      (status = check_launch(k, args, flags, cluster)))
    return status;
  if (args->num_args > CUDA_STACK_ARGS) {
    slots = malloc(args->num_args * sizeof *slots);
    params = malloc(args->num_args * sizeof *params);
    if (!slots || !params) {
      status = cuda_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      goto out;
    }
  }
  if ((status = cuda_make_current(k->dev)))
    goto out;
  if (KJIT_HAS_FIELD(args, kjit_backend_launch_args, values) && args->values) {
    if ((status = copy_values(self, k, args, slots, params)))
      goto out;
    count = args->num_args;
  } else if ((status = copy_args(self, k, args, slots, params, &count))) {
    goto out;
  }
  if (!args->grid[0] || !args->grid[1] || !args->grid[2])
    goto out; /* an empty grid runs nothing */
  if (smem > CUDA_DEFAULT_SMEM &&
      smem > __atomic_load_n(&k->smem_configured, __ATOMIC_RELAXED)) {
    if ((r = cu.cuFuncSetAttribute(
             k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
             (int)smem)) != CUDA_SUCCESS) {
      char what[256];
      snprintf(what, sizeof what,
               "launch of kernel '%s': cannot allow %u bytes of dynamic "
               "shared memory (cuFuncSetAttribute)",
               k->name, (unsigned)smem);
      status = cuda_call_error(self, k->dev, r, "cuFuncSetAttribute", what);
      goto out;
    }
    __atomic_store_n(&k->smem_configured, smem, __ATOMIC_RELAXED);
  }
  if (flags & KJIT_LAUNCH_TIMED) {
    timed = cuda_timed_begin(self, k->dev, stream);
    flags &= ~KJIT_LAUNCH_TIMED; /* the events do it; no launch attribute */
  }
  if (flags || cluster)
    r = launch_with_attributes(k, args, flags, cluster, count ? params : NULL);
  else
    r = cu.cuLaunchKernel(k->function, args->grid[0], args->grid[1],
                          args->grid[2], 32 * args->num_warps, 1, 1, smem,
                          stream, count ? params : NULL, NULL);
  if (timed)
    cuda_timed_end(
        timed, k->name,
        KJIT_HAS_FIELD(args, kjit_backend_launch_args, correlation_id)
            ? args->correlation_id
            : 0,
        r);
  if (r != CUDA_SUCCESS) {
    status = launch_failed(self, k, args, r);
    goto out;
  }
  if (__atomic_load_n(&k->dev->last_kernel, __ATOMIC_RELAXED) != k->name)
    __atomic_store_n(&k->dev->last_kernel, k->name, __ATOMIC_RELAXED);
out:
  if (slots != stack_slots)
    free(slots);
  if (params != stack_params)
    free(params);
  return status;
}

/* What nearly every launch of a loop is: values (ABI 1.4) of a kernel whose
 * pointers were validated before, no flags or clusters, the default shared
 * memory, a non-empty grid, a context without a sticky error. In few cache
 * lines of code: between two launches the driver's own code evicts much of
 * the instruction cache (docs/Dispatch.md). Anything else, including any
 * error, is cuda_launch_general's, which checks everything again. */
static kjit_status *cuda_launch(void *self, kjit_backend_launch_args *args) {
  cuda_kernel *k = args->kernel;
  uint64_t slots[CUDA_STACK_ARGS];
  void *params[CUDA_STACK_ARGS];
  kjit_status *status;
  size_t n;
  CUresult r;
  if (!k || !KJIT_HAS_FIELD(args, kjit_backend_launch_args, values) ||
      !args->values || args->flags ||
      args->cluster[0] | args->cluster[1] | args->cluster[2] ||
      args->num_args != k->num_values || !k->value_slots ||
      args->num_args > CUDA_STACK_ARGS || !args->grid[0] || !args->grid[1] ||
      !args->grid[2] || !plain_launch(k, args, 0, NULL) ||
      __atomic_load_n(&k->dev->sticky, __ATOMIC_ACQUIRE))
    return cuda_launch_general(self, args);
  for (n = 0; n < k->num_values; ++n) {
    slots[n] = args->values[n];
    params[n] = &slots[n];
  }
  for (n = 0; n < k->num_pointer_values; ++n) {
    uint32_t at = k->pointer_values[n];
    if (slots[at] != 0 && !pointer_cached(k, at, slots[at]))
      return cuda_launch_general(self, args);
  }
  if ((status = cuda_make_current(k->dev)))
    return status;
  r = cu.cuLaunchKernel(
      k->function, args->grid[0], args->grid[1], args->grid[2],
      32 * args->num_warps, 1, 1, args->shared_memory_bytes,
      (CUstream)(uintptr_t)args->stream, k->num_values ? params : NULL, NULL);
  if (r != CUDA_SUCCESS)
    return launch_failed(self, k, args, r);
  if (__atomic_load_n(&k->dev->last_kernel, __ATOMIC_RELAXED) != k->name)
    __atomic_store_n(&k->dev->last_kernel, k->name, __ATOMIC_RELAXED);
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* synchronize and device memory                                              *|
\*===----------------------------------------------------------------------===*/

static kjit_status *cuda_synchronize(void *self,
                                     kjit_backend_synchronize_args *args) {
  kjit_status *status;
  cuda_device *dev;
  CUresult r;
  char what[256];
  if ((status = cuda_get_device(args->device, "synchronize", &dev)))
    return status;
  if ((status = cuda_sticky_status(dev)) || (status = cuda_make_current(dev)))
    return status;
  if ((r = cu.cuStreamSynchronize((CUstream)(uintptr_t)args->stream)) ==
      CUDA_SUCCESS)
    return NULL;
  snprintf(what, sizeof what,
           "synchronize of stream 0x%llx on device %d failed",
           (unsigned long long)args->stream, (int)dev->index);
  return cuda_call_error(self, dev, r, "synchronize", what);
}

static kjit_status *cuda_allocate(void *self,
                                  kjit_backend_allocate_args *args) {
  kjit_status *status;
  cuda_device *dev;
  CUdeviceptr p = 0;
  CUresult r;
  char what[256];
  if (!KJIT_HAS_FIELD(args, kjit_backend_allocate_args, address))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: allocate arguments too small");
  if ((status = cuda_get_device(args->device, "allocate", &dev)))
    return status;
  if (args->size == 0 || args->size > (uint64_t)SIZE_MAX)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: cannot allocate %llu bytes",
                      (unsigned long long)args->size);
  if ((status = cuda_sticky_status(dev)) || (status = cuda_make_current(dev)))
    return status;
  if ((r = cu.cuMemAlloc(&p, (size_t)args->size)) != CUDA_SUCCESS) {
    snprintf(what, sizeof what,
             "cuda backend: cannot allocate %llu bytes on device %d",
             (unsigned long long)args->size, (int)dev->index);
    return cuda_call_error(self, dev, r, "allocate", what);
  }
  args->address = p;
  return NULL;
}

static kjit_status *cuda_deallocate(void *self,
                                    kjit_backend_deallocate_args *args) {
  kjit_status *status;
  cuda_device *dev;
  CUresult r;
  char what[256];
  if (!KJIT_HAS_FIELD(args, kjit_backend_deallocate_args, address))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: deallocate arguments too small");
  if ((status = cuda_get_device(args->device, "deallocate", &dev)))
    return status;
  if (!args->address)
    return NULL;
  if ((status = cuda_make_current(dev)))
    return status;
  if ((r = cu.cuMemFree(args->address)) != CUDA_SUCCESS) {
    snprintf(what, sizeof what, "cuda backend: cannot free 0x%llx on device %d",
             (unsigned long long)args->address, (int)dev->index);
    return cuda_call_error(self, dev, r, "deallocate", what);
  }
  return NULL;
}

static kjit_status *cuda_copy(void *self, kjit_backend_copy_args *args) {
  kjit_status *status;
  cuda_device *dev;
  CUstream stream;
  CUresult r;
  const char *step;
  char what[256];
  if (!KJIT_HAS_FIELD(args, kjit_backend_copy_args, stream))
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: copy arguments too small");
  if ((status = cuda_get_device(args->device, "copy", &dev)))
    return status;
  if (args->size == 0)
    return NULL;
  if (!args->host || !args->address)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: copy of %llu bytes with a null %s "
                      "pointer",
                      (unsigned long long)args->size,
                      args->host ? "device" : "host");
  if (args->direction != KJIT_COPY_HOST_TO_DEVICE &&
      args->direction != KJIT_COPY_DEVICE_TO_HOST)
    return cuda_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "cuda backend: copy direction %u is not "
                      "KJIT_COPY_HOST_TO_DEVICE (1) or "
                      "KJIT_COPY_DEVICE_TO_HOST (2)",
                      (unsigned)args->direction);
  if ((status = cuda_sticky_status(dev)) || (status = cuda_make_current(dev)))
    return status;
  stream = (CUstream)(uintptr_t)args->stream;
  if (args->direction == KJIT_COPY_HOST_TO_DEVICE) {
    step = "cuMemcpyHtoDAsync";
    r = cu.cuMemcpyHtoDAsync(args->address, args->host, (size_t)args->size,
                             stream);
  } else {
    step = "cuMemcpyDtoHAsync";
    r = cu.cuMemcpyDtoHAsync(args->host, args->address, (size_t)args->size,
                             stream);
  }
  if (r == CUDA_SUCCESS) {
    step = "cuStreamSynchronize";
    r = cu.cuStreamSynchronize(stream);
  }
  if (r == CUDA_SUCCESS)
    return NULL;
  snprintf(what, sizeof what,
           "cuda backend: copy of %llu bytes %s 0x%llx on device %d failed "
           "(%s)",
           (unsigned long long)args->size,
           args->direction == KJIT_COPY_HOST_TO_DEVICE ? "to" : "from",
           (unsigned long long)args->address, (int)dev->index, step);
  return cuda_call_error(self, dev, r, "copy", what);
}

/*===----------------------------------------------------------------------===*\
|* Plugin table                                                               *|
\*===----------------------------------------------------------------------===*/

/* Each init gets its own instance (for the host's log and async errors);
 * the driver, devices and toolkit are process-wide: the first init sets
 * them up, the last fini releases the primary contexts. */
static kjit_status *cuda_init(const kjit_host_api *host, kjit_host_context *ctx,
                              void **self) {
  cuda_instance *instance = malloc(sizeof *instance);
  if (!instance)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED,
                               "cuda backend: out of memory", 27);
  instance->host = host;
  instance->ctx = ctx;
  pthread_mutex_lock(&cuda_users_lock);
  if (cuda_users++ == 0) {
    cuda_host_api = host;
    cuda_toolkit_init();
  }
  pthread_mutex_unlock(&cuda_users_lock);
  *self = instance;
  return NULL;
}

static void cuda_fini(void *self) {
  /* Timed launches report through this instance's host context. */
  cuda_timing_drain(self);
  pthread_mutex_lock(&cuda_users_lock);
  if (--cuda_users == 0) {
    cuda_timing_shutdown();
    cuda_toolkit_join();
    cuda_release_contexts();
    cuda_free_names();
  }
  pthread_mutex_unlock(&cuda_users_lock);
  free(self);
}

static const kjit_backend_table cuda_backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "cuda",
    .name_len = 4,
    .describe = cuda_describe,
    .fingerprint = cuda_fingerprint_entry,
    .parse_options = cuda_parse_options,
    .destroy_options = cuda_destroy_options,
    .finalize = cuda_finalize,
    .load = cuda_load,
    .launch = cuda_launch,
    .unload = cuda_unload,
    .device_count = cuda_device_count,
    .synchronize = cuda_synchronize,
    .allocate = cuda_allocate,
    .deallocate = cuda_deallocate,
    .copy = cuda_copy,
};

static const kjit_plugin_api cuda_plugin = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "cuda",
    .name_len = 4,
    .version = CUDA_BACKEND_VERSION,
    .version_len = sizeof CUDA_BACKEND_VERSION - 1,
    /* Every entry may run concurrently: launches touch only atomics and the
     * driver (which is thread-safe); slow paths take per-device locks. */
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = cuda_init,
    .fini = cuda_fini,
    .backend = &cuda_backend,
};

static const char cuda_needs_1_1[] =
    "the cuda backend reads the launch arguments' storage fields of ABI 1.1 "
    "and needs a host of ABI 1.1 or newer";

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  if (io->host_max_minor < 1) {
    if (KJIT_HAS_FIELD(io, kjit_negotiate, reject_reason_len)) {
      io->reject_reason = cuda_needs_1_1;
      io->reject_reason_len = sizeof cuda_needs_1_1 - 1;
    }
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &cuda_plugin;
  return KJIT_STATUS_OK;
}
