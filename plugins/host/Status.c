/*===- Status.c - statuses of the host backend --------------------*- C -*-===*\
|*                                                                            *|
|* host_error formats a message and creates the status through the host's    *|
|* API table, which init stores in host_api.                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const kjit_host_api *host_api;

kjit_status *host_error(int32_t code, const char *format, ...) {
  char stack[512];
  char *message = stack;
  kjit_status *status;
  va_list ap;
  int len;
  va_start(ap, format);
  len = vsnprintf(stack, sizeof stack, format, ap);
  va_end(ap);
  if (len < 0)
    return host_api->status_create(code, "host backend: bad message", 25);
  if ((size_t)len >= sizeof stack && (message = malloc((size_t)len + 1))) {
    va_start(ap, format);
    vsnprintf(message, (size_t)len + 1, format, ap);
    va_end(ap);
  } else if (!message) {
    message = stack; /* truncated is better than nothing */
    len = (int)sizeof stack - 1;
  }
  status = host_api->status_create(code, message, (size_t)len);
  if (message != stack)
    free(message);
  return status;
}
