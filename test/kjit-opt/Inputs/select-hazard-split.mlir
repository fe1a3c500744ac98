// Three parts: one that verifies, one MLIR's verifier would crash on (an
// upstream func.func's arith.select with a vector condition and a scalar
// result), and one that does not parse.
func.func @fine(%a: i32) -> i32 {
  return %a : i32
}

// -----

func.func @pick(%c: vector<2xi1>, %a: i32) -> i32 {
  %r = arith.select %c, %a, %a : vector<2xi1>, i32
  return %r : i32
}

// -----

func.func @broken(
