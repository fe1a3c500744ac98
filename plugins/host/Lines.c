/*===- Lines.c - a fault's source line from the line table --------*- C -*-===*\
|*                                                                            *|
|* Debug builds of host kernels carry a DWARF line table (.debug_line) that   *|
|* names the .mlir file and the kernel's lines. At load the backend keeps a   *|
|* copy of that section; when a kernel faults, the faulting pc is run through *|
|* the line program to name file:line:col in the report. Only what LLVM       *|
|* emits for these objects is read: DWARF 2 to 4 line tables, 64-bit          *|
|* addresses; anything else (DWARF 5, a damaged table) gives no line, never a *|
|* wrong one. docs/HostBackend.md ("Faults") has the rationale.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line-program opcodes used here (DWARF 4, 6.2.5; no system header
 * of glibc's defines them). */
enum {
  DW_LNS_copy = 1,
  DW_LNS_advance_pc = 2,
  DW_LNS_advance_line = 3,
  DW_LNS_set_file = 4,
  DW_LNS_set_column = 5,
  DW_LNS_const_add_pc = 8,
  DW_LNS_fixed_advance_pc = 9,
  DW_LNE_end_sequence = 1,
  DW_LNE_set_address = 2
};

int host_line_table_copy(const uint8_t *bytes, size_t size, uint8_t **table,
                         size_t *table_size) {
  Elf64_Ehdr eh;
  Elf64_Shdr names;
  uint64_t i;
  *table = NULL;
  *table_size = 0;
  if (size < sizeof eh)
    return 0;
  memcpy(&eh, bytes, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr) ||
      eh.e_shstrndx >= eh.e_shnum)
    return 0;
  memcpy(&names, bytes + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr),
         sizeof names);
  if (names.sh_offset > size || names.sh_size > size - names.sh_offset)
    return 0;
  for (i = 0; i < eh.e_shnum; ++i) {
    static const char wanted[] = ".debug_line";
    Elf64_Shdr sh;
    memcpy(&sh, bytes + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    if (sh.sh_name >= names.sh_size ||
        names.sh_size - sh.sh_name < sizeof wanted ||
        memcmp(bytes + names.sh_offset + sh.sh_name, wanted, sizeof wanted))
      continue;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset > size ||
        sh.sh_size > size - sh.sh_offset || sh.sh_size == 0)
      return 0;
    if (!(*table = malloc(sh.sh_size)))
      return -1;
    memcpy(*table, bytes + sh.sh_offset, sh.sh_size);
    *table_size = sh.sh_size;
    return 0;
  }
  return 0;
}

/* A bounded reader: every read past `end` sets `bad` and yields 0. */
typedef struct reader {
  const uint8_t *at, *end;
  int bad;
} reader;

static uint64_t read_fixed(reader *r, unsigned bytes) {
  uint64_t v = 0;
  unsigned i;
  if (r->bad || (size_t)(r->end - r->at) < bytes) {
    r->bad = 1;
    return 0;
  }
  for (i = 0; i < bytes; ++i) /* DWARF of x86-64: little-endian */
    v |= (uint64_t)r->at[i] << (8 * i);
  r->at += bytes;
  return v;
}

static uint64_t read_uleb(reader *r) {
  uint64_t v = 0;
  unsigned shift = 0;
  for (;;) {
    uint8_t byte = (uint8_t)read_fixed(r, 1);
    if (r->bad)
      return 0;
    if (shift < 64)
      v |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
    if (!(byte & 0x80))
      return v;
  }
}

static int64_t read_sleb(reader *r) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t byte;
  do {
    byte = (uint8_t)read_fixed(r, 1);
    if (r->bad)
      return 0;
    if (shift < 64)
      v |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 64 && (byte & 0x40))
    v |= ~(uint64_t)0 << shift;
  return (int64_t)v;
}

/* A NUL-terminated string in the reader; NULL when it runs past the end. */
static const char *read_string(reader *r) {
  const uint8_t *nul;
  const char *s = (const char *)r->at;
  if (r->bad || !(nul = memchr(r->at, 0, (size_t)(r->end - r->at)))) {
    r->bad = 1;
    return NULL;
  }
  r->at = nul + 1;
  return s;
}

/* The name of file `index` (1-based in DWARF 2-4) of a unit's header. */
static const char *file_name(reader files, uint64_t index) {
  uint64_t i;
  for (i = 1;; ++i) {
    const char *name = read_string(&files);
    if (!name || !*name)
      return NULL;
    if (i == index)
      return name;
    read_uleb(&files); /* directory, time, length */
    read_uleb(&files);
    read_uleb(&files);
  }
}

/* The row state of the line program (DWARF 4, 6.2.2). */
typedef struct row {
  uint64_t address, file, line, column;
} row;

/* Runs one unit's line program; 1 with *found set when a sequence covers
 * pc (the row whose range [address, next address) holds it). */
