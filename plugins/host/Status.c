/*===- Status.c - statuses of the host backend --------------------*- C -*-===*\
|*                                                                            *|
|* host_error formats a message and creates the status through the host's    *|
|* API table, which init stores in host_api.                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Status.h"

#include "../common/FormatStatus.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const kjit_host_api *host_api;

kjit_status *host_error(int32_t code, const char *format, ...) {
  kjit_status *status;
  va_list ap;
  va_start(ap, format);
  status = kjit_format_status(host_api, code, "host backend: bad message",
                              format, ap);
  va_end(ap);
  return status;
}
