/*===- FakeNvJitLink.c - a scripted nvJitLink for the cuda tests ----------===*\
|*                                                                            *|
|* Built as <fake toolkit>/lib64/libnvJitLink.so.13. Exports the versioned    *|
|* symbols nvJitLink.h's inline wrappers call (__nvJitLinkCreate_13_0, ...).  *|
|* "Links" PTX into the fake cubin format (FakeCubin.h): a header line       *|
|* "fake-cubin by nvJitLink for <options>", then the PTX.                     *|
|* PTX containing "fake-nvjitlink-error" fails in nvJitLinkComplete with an   *|
|* error log, as a real PTX compile error would. With -verbose, its info log  *|
|* is the PTX's report lines (fake_report).                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeCubin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct fake_link {
  char options[256];
  char *ptx;
  size_t ptx_size;
  unsigned char *cubin;
  size_t cubin_size;
  const char *log;
  char *report; /* -verbose */
} fake_link;

EXPORT int __nvJitLinkCreate_13_0(fake_link **h, uint32_t n,
                                  const char **options) {
  fake_link *l = calloc(1, sizeof *l);
  uint32_t i;
  size_t used = 0;
  for (i = 0; i < n; ++i)
    used += (size_t)snprintf(l->options + used, sizeof l->options - used,
                             "%s%s", i ? " " : "", options[i]);
  *h = l;
  return 0;
}

EXPORT int __nvJitLinkDestroy_13_0(fake_link **h) {
  if (*h) {
    free((*h)->ptx);
    free((*h)->cubin);
    free((*h)->report);
    free(*h);
    *h = NULL;
  }
  return 0;
}

EXPORT int __nvJitLinkAddData_13_0(fake_link *l, int type, const void *data,
                                   size_t size, const char *name) {
  (void)name;
  if (type != 2) /* NVJITLINK_INPUT_PTX */
    return 3;    /* NVJITLINK_ERROR_INVALID_INPUT */
  l->ptx = malloc(size + 1);
  memcpy(l->ptx, data, size);
  l->ptx[size] = '\0';
  l->ptx_size = size;
  return 0;
}

EXPORT int __nvJitLinkComplete_13_0(fake_link *l) {
  char head[300];
  if (strstr(l->ptx, "fake-nvjitlink-error")) {
    l->log = "error   : Unresolved extern function '__nv_expf'\n";
    return 4; /* NVJITLINK_ERROR_PTX_COMPILE */
  }
  snprintf(head, sizeof head, "fake-cubin by nvJitLink for %s\n", l->options);
  l->cubin = fake_cubin(head, l->ptx, l->ptx_size, &l->cubin_size);
  if (strstr(l->options, "-verbose"))
    l->report = fake_report(l->ptx);
  return 0;
}

EXPORT int __nvJitLinkGetInfoLogSize_13_0(fake_link *l, size_t *size) {
  *size = l->report ? strlen(l->report) + 1 : 0;
  return 0;
}

EXPORT int __nvJitLinkGetInfoLog_13_0(fake_link *l, char *log) {
  if (l->report)
    strcpy(log, l->report);
  return 0;
}

EXPORT int __nvJitLinkGetLinkedCubinSize_13_0(fake_link *l, size_t *size) {
  *size = l->cubin_size;
  return l->cubin ? 0 : 3;
}

EXPORT int __nvJitLinkGetLinkedCubin_13_0(fake_link *l, void *out) {
  memcpy(out, l->cubin, l->cubin_size);
  return 0;
}

EXPORT int __nvJitLinkGetErrorLogSize_13_0(fake_link *l, size_t *size) {
  *size = l->log ? strlen(l->log) + 1 : 0;
  return 0;
}

EXPORT int __nvJitLinkGetErrorLog_13_0(fake_link *l, char *log) {
  if (l->log)
    strcpy(log, l->log);
  return 0;
}
