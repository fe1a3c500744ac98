/*===- Args.c - launch arguments to the host kernel ABI's storage -*- C -*-===*\
|*                                                                            *|
|* A host kernel reads args[i] as a pointer to a value of the parameter's C   *|
|* type (HostKernel.h). Since ABI 1.1 the runtime hands every argument over   *|
|* as that storage already (kjit_arg.bits, bits_size, with a dtype code and   *|
|* a pointer flag), encoded by the same rules its binder checked: this file   *|
|* checks the codes against the kernel's signature, parsed once at load, and  *|
|* copies bytes. It converts, rounds and range-checks nothing. Since ABI 1.4  *|
|* the checks can be made once, on the template the runtime hands to load,   *|
|* and the launches then pass the storage bits alone (host_take_template).   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <stdlib.h>
#include <string.h>

/*===----------------------------------------------------------------------===*\
|* Signature types                                                            *|
\*===----------------------------------------------------------------------===*/

/* The canonical names of the signature types (DType.h's), with their code
 * and storage size. Used to parse a signature at load and to name codes in
 * messages; never on the launch path. */
static const struct {
  const char *name;
  int32_t dtype;
  uint32_t size;
} dtypes[] = {
    {"i1", KJIT_DTYPE_I1, 1},           {"i8", KJIT_DTYPE_I8, 1},
    {"i16", KJIT_DTYPE_I16, 2},         {"i32", KJIT_DTYPE_I32, 4},
    {"i64", KJIT_DTYPE_I64, 8},         {"u8", KJIT_DTYPE_U8, 1},
    {"u16", KJIT_DTYPE_U16, 2},         {"u32", KJIT_DTYPE_U32, 4},
    {"u64", KJIT_DTYPE_U64, 8},         {"fp16", KJIT_DTYPE_FP16, 2},
    {"bf16", KJIT_DTYPE_BF16, 2},       {"fp32", KJIT_DTYPE_FP32, 4},
    {"fp64", KJIT_DTYPE_FP64, 8},       {"fp8e4nv", KJIT_DTYPE_FP8E4NV, 1},
    {"fp8e5", KJIT_DTYPE_FP8E5, 1},     {"fp8e4b15", KJIT_DTYPE_FP8E4B15, 1},
    {"fp8e4b8", KJIT_DTYPE_FP8E4B8, 1}, {"fp8e5b16", KJIT_DTYPE_FP8E5B16, 1},
};
enum { num_dtypes = sizeof dtypes / sizeof dtypes[0] };

/* The row of a dtype code, or -1. */
static int dtype_row(int32_t code) {
  int i;
  for (i = 0; i < num_dtypes; ++i)
    if (dtypes[i].dtype == code)
      return i;
  return -1;
}

static const char *dtype_name(int32_t code) {
  int row = dtype_row(code);
  return row < 0 ? "unknown" : dtypes[row].name;
}

/* Parses one signature type ("fp32", "*fp32", "*kfp32"). */
static int parse_type(const char *type, size_t len, host_param *param) {
  int i;
  param->type = type;
  param->type_len = len;
  param->pointer = len > 1 && type[0] == '*';
  if (param->pointer) {
    ++type;
    --len;
    if (len > 1 && type[0] == 'k') { /* read-only: the same storage */
      ++type;
      --len;
    }
  }
  for (i = 0; i < num_dtypes; ++i)
    if (strlen(dtypes[i].name) == len &&
        memcmp(dtypes[i].name, type, len) == 0) {
      param->dtype = dtypes[i].dtype;
      param->bits_size = param->pointer ? 8 : dtypes[i].size;
      return 1;
    }
  return 0;
}

