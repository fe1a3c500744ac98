/*===- Cpu.h - the CPU host kernels are built for -----------------*- C -*-===*\
|*                                                                            *|
|* The compiler builds host kernels for the CPU it runs on (LLVM's           *|
|* getHostCPUName and getHostCPUFeatures), so the backend's fingerprint must  *|
|* name that CPU: a cache entry compiled with AVX-512 must never be loaded    *|
|* on a machine without it. These functions read what LLVM's detection reads *|
|* (cpuid and XCR0) and write it as text.                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_HOST_CPU_H
#define KJIT_PLUGINS_HOST_CPU_H

#include <stddef.h>
#include <stdint.h>

/** Registers of the cpuid leaves LLVM's host detection reads, in the order
 *  of host_cpu.words (host_cpu_word_name names them). */
enum {
  HOST_CPU_1_ECX,    /* leaf 1: SSE3 .. AVX, F16C, RDRAND, OSXSAVE */
  HOST_CPU_1_EDX,    /* leaf 1: CMOV, MMX, SSE, SSE2, ... */
  HOST_CPU_7_0_EBX,  /* leaf 7.0: AVX2, BMI, AVX-512 F/DQ/BW/VL/..., SHA */
  HOST_CPU_7_0_ECX,  /* leaf 7.0: AVX-512 VBMI/VNNI/..., GFNI, VAES */
  HOST_CPU_7_0_EDX,  /* leaf 7.0: AVX-512 FP16, AMX, SERIALIZE, ... */
  HOST_CPU_7_1_EAX,  /* leaf 7.1: AVX-VNNI, AVX-512 BF16, ... */
  HOST_CPU_7_1_EDX,  /* leaf 7.1: AVX10, AVX-VNNI-INT8, ... */
  HOST_CPU_D_1_EAX,  /* leaf 0xd.1: XSAVEOPT, XSAVEC, XSAVES */
  HOST_CPU_14_0_EBX, /* leaf 0x14.0: PTWRITE */
  HOST_CPU_19_EBX,   /* leaf 0x19: Key Locker */
  HOST_CPU_24_0_EBX, /* leaf 0x24.0: AVX10 version and vector widths */
  HOST_CPU_X1_ECX,   /* leaf 0x80000001: LAHF, LZCNT, SSE4A, FMA4, XOP */
  HOST_CPU_X1_EDX,   /* leaf 0x80000001: 3DNow!, LM */
  HOST_CPU_X8_EBX,   /* leaf 0x80000008: CLZERO, WBNOINVD */
  HOST_CPU_XCR0_LO,  /* XCR0: the register state the OS saves (AVX, */
  HOST_CPU_XCR0_HI,  /*       AVX-512, AMX are usable only if it does) */
  HOST_CPU_NUM_WORDS
};

/** One CPU's description. Zero where a leaf does not exist. */
typedef struct host_cpu {
  char vendor[13]; /**< "GenuineIntel", "AuthenticAMD", ... (NUL-terminated). */
  unsigned family, model, stepping; /**< From leaf 1, as LLVM combines them. */
  uint32_t words[HOST_CPU_NUM_WORDS];
} host_cpu;

/** Reads the CPU this code runs on. */
void host_cpu_read(host_cpu *cpu);

/** The name of words[i] in host_cpu_describe's text ("1.ecx", "xcr0.lo"). */
const char *host_cpu_word_name(int i);

/** Writes `cpu` as text (vendor, family/model/stepping, every word in hex)
 *  into out (NUL-terminated, truncated to size) and returns the length the
 *  whole text has, like snprintf. Equal descriptions give equal text; any
 *  difference gives a different text. */
size_t host_cpu_describe(const host_cpu *cpu, char *out, size_t size);

#endif /* KJIT_PLUGINS_HOST_CPU_H */
