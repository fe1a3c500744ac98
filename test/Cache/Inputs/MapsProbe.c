/*===- MapsProbe.c - which libraries a process mapped, seen at exit -------===*\
|*                                                                            *|
|* LD_PRELOAD it: when the process exits, it prints to stderr whether the     *|
|* kjit compiler library, libLLVM and libMLIR are in /proc/self/maps. A warm  *|
|* kjit-run never maps them (test/Cache/warm-start.test).                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdio.h>
#include <string.h>

__attribute__((destructor)) static void probe(void) {
  int compiler = 0, llvm = 0, mlir = 0, runtime = 0;
  char line[4096];
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) {
    fprintf(stderr, "maps: cannot read /proc/self/maps\n");
    return;
  }
  while (fgets(line, sizeof line, maps)) {
    compiler |= strstr(line, "libkjit-compiler") != NULL;
    compiler |= strstr(line, "libkjit-mlir") != NULL;
    llvm |= strstr(line, "libLLVM") != NULL;
    mlir |= strstr(line, "libMLIR") != NULL;
    runtime |= strstr(line, "libkjit-runtime") != NULL;
  }
  fclose(maps);
  fflush(stdout); /* the report comes after what the program printed */
  fprintf(stderr, "maps: runtime=%s compiler=%s libLLVM=%s libMLIR=%s\n",
          runtime ? "mapped" : "absent", compiler ? "mapped" : "absent",
          llvm ? "mapped" : "absent", mlir ? "mapped" : "absent");
}
