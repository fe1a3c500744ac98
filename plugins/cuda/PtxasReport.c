/*===- PtxasReport.c - what ptxas says of a kernel, as JSON ---------------===*\
|*                                                                            *|
|* Every finalizer (ptxas -v, nvJitLink -verbose, the driver's JIT linker     *|
|* with CU_JIT_LOG_VERBOSE) writes the same "ptxas info" lines for each entry *|
|* function it assembles:                                                     *|
|*                                                                            *|
|*   ptxas info    : Compiling entry function 'K' for 'sm_90a'                *|
|*   ptxas info    : Function properties for K                                *|
|*       16 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads    *|
|*   ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem ... *|
|*                                                                            *|
|* cuda_ptxas_report turns the lines of one kernel into the JSON object that  *|
|* finalize hands the host (kjit_backend_finalize_args.info). A log that does *|
|* not name the kernel, or whose numbers do not parse, yields nothing: the    *|
|* report is a courtesy, never a reason for a finalize to fail.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line of `text` (size bytes) that starts at `at`: its end. */
static const char *line_end(const char *at, const char *end) {
  const char *nl = memchr(at, '\n', (size_t)(end - at));
  return nl ? nl : end;
}

/* The start of the line after the one at `at` (`end` after the last). */
static const char *next_line(const char *at, const char *end) {
  const char *stop = line_end(at, end);
  return stop < end ? stop + 1 : end;
}

/* First occurrence of `needle` in [at, end), or NULL. */
static const char *find_in(const char *at, const char *end,
                           const char *needle) {
  size_t n = strlen(needle);
  for (; at && (size_t)(end - at) >= n; ++at)
    if (memcmp(at, needle, n) == 0)
      return at;
  return NULL;
}

/* The number written just before `suffix` in [at, end) ("16 bytes spill
 * stores" with suffix " bytes spill stores"), or -1. At most 12 digits. */
static long long number_before(const char *at, const char *end,
                               const char *suffix) {
  const char *s = find_in(at, end, suffix), *first;
  long long value = 0;
  if (!s)
    return -1;
  first = s;
  while (first > at && first[-1] >= '0' && first[-1] <= '9' && s - first < 12)
    --first;
  if (first == s || (first > at && first[-1] >= '0' && first[-1] <= '9'))
    return -1;
  for (; first < s; ++first)
    value = value * 10 + (*first - '0');
  return value;
}

/* The number written just after `prefix` in [at, end) ("Used 255
 * registers" with prefix "Used "), or -1. */
static long long number_after(const char *at, const char *end,
                              const char *prefix) {
  const char *s = find_in(at, end, prefix);
  long long value = 0;
  int digits = 0;
  if (!s)
    return -1;
  for (s += strlen(prefix); s < end && *s >= '0' && *s <= '9' && digits < 12;
       ++s, ++digits)
    value = value * 10 + (*s - '0');
  return digits && (s == end || *s < '0' || *s > '9') ? value : -1;
}

/* Whether [at, end) ends with `kernel` as the line's last word (the
 * "Function properties for K" line), or holds 'K' quoted (the "entry
 * function 'K'" line). */
static int names_kernel(const char *at, const char *end, const char *kernel,
                        size_t kernel_len, int quoted) {
  while (end > at && (end[-1] == '\r' || end[-1] == ' '))
    --end;
  if (quoted) {
    const char *q = find_in(at, end, "entry function '");
    if (!q)
      return 0;
    q += strlen("entry function '");
    return (size_t)(end - q) > kernel_len &&
           memcmp(q, kernel, kernel_len) == 0 && q[kernel_len] == '\'';
  }
  return (size_t)(end - at) > kernel_len &&
         memcmp(end - kernel_len, kernel, kernel_len) == 0 &&
         end[-(long)kernel_len - 1] == ' ';
}

char *cuda_ptxas_report(const char *log, size_t size, const char *kernel,
                        size_t kernel_len, const char *finalizer) {
  const char *end = log + size, *at, *line = NULL;
  long long registers = -1, barriers = -1, smem = -1, frame = -1, stores = -1,
            loads = -1;
  char *json;
  size_t cap = 512;
  int n;
  if (!log || !kernel || kernel_len == 0)
    return NULL;
  /* The kernel's entry line; its figures follow until the next entry. */
  for (at = log; at < end && !line; at = next_line(at, end))
    if (names_kernel(at, line_end(at, end), kernel, kernel_len, 1))
      line = next_line(at, end);
  if (!line)
    return NULL;
  for (at = line; at < end; at = next_line(at, end)) {
    const char *stop = line_end(at, end);
    if (find_in(at, stop, "entry function '"))
      break;
    if (find_in(at, stop, "Function properties for ") &&
        names_kernel(at, stop, kernel, kernel_len, 0)) {
      const char *next = next_line(at, end), *next_end = line_end(next, end);
      frame = number_before(next, next_end, " bytes stack frame");
      stores = number_before(next, next_end, " bytes spill stores");
      loads = number_before(next, next_end, " bytes spill loads");
    } else if (registers < 0 && find_in(at, stop, "Used ")) {
      registers = number_after(at, stop, "Used ");
      barriers = number_after(at, stop, "used ");
      smem = number_before(at, stop, " bytes smem");
    }
  }
  if (registers < 0 || !(json = malloc(cap)))
    return NULL;
  n = snprintf(json, cap, "{\"finalizer\":\"%s\",\"registers\":%lld", finalizer,
               registers);
#define KJIT_REPORT_FIELD(name, value)                                         \
  if ((value) >= 0 && n > 0 && (size_t)n < cap)                                \
  n += snprintf(json + n, cap - (size_t)n, ",\"" name "\":%lld", (value))
  KJIT_REPORT_FIELD("barriers", barriers);
  KJIT_REPORT_FIELD("shared_static_bytes", smem);
  KJIT_REPORT_FIELD("stack_frame_bytes", frame);
  KJIT_REPORT_FIELD("spill_store_bytes", stores);
  KJIT_REPORT_FIELD("spill_load_bytes", loads);
#undef KJIT_REPORT_FIELD
  if (n <= 0 || (size_t)n + 2 > cap) {
    free(json);
    return NULL;
  }
  memcpy(json + n, "}", 2);
  return json;
}
