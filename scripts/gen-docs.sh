#!/usr/bin/env bash
# Regenerates the reference docs of the kjit dialect and passes from their
# TableGen definitions into docs/generated/ (or the directory given), with
# LLVM 22's mlir-tblgen. test/Docs/generated.test runs it into a temporary
# directory and diffs the result with docs/generated/, so a change to a .td
# file that is not followed by `scripts/gen-docs.sh` fails CI.
#
#   scripts/gen-docs.sh [OUTDIR]      (MLIR_TBLGEN=path overrides the tool)
#
# Not add_mlir_doc: it always passes -allow-hugo-specific-features, whose Hugo
# shortcodes ({{% markdown %}}) plain Markdown viewers print as text, and it
# needs a configured build tree where this needs only mlir-tblgen.
set -euo pipefail

KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$KJIT_ROOT/docs/generated}
TBLGEN=${MLIR_TBLGEN:-/usr/lib/llvm-22/bin/mlir-tblgen}
if ! [ -x "$TBLGEN" ]; then
  echo "gen-docs: $TBLGEN not found; install mlir-22-tools (or set MLIR_TBLGEN)" >&2
  exit 2
fi
mkdir -p "$OUT"
# MLIR's .td files (mlir/IR/OpBase.td, ...) sit beside the tool's LLVM.
MLIR_INCLUDE=${MLIR_INCLUDE:-$(dirname "$TBLGEN")/../include}
INCLUDES=(-I "$MLIR_INCLUDE" -I "$KJIT_ROOT/include" -I "$KJIT_ROOT/lib")

gen() { # OUTPUT BACKEND... TD
  local output=$1
  shift
  "$TBLGEN" "${INCLUDES[@]}" "$@" -o "$OUT/$output"
}
cd "$KJIT_ROOT"
# Paths relative to the tree, so that the generated files never name the
# checkout they were made in.
gen KjitDialect.md -gen-dialect-doc -dialect=kjit include/kjit/Dialect/Kjit/IR/KjitOps.td
gen KjitPasses.md -gen-pass-doc include/kjit/Transforms/Passes.td
# One file per target (include/kjit/Target/<Name>/Passes.td).
for td in include/kjit/Target/*/Passes.td; do
  target=$(basename "$(dirname "$td")")
  gen "Kjit${target}TargetPasses.md" -gen-pass-doc "$td"
done
gen KjitHookPasses.md -gen-pass-doc lib/HookPasses/HookPasses.td
