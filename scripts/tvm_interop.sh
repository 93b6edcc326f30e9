#!/usr/bin/env bash
# TVMScript interop with TVM, both ways, over every round-trip text of the
# repository (relax-core/tests/roundtrip/*.py): TVM must parse what this
# project prints (well formed), and this project must read TVM's reprint as
# the same module. Needs Python 3 and network access for the first run (it
# makes a venv with apache-tvm); nothing in .ci/run needs it.
#   scripts/tvm_interop.sh [files…]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${TVM_VENV:-.venv-tvm}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "apache-tvm==0.27.*" numpy
fi
cargo build --quiet --example tvmscript
TARGET="${CARGO_TARGET_DIR:-target}"
if [ "$#" -eq 0 ]; then
    set -- relax-core/tests/roundtrip/*.py
fi
"$VENV/bin/python" scripts/tvm_interop.py "$TARGET/debug/examples/tvmscript" "$@"
