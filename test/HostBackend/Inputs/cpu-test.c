/*===- cpu-test.c - the host CPU description, unit-tested ---------*- C -*-===*\
|*                                                                            *|
|* The host backend's fingerprint names the CPU kernels are built for         *|
|* (plugins/host/Cpu.c). This program checks the builder: two reads of this   *|
|* CPU describe it the same, and a copy of the description altered in any one *|
|* part (vendor, family, model, stepping, each cpuid word, XCR0) describes    *|
|* it differently, so that a cache entry built for one CPU never matches      *|
|* another. It prints what describe.test checks.                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Cpu.h"

#include <stdio.h>
#include <string.h>

static char original[1024], other[1024];

static int differs(const host_cpu *cpu, const char *what) {
  host_cpu_describe(cpu, other, sizeof other);
  if (strcmp(original, other) != 0)
    return 1;
  printf("FAIL: altering %s left the description unchanged\n", what);
  return 0;
}

int main(void) {
  host_cpu cpu, again, altered;
  int i, n = 0, total = 0;
  size_t len;
  host_cpu_read(&cpu);
  host_cpu_read(&again);
  len = host_cpu_describe(&cpu, original, sizeof original);
  host_cpu_describe(&again, other, sizeof other);
  if (len >= sizeof original || strcmp(original, other) != 0) {
    printf("FAIL: two reads differ:\n  %s\n  %s\n", original, other);
    return 1;
  }
  printf("cpu description stable over 2 reads\n");

  altered = cpu;
  altered.vendor[0] ^= 1;
  n += differs(&altered, "the vendor"), ++total;
  altered = cpu;
  ++altered.family;
  n += differs(&altered, "the family"), ++total;
  altered = cpu;
  ++altered.model;
  n += differs(&altered, "the model"), ++total;
  altered = cpu;
  ++altered.stepping;
  n += differs(&altered, "the stepping"), ++total;
  for (i = 0; i < HOST_CPU_NUM_WORDS; ++i) {
    altered = cpu;
    altered.words[i] ^= 1u << (i % 32);
    n += differs(&altered, host_cpu_word_name(i)), ++total;
  }
  printf("cpu description differs in %s %d altered copies\n",
         n == total ? "all" : "only", n);
  return n == total ? 0 : 1;
}
