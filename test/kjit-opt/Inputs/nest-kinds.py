"""Prints a kernel module with one declaration nested N deep in one way
MLIR's parsers recurse (test/kjit-opt/parser-recursion-of-every-kind.test):
    python3 nest-kinds.py KIND N > k.mlir
KIND: angle (tuple<tuple<...>>), arrow (tuple<(i32) -> tuple<...>>, whose
'>' of each '->' closes nothing), square ([[...]] in an attribute), paren
(nested function types), negate (- - ... d0 in an affine map), plus
(d0 + d0 + ... in an affine map), set (N arrays, and in the innermost an
affine set of twenty `>=` constraints beside 10 more arrays: its '>'s close
nothing, so the whole nests N + 11 deep)."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
print("kjit.kernel @k(%out: !kjit.ptr<i32>) {\n  kjit.return\n}")
if kind == "angle":
    print("func.func private @f() -> " + "tuple<" * n + "i32" + ">" * n)
elif kind == "arrow":
    print("func.func private @f() -> " + "tuple<(i32) -> " * n + "i32" + ">" * n)
elif kind == "square":
    print("func.func private @f() attributes {a = " + "[" * n + "1" + "]" * n + "}")
elif kind == "paren":
    print("func.func private @f() -> " + "(() -> " * n + "i32" + ")" * n)
elif kind == "negate":
    print("#map = affine_map<(d0) -> (" + "- " * n + "d0)>")
    print("func.func private @f(memref<4xf32, #map>)")
elif kind == "plus":
    print("#map = affine_map<(d0) -> (" + "d0 + " * n + "d0)>")
    print("func.func private @f(memref<4xf32, #map>)")
elif kind == "set":
    print("func.func private @f() attributes {a = " + "[" * n +
          "affine_set<(d0) : (" + ", ".join(["d0 >= 0"] * 20) + ")>, " +
          "[" * 10 + "1" + "]" * 10 + "]" * n + "}")
else:
    sys.exit("unknown kind " + kind)
