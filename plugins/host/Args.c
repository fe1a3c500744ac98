/*===- Args.c - launch arguments to the host kernel ABI's storage -*- C -*-===*\
|*                                                                            *|
|* The runtime hands a launch's arguments over as kjit_arg (a signature type  *|
|* string plus an int64, uint64 or double). A host kernel reads args[i] as a  *|
|* pointer to a value of the parameter's C type (HostKernel.h): this file     *|
|* turns the one into the other, including the rounding of fp16 and bf16.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <string.h>

/*===----------------------------------------------------------------------===*\
|* Half-precision rounding                                                    *|
\*===----------------------------------------------------------------------===*/

/* Rounds a double to a binary format with `mant_bits` fraction bits and
 * minimum normal exponent `emin`, to nearest even, and returns the encoding
 * (without the sign). `inf_bits` is the encoding of infinity. Rounding
 * straight from the double's 53-bit significand matters: going through
 * float first rounds twice and is wrong for values just above a tie. */
static uint16_t round_to_half_format(uint64_t bits, int mant_bits, int emin,
                                     uint16_t inf_bits, uint16_t quiet_nan) {
  int exp_field = (int)((bits >> 52) & 0x7ff);
  uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
  uint64_t significand, rounded, rest, halfway;
  int e, shift;
  uint32_t encoded;

  if (exp_field == 0x7ff)
    return fraction ? quiet_nan : inf_bits;
  if (exp_field == 0) /* zero or a double subnormal: far below both formats */
    return 0;
  e = exp_field - 1023;
  significand = fraction | (UINT64_C(1) << 52); /* value = sig * 2^(e-52) */
  /* The result counts units of 2^(max(e, emin) - mant_bits): normal numbers
   * keep mant_bits + 1 significant bits, subnormals fewer. */
  shift = 52 - mant_bits + (e < emin ? emin - e : 0);
  if (shift > 60) /* less than a quarter of the smallest subnormal */
    return 0;
  rounded = significand >> shift;
  rest = significand & ((UINT64_C(1) << shift) - 1);
  halfway = UINT64_C(1) << (shift - 1);
  if (rest > halfway || (rest == halfway && (rounded & 1)))
    ++rounded;
  if (e < emin) /* subnormal; a carry into 1 << mant_bits is the min normal */
    return (uint16_t)rounded;
  /* rounded is in [2^mant_bits, 2^(mant_bits+1)]; adding it to the exponent
   * field minus one folds the implicit bit and a rounding carry in. */
  encoded = ((uint32_t)(e - emin) << mant_bits) + (uint32_t)rounded;
  return encoded >= inf_bits ? inf_bits : (uint16_t)encoded;
}

uint16_t host_double_to_fp16(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return (uint16_t)((bits >> 48) & 0x8000) |
         round_to_half_format(bits, 10, -14, 0x7c00, 0x7e00);
}

uint16_t host_double_to_bf16(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return (uint16_t)((bits >> 48) & 0x8000) |
         round_to_half_format(bits, 7, -126, 0x7f80, 0x7fc0);
}

/*===----------------------------------------------------------------------===*\
|* Signature types                                                            *|
\*===----------------------------------------------------------------------===*/

/* How a signature type is stored. */
typedef enum arg_class {
  ARG_UNSUPPORTED,
  ARG_POINTER,
  ARG_BOOL,
  ARG_SIGNED,
  ARG_UNSIGNED,
  ARG_FP16,
  ARG_BF16,
  ARG_FP32,
  ARG_FP64
} arg_class;

static int type_is(const char *type, size_t len, const char *name) {
  return strlen(name) == len && memcmp(type, name, len) == 0;
}

