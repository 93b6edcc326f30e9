#!/usr/bin/env bash
# A stale AOT artifact must be a build error. build.rs reruns whenever
# src/model.rs changes, so staleness arises when the artifact of `mlp` meets
# another module named `mlp`: this copies the crate, adds such a module to
# main.rs, and expects `cargo build` to fail with the stale-artifact message.
# Usage: examples/aot-mlp/check-stale.sh (CARGO_TARGET_DIR is honoured).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/build.rs" "$here/Cargo.toml" "$here/Cargo.lock" "$here/src" "$work/"
sed -i "s|path = \"../..\"|path = \"$root\"|" "$work/Cargo.toml"
cat >> "$work/src/main.rs" <<'RUST'

mod other {
    relax::module! {
        pub mod mlp {
            #[function]
            pub fn main(x: Tensor![(n, 64), f32]) -> Tensor![(n, 64), f32] {
                let y = R::nn::relu(x);
                y
            }
        }
    }
}
RUST
if out="$(cargo build --manifest-path "$work/Cargo.toml" 2>&1)"; then
    echo "check-stale: a stale artifact was accepted" >&2
    exit 1
fi
if ! grep -q "the AOT artifact of module \`mlp\` is stale" <<<"$out"; then
    echo "check-stale: the build failed for another reason:" >&2
    echo "$out" >&2
    exit 1
fi
echo "check-stale: a stale artifact is a build error, as it should be"
