"""Writes inputs with control bytes for control-bytes.test: two .npy
files whose headers carry a NUL and an escape sequence, and a copy of a
specialization record (argv[2]) whose kernel name carries both."""
import json
import os
import struct
import sys

out = sys.argv[1]


def npy(header):
    hdr = header.encode("latin1")
    total = (10 + len(hdr) + 1 + 63) // 64 * 64
    hdr += b" " * (total - 10 - len(hdr) - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + b"\0" * 256


with open(os.path.join(out, "nul.npy"), "wb") as f:
    f.write(npy("{'descr': '<f4\x00', 'fortran_order': False, 'shape': (64,), }"))
with open(os.path.join(out, "esc.npy"), "wb") as f:
    f.write(npy("{'descr': '<f4', 'fortran_\x1b]0;pwned\x07order': False, 'shape': (64,), }"))
with open(sys.argv[2]) as f:
    record = json.load(f)
record["name"] = "a\u001b]0;x\u0007\u0000zz"
with open(os.path.join(out, "record.json"), "w") as f:
    json.dump(record, f)