/* The class of a signature type and, for integers, its width in bits. */
static arg_class classify(const char *type, size_t len, unsigned *bits) {
  static const struct {
    const char *name;
    arg_class cls;
    unsigned bits;
  } scalars[] = {
      {"i1", ARG_BOOL, 1},       {"i8", ARG_SIGNED, 8},
      {"i16", ARG_SIGNED, 16},   {"i32", ARG_SIGNED, 32},
      {"i64", ARG_SIGNED, 64},   {"u1", ARG_BOOL, 1},
      {"u8", ARG_UNSIGNED, 8},   {"u16", ARG_UNSIGNED, 16},
      {"u32", ARG_UNSIGNED, 32}, {"u64", ARG_UNSIGNED, 64},
      {"fp16", ARG_FP16, 16},    {"bf16", ARG_BF16, 16},
      {"fp32", ARG_FP32, 32},    {"fp64", ARG_FP64, 64},
  };
  size_t i;
  *bits = 64;
  /* "*fp32", "*kfp16" (read-only): every pointer is an address. */
  if (len > 1 && type[0] == '*')
    return ARG_POINTER;
  for (i = 0; i < sizeof scalars / sizeof scalars[0]; ++i)
    if (type_is(type, len, scalars[i].name)) {
      *bits = scalars[i].bits;
      return scalars[i].cls;
    }
  return ARG_UNSUPPORTED;
}

static const char *kind_name(int32_t kind) {
  switch (kind) {
  case KJIT_ARG_NONE:
    return "None";
  case KJIT_ARG_INT:
    return "an int value";
  case KJIT_ARG_UINT:
    return "an unsigned int value";
  case KJIT_ARG_FLOAT:
    return "a float value";
  case KJIT_ARG_BOOL:
    return "a bool value";
  case KJIT_ARG_POINTER:
    return "a pointer value";
  case KJIT_ARG_STRING:
    return "a string value";
  default:
    return "a value of unknown kind";
  }
}

/* Number of entries of a comma-separated signature ("" has none). */
static size_t signature_count(const char *signature) {
  size_t n = *signature ? 1 : 0;
  for (; *signature; ++signature)
    n += *signature == ',';
  return n;
}

/* The i-th type of a signature as pointer + length. */
static const char *signature_type(const char *signature, size_t index,
                                  size_t *len) {
  const char *end;
  while (index--)
    signature = strchr(signature, ',') + 1;
  end = strchr(signature, ',');
  *len = end ? (size_t)(end - signature) : strlen(signature);
  return signature;
}

/*===----------------------------------------------------------------------===*\
|* Conversion                                                                 *|
\*===----------------------------------------------------------------------===*/

/* Reads an integer-like argument as a two's-complement 64-bit value and
 * says whether it was given as unsigned (so that range checks are right). */
static int integer_value(const kjit_arg *arg, uint64_t *value,
                         int *is_unsigned) {
  *is_unsigned = arg->kind == KJIT_ARG_UINT;
  if (arg->kind == KJIT_ARG_INT || arg->kind == KJIT_ARG_BOOL)
    *value = (uint64_t)arg->int_value;
  else if (arg->kind == KJIT_ARG_UINT)
    *value = arg->uint_value;
  else
    return 0;
  return 1;
}

/* Whether a value fits the integer type: a silently truncated launch
 * argument would be a wrong result with no error anywhere. */
static int fits(uint64_t value, int is_unsigned, arg_class cls, unsigned bits) {
  int64_t s = (int64_t)value;
  if (cls == ARG_BOOL)
    return value <= 1;
  if (cls == ARG_SIGNED) {
    if (bits == 64)
      return !is_unsigned || value <= (uint64_t)INT64_MAX;
    if (is_unsigned)
      return value < (UINT64_C(1) << (bits - 1));
    return s >= -((int64_t)1 << (bits - 1)) && s < ((int64_t)1 << (bits - 1));
  }
  /* Unsigned types take negative ints only at 64 bits, where Triton's
   * binder never produces one; elsewhere the value must be in range. */
  if (!is_unsigned && s < 0)
    return 0;
  return bits == 64 || value < (UINT64_C(1) << bits);
}

