/*===- FormatStatus.c - printf-style statuses for C plugins -------*- C -*-===*\
|*                                                                            *|
|* Formats into a stack buffer and falls back to the heap for long messages. *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FormatStatus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kjit_status *kjit_format_status(const kjit_host_api *api, int32_t code,
                                const char *fallback, const char *format,
                                va_list ap) {
  char stack[1024];
  char *message = stack;
  kjit_status *status;
  va_list again;
  int len;
  va_copy(again, ap);
  len = vsnprintf(stack, sizeof stack, format, ap);
  if (len < 0) {
    va_end(again);
    return api->status_create(code, fallback, strlen(fallback));
  }
  if ((size_t)len >= sizeof stack && (message = malloc((size_t)len + 1)))
    vsnprintf(message, (size_t)len + 1, format, again);
  else if (!message) {
    message = stack; /* truncated is better than nothing */
    len = (int)sizeof stack - 1;
  }
  va_end(again);
  status = api->status_create(code, message, (size_t)len);
  if (message != stack)
    free(message);
  return status;
}