static int run_unit(reader *unit, uint64_t pc, row *found, const char **name) {
  reader header, files, program;
  uint64_t header_length;
  unsigned version, min_inst, line_range, opcode_base, i;
  int line_base;
  const uint8_t *opcode_lengths;
  row r, prev;
  int have_prev = 0;
  version = (unsigned)read_fixed(unit, 2);
  if (unit->bad || version < 2 || version > 4)
    return 0;
  header_length = read_fixed(unit, 4);
  if (unit->bad || header_length > (uint64_t)(unit->end - unit->at))
    return 0;
  header.at = unit->at;
  header.end = unit->at + header_length;
  header.bad = 0;
  program.at = header.end;
  program.end = unit->end;
  program.bad = 0;
  min_inst = (unsigned)read_fixed(&header, 1);
  if (version >= 4)
    read_fixed(&header, 1); /* maximum_operations_per_instruction: 1 */
  read_fixed(&header, 1);   /* default_is_stmt */
  line_base = (int8_t)read_fixed(&header, 1);
  line_range = (unsigned)read_fixed(&header, 1);
  opcode_base = (unsigned)read_fixed(&header, 1);
  opcode_lengths = header.at;
  for (i = 1; i < opcode_base; ++i)
    read_fixed(&header, 1);
  while (!header.bad) { /* include_directories, ending with "" */
    const char *dir = read_string(&header);
    if (!dir || !*dir)
      break;
  }
  files = header;
  if (header.bad || line_range == 0 || opcode_base == 0)
    return 0;

  memset(&r, 0, sizeof r);
  r.file = r.line = 1;
  while (program.at < program.end && !program.bad) {
    unsigned op = (unsigned)read_fixed(&program, 1);
    int emit = 0, end_sequence = 0;
    if (op >= opcode_base) { /* special opcode */
      unsigned adjusted = op - opcode_base;
      r.address += (uint64_t)(adjusted / line_range) * min_inst;
      r.line += (uint64_t)(int64_t)(line_base + (int)(adjusted % line_range));
      emit = 1;
    } else if (op == 0) { /* extended */
      uint64_t length = read_uleb(&program);
      const uint8_t *next = program.at + length;
      unsigned sub;
      if (program.bad || length == 0 ||
          length > (uint64_t)(program.end - program.at))
        return 0;
      sub = (unsigned)read_fixed(&program, 1);
      if (sub == DW_LNE_end_sequence)
        emit = end_sequence = 1;
      else if (sub == DW_LNE_set_address && length == 9)
        r.address = read_fixed(&program, 8);
      program.at = next; /* define_file, set_discriminator, ...: skipped */
    } else {
      switch (op) {
      case DW_LNS_copy:
        emit = 1;
        break;
      case DW_LNS_advance_pc:
        r.address += read_uleb(&program) * min_inst;
        break;
      case DW_LNS_advance_line:
        r.line += (uint64_t)read_sleb(&program);
        break;
      case DW_LNS_set_file:
        r.file = read_uleb(&program);
        break;
      case DW_LNS_set_column:
        r.column = read_uleb(&program);
        break;
      case DW_LNS_const_add_pc:
        r.address += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
        break;
      case DW_LNS_fixed_advance_pc:
        r.address += read_fixed(&program, 2);
        break;
      default: { /* negate_stmt, set_basic_block, ...: operands skipped */
        unsigned n = opcode_lengths[op - 1];
        while (n--)
          read_uleb(&program);
      }
      }
    }
    if (!emit)
      continue;
    if (have_prev && prev.address <= pc && pc < r.address) {
      *found = prev;
      *name = file_name(files, prev.file);
      return *name != NULL;
    }
    prev = r;
    have_prev = !end_sequence;
    if (end_sequence) {
      memset(&r, 0, sizeof r);
      r.file = r.line = 1;
    }
  }
  return 0;
}

int host_line_lookup(const uint8_t *table, size_t size, uint64_t pc, char *out,
                     size_t out_size) {
  reader all;
  all.at = table;
  all.end = table + size;
  all.bad = 0;
  while (all.at < all.end && !all.bad) {
    uint64_t length = read_fixed(&all, 4);
    reader unit;
    row found;
    const char *name;
    /* 0xffffffff: the 64-bit DWARF format, which LLVM does not emit here. */
    if (all.bad || length >= 0xfffffff0u ||
        length > (uint64_t)(all.end - all.at))
      return 0;
    unit.at = all.at;
    unit.end = all.at + length;
    unit.bad = 0;
    all.at = unit.end;
    /* Line 0 is "no source line" (compiler-generated code). */
    if (run_unit(&unit, pc, &found, &name) && found.line != 0) {
      snprintf(out, out_size, "%s:%llu:%llu", name,
               (unsigned long long)found.line,
               (unsigned long long)found.column);
      return 1;
    }
  }
  return 0;
}
