#!/usr/bin/env bash
# The README's second command (and CI's, through .ci/run): install what kjit
# needs, build everything, and run every lit and GoogleTest test.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kjit_install_packages
# Formatting first: it takes a second and needs no build.
"$KJIT_ROOT/scripts/check-format.sh"
# Everything: with KJIT_BUNDLE (on when the static LLVM/MLIR archives are
# installed) that includes the device bundle's static compiler module, which
# test/Bundle checks (docs/Bundle.md).
kjit_build
cmake --build "$KJIT_BUILD" --target check-kjit
