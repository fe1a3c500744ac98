# Counts FFMA, FMUL and FADD in one kernel of a cubin (sm_70 and newer),
# for test/Compiler/cuda-sass.test where cuobjdump is not installed: the
# .text.<kernel> section holds 16-byte instructions whose low 9 bits are
# the opcode (0x23 FFMA, 0x20 FMUL, 0x21 FADD, every operand form). Only
# these three are decoded; cuda-sass-cuobjdump.test checks the same with
# cuobjdump where it exists.
#
#   python3 sass-opcodes.py KERNEL.cubin KERNEL   ->   FFMA=1 FMUL=0 FADD=0
import sys, struct
def sections(data):
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i*shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx]
    def name(off):
        s = data[strtab[4]+off:]
        return s[:s.index(b'\0')].decode()
    return {name(h[0]): data[h[4]:h[4]+h[5]] for h in hdrs}
data = open(sys.argv[1], 'rb').read()
text = sections(data)['.text.' + sys.argv[2]]
ops = {0x023: 'FFMA', 0x020: 'FMUL', 0x021: 'FADD'}
counts = {}
for i in range(0, len(text), 16):
    lo, = struct.unpack_from('<Q', text, i)
    op = ops.get(lo & 0x1ff)
    if op: counts[op] = counts.get(op, 0) + 1
print(' '.join('%s=%d' % (op, counts.get(op, 0)) for op in ('FFMA', 'FMUL', 'FADD')))
