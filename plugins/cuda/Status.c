/*===- Status.c - statuses, logging and names of the cuda backend -*- C -*-===*\
|*                                                                            *|
|* cuda_error formats a message and creates the status through the host's    *|
|* API table; cuda_verbose logs through the host when KJIT_CUDA_VERBOSE=1;    *|
|* kernel names are interned so that a device can name the kernel it         *|
|* launched last without a lock, even after that kernel was unloaded.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* clock_gettime is POSIX, not C99. */
#define _POSIX_C_SOURCE 200809L

#include "Internal.h"

#include "../common/FormatStatus.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const kjit_host_api *cuda_host_api;

kjit_status *cuda_error(int32_t code, const char *format, ...) {
  kjit_status *status;
  va_list ap;
  va_start(ap, format);
  status = kjit_format_status(cuda_host_api, code, "cuda backend: bad message",
                              format, ap);
  va_end(ap);
  return status;
}

void cuda_verbose(const cuda_instance *self, const char *format, ...) {
  static int on = -1;
  char text[1024];
  va_list ap;
  int len;
  if (on < 0) {
    const char *v = getenv("KJIT_CUDA_VERBOSE");
    on = v && *v && strcmp(v, "0") != 0;
  }
  if (!on || !self || !self->host || !self->host->log)
    return;
  va_start(ap, format);
  len = vsnprintf(text, sizeof text, format, ap);
  va_end(ap);
  if (len < 0)
    return;
  if ((size_t)len >= sizeof text)
    len = (int)sizeof text - 1;
  self->host->log(self->ctx, KJIT_LOG_INFO, text, (size_t)len);
}

uint64_t cuda_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Interned names: a singly linked list, searched only at load. */
typedef struct cuda_name {
  struct cuda_name *next;
  size_t len;
  char text[1];
} cuda_name;

static cuda_name *cuda_names;
static pthread_mutex_t cuda_names_lock = PTHREAD_MUTEX_INITIALIZER;

const char *cuda_intern_name(const char *name, size_t len) {
  cuda_name *n;
  pthread_mutex_lock(&cuda_names_lock);
  for (n = cuda_names; n; n = n->next)
    if (n->len == len && memcmp(n->text, name, len) == 0)
      break;
  if (!n && (n = malloc(sizeof *n + len))) {
    memcpy(n->text, name, len);
    n->text[len] = '\0';
    n->len = len;
    n->next = cuda_names;
    cuda_names = n;
  }
  pthread_mutex_unlock(&cuda_names_lock);
  return n ? n->text : NULL;
}

void cuda_free_names(void) {
  pthread_mutex_lock(&cuda_names_lock);
  while (cuda_names) {
    cuda_name *next = cuda_names->next;
    free(cuda_names);
    cuda_names = next;
  }
  pthread_mutex_unlock(&cuda_names_lock);
}