kjit_status *host_parse_signature(host_kernel *kernel) {
  const char *p = kernel->signature;
  size_t n = 0, i;
  kernel->params = NULL;
  kernel->num_params = 0;
  if (!p)
    return NULL;
  if (*p) {
    n = 1;
    for (; *p; ++p)
      n += *p == ',';
  }
  if (n == 0)
    return NULL;
  kernel->params = calloc(n, sizeof *kernel->params);
  if (!kernel->params)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  p = kernel->signature;
  for (i = 0; i < n; ++i) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (!parse_type(p, len, &kernel->params[i]))
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "cannot load kernel '%s': its signature "
                        "kjit_host_signature_%s (%s) has type '%.*s' at "
                        "position %zu, which the host backend does not know",
                        kernel->name, kernel->name, kernel->signature, (int)len,
                        p, i);
    p = end ? end + 1 : p + len;
  }
  kernel->num_params = n;
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* The copy loop                                                              *|
\*===----------------------------------------------------------------------===*/

/* Checks one argument's storage fields against the parameter it is for
 * (NULL: the kernel has no signature) and says what is wrong. */
static kjit_status *check_arg(const host_kernel *kernel, size_t n,
                              const kjit_arg *arg, const host_param *param) {
  int name_len = arg->name ? (int)arg->name_len : 0;
  const char *name = arg->name ? arg->name : "";
  int pointer = (arg->flags & KJIT_ARG_FLAG_POINTER) != 0;
  int row = dtype_row(arg->dtype);
  uint32_t want_size;
  if (!param) {
    /* Nothing to compare with: the fields must at least make sense. */
    if (row < 0)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu ('%.*s') has "
                        "dtype code %d, which names no type",
                        kernel->name, n, name_len, name, (int)arg->dtype);
    want_size = pointer ? 8 : dtypes[row].size;
    if (arg->bits_size != want_size)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu ('%.*s') has "
                        "bits_size %u, but %s%s is stored in %u bytes",
                        kernel->name, n, name_len, name,
                        (unsigned)arg->bits_size,
                        pointer ? "a pointer to " : "", dtypes[row].name,
                        (unsigned)want_size);
    return NULL;
  }
  if (pointer != (int)param->pointer)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': argument %zu ('%.*s') is passed "
                      "as a %s (dtype %s), but the kernel was compiled for "
                      "'%.*s'",
                      kernel->name, n, name_len, name,
                      pointer ? "pointer" : "scalar", dtype_name(arg->dtype),
                      (int)param->type_len, param->type);
  if (arg->dtype != param->dtype)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': argument %zu ('%.*s') has "
                      "dtype code %d (%s%s), but the kernel was compiled for "
                      "'%.*s' (code %d)",
                      kernel->name, n, name_len, name, (int)arg->dtype,
                      pointer ? "*" : "", dtype_name(arg->dtype),
                      (int)param->type_len, param->type, (int)param->dtype);
  if (arg->bits_size != param->bits_size)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': argument %zu ('%.*s') has "
                      "bits_size %u, but '%.*s' is stored in %u bytes",
                      kernel->name, n, name_len, name, (unsigned)arg->bits_size,
                      (int)param->type_len, param->type,
                      (unsigned)param->bits_size);
  return NULL;
}

