/*===- Cpu.c - the CPU host kernels are built for -----------------*- C -*-===*\
|*                                                                            *|
|* cpuid through GCC's and Clang's header-only <cpuid.h>, XCR0 through       *|
|* xgetbv: nothing is imported, so the plugin still needs only libc.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Cpu.h"

#include <cpuid.h>
#include <stdio.h>
#include <string.h>

static const char *const word_names[HOST_CPU_NUM_WORDS] = {
    "1.ecx",   "1.edx",   "7.0.ebx",  "7.0.ecx", "7.0.edx",  "7.1.eax",
    "7.1.edx", "d.1.eax", "14.0.ebx", "19.ebx",  "24.0.ebx", "x1.ecx",
    "x1.edx",  "x8.ebx",  "xcr0.lo",  "xcr0.hi"};

const char *host_cpu_word_name(int i) {
  return i >= 0 && i < HOST_CPU_NUM_WORDS ? word_names[i] : "?";
}

/* cpuid leaf.sub if the CPU has that leaf; zeros otherwise. */
static void query(unsigned max, unsigned leaf, unsigned sub, unsigned *a,
                  unsigned *b, unsigned *c, unsigned *d) {
  *a = *b = *c = *d = 0;
  if (leaf > max)
    return;
  __cpuid_count(leaf, sub, *a, *b, *c, *d);
}

void host_cpu_read(host_cpu *cpu) {
  unsigned a, b, c, d, max, max_ext;
  memset(cpu, 0, sizeof *cpu);
  max = __get_cpuid_max(0, NULL);
  if (max == 0)
    return; /* no cpuid (not on x86-64): an all-zero description */
  __cpuid(0, max, b, c, d);
  memcpy(cpu->vendor, &b, 4);
  memcpy(cpu->vendor + 4, &d, 4);
  memcpy(cpu->vendor + 8, &c, 4);

  query(max, 1, 0, &a, &b, &c, &d);
  /* Leaf 1 ebx is skipped: it holds the APIC id of the core this thread
   * happens to run on. */
  cpu->words[HOST_CPU_1_ECX] = c;
  cpu->words[HOST_CPU_1_EDX] = d;
  /* Family and model as LLVM's detection computes them (getX86CpuIDAndInfo
   * and detectX86FamilyModel). */
  cpu->family = (a >> 8) & 0xf;
  cpu->model = (a >> 4) & 0xf;
  cpu->stepping = a & 0xf;
  if (cpu->family == 0xf)
    cpu->family += (a >> 20) & 0xff;
  if (cpu->family == 6 || cpu->family >= 0xf)
    cpu->model += ((a >> 16) & 0xf) << 4;

  query(max, 7, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_7_0_EBX] = b;
  cpu->words[HOST_CPU_7_0_ECX] = c;
  cpu->words[HOST_CPU_7_0_EDX] = d;
  if (max >= 7 && a >= 1) {
    query(max, 7, 1, &a, &b, &c, &d);
    cpu->words[HOST_CPU_7_1_EAX] = a;
    cpu->words[HOST_CPU_7_1_EDX] = d;
  }
  query(max, 0xd, 1, &a, &b, &c, &d);
  cpu->words[HOST_CPU_D_1_EAX] = a;
  query(max, 0x14, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_14_0_EBX] = b;
  query(max, 0x19, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_19_EBX] = b;
  query(max, 0x24, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_24_0_EBX] = b;

  max_ext = __get_cpuid_max(0x80000000u, NULL);
  query(max_ext, 0x80000001u, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_X1_ECX] = c;
  cpu->words[HOST_CPU_X1_EDX] = d;
  query(max_ext, 0x80000008u, 0, &a, &b, &c, &d);
  cpu->words[HOST_CPU_X8_EBX] = b;

  /* XCR0 only where the OS enabled xgetbv (leaf 1 ecx bit 27, OSXSAVE). */
  if (cpu->words[HOST_CPU_1_ECX] & (1u << 27)) {
    unsigned lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    cpu->words[HOST_CPU_XCR0_LO] = lo;
    cpu->words[HOST_CPU_XCR0_HI] = hi;
  }
}

size_t host_cpu_describe(const host_cpu *cpu, char *out, size_t size) {
  size_t used;
  int i, n;
  n = snprintf(out, size, "cpu=%s;family=%u;model=%u;stepping=%u",
               cpu->vendor[0] ? cpu->vendor : "unknown", cpu->family,
               cpu->model, cpu->stepping);
  used = n > 0 ? (size_t)n : 0;
  for (i = 0; i < HOST_CPU_NUM_WORDS; ++i) {
    n = snprintf(used < size ? out + used : NULL, used < size ? size - used : 0,
                 ";%s=%08x", word_names[i], (unsigned)cpu->words[i]);
    used += n > 0 ? (size_t)n : 0;
  }
  return used;
}
