"""Prints a kernel with N nested scf.if regions (deep-nesting.test):
python3 nest.py N > k.mlir. With "quoted", the kernel also carries
2000 brackets in a comment and in a string, which do not nest."""
import sys
d = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
print("kjit.kernel @k(%out: !kjit.ptr<i32>, %c: i1) {\n  %c0 = arith.constant 0 : i32")
print("scf.if %c {\n" * d, end="")
print("kjit.store %c0, %out[%c0] : i32, !kjit.ptr<i32>, i32")
print("}\n" * d, end="")
if len(sys.argv) > 2 and sys.argv[2] == "quoted":
    print("// " + "(" * 2000)
    print('kjit.print "' + "[" * 2000 + '" %c0 : i32')
print("kjit.return\n}")