kjit_status *host_copy_args(const host_kernel *kernel, size_t num_args,
                            const kjit_arg *const *args, host_arg_slot *slots,
                            void **pointers, size_t *count) {
  size_t i, n = 0;
  for (i = 0; i < num_args; ++i) {
    const kjit_arg *arg = args ? args[i] : NULL;
    kjit_status *status;
    uint64_t bits;

    if (!arg)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu is NULL",
                        kernel->name, i);
    /* is_constexpr is a 1.0 field: every kjit_arg has it. Constexpr values
     * are folded into the code and the entry never reads them; the runtime
     * does not pass them, but a caller that does is harmless. */
    if (arg->is_constexpr)
      continue;
    if (!KJIT_HAS_FIELD(arg, kjit_arg, bits_size))
      return host_error(KJIT_STATUS_FAILED_PRECONDITION,
                        "launch of kernel '%s': argument %zu ('%.*s') is a "
                        "kjit_arg of %zu bytes, without ABI 1.1's storage "
                        "fields (dtype, flags, bits, bits_size); the host "
                        "backend needs a runtime of ABI 1.1 or newer",
                        kernel->name, n, arg->name ? (int)arg->name_len : 0,
                        arg->name ? arg->name : "", arg->struct_size);
    if (kernel->signature && n >= kernel->num_params)
      break; /* counted below */
    if ((status = check_arg(kernel, n, arg,
                            kernel->signature ? &kernel->params[n] : NULL)))
      return status;
    /* Little-endian: the low bytes of the slot are the narrow value. The
     * bytes above bits_size are zero by the ABI; masking keeps a careless
     * producer from leaking them into a wider load. */
    bits = arg->bits;
    if (arg->bits_size < 8)
      bits &= (UINT64_C(1) << (8 * arg->bits_size)) - 1;
    slots[n].u64 = bits;
    pointers[n] = &slots[n];
    ++n;
  }

  if (kernel->signature) {
    size_t given = n;
    /* Count the rest too when the loop stopped early, so the message gives
     * the real number. */
    for (; i < num_args; ++i)
      given += args[i] && !args[i]->is_constexpr;
    if (given != kernel->num_params)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': %zu argument%s given, but the "
                        "kernel takes %zu (%s)",
                        kernel->name, given, given == 1 ? "" : "s",
                        kernel->num_params, kernel->signature);
  }
  *count = n;
  return NULL;
}

/*===----------------------------------------------------------------------===*\
|* Launches of values (ABI 1.4)                                               *|
\*===----------------------------------------------------------------------===*/

int host_take_template(host_kernel *kernel, size_t num_args,
                       const kjit_arg *const *args) {
  host_arg_slot small_slots[16];
  void *small_pointers[16];
  host_arg_slot *slots = small_slots;
  void **pointers = small_pointers;
  kjit_status *status;
  size_t count = 0, i;
  int taken = 0;
  if (!args || num_args == 0)
    return 0;
  for (i = 0; i < num_args; ++i)
    if (!args[i] || args[i]->is_constexpr)
      return 0; /* values are one per launch argument, none constexpr */
  if (num_args > 16) {
    slots = malloc(num_args * sizeof *slots);
    pointers = malloc(num_args * sizeof *pointers);
  }
  /* The checks of every launch, made once; a template that fails them is
   * not taken, and its launches pass kjit_args and fail with the message. */
  if (slots && pointers) {
    status = host_copy_args(kernel, num_args, args, slots, pointers, &count);
    if (status)
      host_api->status_destroy(status);
    else if (count == num_args && (kernel->value_bytes = malloc(num_args))) {
      for (i = 0; i < num_args; ++i)
        kernel->value_bytes[i] = (uint8_t)args[i]->bits_size;
      kernel->num_values = num_args;
      taken = 1;
    }
  }
  if (slots != small_slots)
    free(slots);
  if (pointers != small_pointers)
    free(pointers);
  return taken;
}

kjit_status *host_copy_values(const host_kernel *kernel, size_t num_values,
                              const uint64_t *values, host_arg_slot *slots,
                              void **pointers) {
  size_t i;
  if (!kernel->value_bytes)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': values given, but its load "
                      "took no argument template",
                      kernel->name);
  if (num_values != kernel->num_values)
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': %zu values given, but its load "
                      "took a template of %zu arguments",
                      kernel->name, num_values, kernel->num_values);
  for (i = 0; i < num_values; ++i) {
    uint64_t bits = values[i];
    /* As host_copy_args: the bytes above the storage size are zero by the
     * ABI, and masking keeps a careless producer's out of a wider load. */
    if (kernel->value_bytes[i] < 8)
      bits &= (UINT64_C(1) << (8 * kernel->value_bytes[i])) - 1;
    slots[i].u64 = bits;
    pointers[i] = &slots[i];
  }
  return NULL;
}
