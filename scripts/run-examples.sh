#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, install what kjit
# needs, build it, and run the main job over the example kernels.
#
# The main job today: kjit-opt parses and verifies every kernel in examples/
# and prints it back. Later milestones make this launch the kernels.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kjit_install_packages
kjit_build --target kjit-opt

for example in "$KJIT_ROOT"/examples/*.mlir; do
  echo "=== $(basename "$example"): parsed and verified by kjit-opt"
  "$KJIT_BUILD/bin/kjit-opt" "$example"
done
echo "=== all $(ls "$KJIT_ROOT"/examples/*.mlir | wc -l) examples verified"
