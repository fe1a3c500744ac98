/*===- FakeCubin.h - the fake cubin format of the cuda backend's tests ----===*\
|*                                                                            *|
|* What the fake finalizers write and FakeCuda.c loads: the bytes \x7fELF, a  *|
|* 4-byte little-endian length, then that many bytes of text: a header line   *|
|* naming the finalizer and its options, then the PTX (whose ".entry NAME"    *|
|* and "// params NAME S0 S1 ..." lines the fake driver reads). fake-ptxas.py *|
|* writes the same format. fake_report is what each fake finalizer reports   *|
|* when asked to be verbose.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_TEST_CUDABACKEND_FAKECUBIN_H
#define KJIT_TEST_CUDABACKEND_FAKECUBIN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd fake cubin of `head` then `ptx`; its size in *size. */
static unsigned char *fake_cubin(const char *head, const char *ptx,
                                 size_t ptx_size, size_t *size) {
  size_t hl = strlen(head);
  uint32_t len = (uint32_t)(hl + ptx_size);
  unsigned char *cubin = malloc(8 + (size_t)len);
  memcpy(cubin, "\177ELF", 4);
  cubin[4] = (unsigned char)len;
  cubin[5] = (unsigned char)(len >> 8);
  cubin[6] = (unsigned char)(len >> 16);
  cubin[7] = (unsigned char)(len >> 24);
  memcpy(cubin + 8, head, hl);
  memcpy(cubin + 8 + hl, ptx, ptx_size);
  *size = 8 + (size_t)len;
  return cubin;
}

/* A verbose finalizer's report of the PTX (malloc'd, NUL-terminated): the
 * text of each line that starts "// fake-ptxas-info: ", as fake-ptxas.py
 * prints them with -v. */
static char *fake_report(const char *ptx) {
  static const char tag[] = "// fake-ptxas-info: ";
  char *report = calloc(1, strlen(ptx) + 1), *out = report;
  const char *at = ptx;
  while (report && (at = strstr(at, tag))) {
    const char *end = strchr(at, '\n');
    size_t n;
    at += sizeof tag - 1;
    n = end ? (size_t)(end - at) : strlen(at);
    memcpy(out, at, n);
    out += n;
    *out++ = '\n';
    at += n;
  }
  return report;
}

#endif /* KJIT_TEST_CUDABACKEND_FAKECUBIN_H */
