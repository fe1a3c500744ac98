#!/usr/bin/env python3
# A stand-in for ptxas (the fake toolkit's bin/ptxas): writes the fake cubin
# format FakeCuda.c loads (\x7fELF, a 4-byte little-endian length, a header
# line naming the options, the PTX). PTX containing "fake-ptxas-error" fails
# as a real ptxas does: a message on stderr and exit status 255. With -v it
# prints the report lines the PTX carries in comments. Each run
# appends its temporary input's directory to $FAKE_PTXAS_RECORD when set, so
# a test can check that the directory is gone afterwards.
import os
import struct
import sys

args = sys.argv[1:]
if "--version" in args:
    print("ptxas: fake, Cuda compilation tools, release 13.0, V13.0.0")
    sys.exit(0)
out = args[args.index("-o") + 1]
source = [a for a in args if a.endswith(".ptx")][0]
options = [a for a in args if a.startswith("-") and a != "-o"]
if os.environ.get("FAKE_PTXAS_RECORD"):
    with open(os.environ["FAKE_PTXAS_RECORD"], "a") as f:
        f.write(os.path.dirname(source) + "\n")
ptx = open(source, "rb").read()
if b"fake-ptxas-error" in ptx:
    sys.stderr.write("ptxas fatal   : Unresolved extern function '__nv_expf'\n")
    sys.exit(255)
# With -v, the lines the PTX names after "// fake-ptxas-info: ", as a real
# ptxas writes its report of each entry.
if "-v" in options:
    for line in ptx.decode(errors="replace").splitlines():
        if line.startswith("// fake-ptxas-info: "):
            print(line[len("// fake-ptxas-info: "):])
body = ("fake-cubin by ptxas for " + " ".join(options) + "\n").encode() + ptx
with open(out, "wb") as f:
    f.write(b"\x7fELF" + struct.pack("<I", len(body)) + body)