kjit_status *host_convert_args(const host_kernel *kernel, size_t num_args,
                               const kjit_arg *const *args,
                               host_arg_slot *slots, void **pointers,
                               size_t *count) {
  size_t i, n = 0, expected;
  for (i = 0; i < num_args; ++i) {
    const kjit_arg *arg = args ? args[i] : NULL;
    const char *name, *type;
    int name_len, type_len;
    unsigned bits;
    arg_class cls;
    host_arg_slot *slot = &slots[n];
    uint64_t value;
    int is_unsigned;

    if (!arg || !KJIT_HAS_FIELD(arg, kjit_arg, float_value))
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu is missing or "
                        "too old a kjit_arg",
                        kernel->name, i);
    /* Constexpr values are folded into the code; the entry never reads
     * them. The runtime does not pass them, but a caller that does is
     * harmless. */
    if (arg->is_constexpr)
      continue;
    name = arg->name ? arg->name : "";
    name_len = arg->name ? (int)arg->name_len : 0;
    type = arg->type ? arg->type : "";
    type_len = arg->type ? (int)arg->type_len : 0;
    cls = classify(type, (size_t)type_len, &bits);

    if (kernel->signature) {
      size_t want_len;
      const char *want;
      if (n >= signature_count(kernel->signature))
        break; /* counted below */
      want = signature_type(kernel->signature, n, &want_len);
      if (want_len != (size_t)type_len || memcmp(want, type, want_len) != 0)
        return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                          "launch of kernel '%s': argument %zu ('%.*s') has "
                          "type '%.*s', but the kernel was compiled for "
                          "'%.*s'",
                          kernel->name, n, name_len, name, type_len, type,
                          (int)want_len, want);
    }

    memset(slot, 0, sizeof *slot);
    switch (cls) {
    case ARG_UNSUPPORTED:
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': argument %zu ('%.*s') has "
                        "type '%.*s', which the host backend cannot pass",
                        kernel->name, n, name_len, name, type_len, type);
    case ARG_POINTER:
      if (arg->kind == KJIT_ARG_NONE)
        slot->ptr = NULL;
      else if (arg->kind == KJIT_ARG_POINTER || arg->kind == KJIT_ARG_UINT)
        slot->ptr = (void *)(uintptr_t)arg->uint_value;
      else if (arg->kind == KJIT_ARG_INT)
        slot->ptr = (void *)(uintptr_t)arg->int_value;
      else
        goto wrong_kind;
      break;
    case ARG_BOOL:
    case ARG_SIGNED:
    case ARG_UNSIGNED:
      if (!integer_value(arg, &value, &is_unsigned))
        goto wrong_kind;
      if (!fits(value, is_unsigned, cls, bits))
        return host_error(KJIT_STATUS_OUT_OF_RANGE,
                          "launch of kernel '%s': argument %zu ('%.*s') "
                          "value %s%llu does not fit in %.*s",
                          kernel->name, n, name_len, name,
                          !is_unsigned && (int64_t)value < 0 ? "-" : "",
                          !is_unsigned && (int64_t)value < 0
                              ? 0ull - (unsigned long long)value
                              : (unsigned long long)value,
                          type_len, type);
      /* Little-endian: the low bytes of the slot are the narrow value; i1
       * is one byte holding 0 or 1 (the entry loads an i8 and truncates). */
      slot->u64 = bits == 64 ? value : value & ((UINT64_C(1) << bits) - 1);
      break;
    case ARG_FP16:
    case ARG_BF16:
    case ARG_FP32:
    case ARG_FP64: {
      double d;
      if (arg->kind == KJIT_ARG_FLOAT)
        d = arg->float_value;
      else if (arg->kind == KJIT_ARG_INT || arg->kind == KJIT_ARG_BOOL)
        d = (double)arg->int_value;
      else if (arg->kind == KJIT_ARG_UINT)
        d = (double)arg->uint_value;
      else
        goto wrong_kind;
      if (cls == ARG_FP16)
        slot->u16 = host_double_to_fp16(d);
      else if (cls == ARG_BF16)
        slot->u16 = host_double_to_bf16(d);
      else if (cls == ARG_FP32)
        slot->f32 = (float)d; /* the C conversion rounds to nearest even */
      else
        slot->f64 = d;
      break;
    }
    }
    pointers[n] = slot;
    ++n;
    continue;

  wrong_kind:
    return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '%s': argument %zu ('%.*s') of type "
                      "'%.*s' was given %s",
                      kernel->name, n, name_len, name, type_len, type,
                      kind_name(arg->kind));
  }

  if (kernel->signature) {
    size_t given = n;
    expected = signature_count(kernel->signature);
    /* Count the rest too when the loop stopped early, so the message gives
     * the real number. */
    for (; i < num_args; ++i)
      given += args[i] && !args[i]->is_constexpr;
    if (given != expected)
      return host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': %zu argument%s given, but the "
                        "kernel takes %zu (%s)",
                        kernel->name, given, given == 1 ? "" : "s", expected,
                        kernel->signature);
  }
  *count = n;
  return NULL;
}
