//! Renders `src/model.rs.in` once per compiled configuration into
//! `OUT_DIR/model.rs` and compiles it ahead of time with
//! `relax::aot::Builder`.
//!
//! The decoder's dims (hidden size, heads, KV heads, head dim, MLP size,
//! vocabulary, cache capacity) are static per compiled configuration: the
//! DSL's reshapes into heads then check at compile time, and LLVM gets
//! constant loop bounds. Only the token counts `n` (new tokens) and `m`
//! (cached plus new) are symbolic. The number of layers is data: `main.rs`
//! calls the one layer function in a loop. Each entry of `CONFIGS` is one
//! Relax module, `llama_<name>`; `main.rs` picks the one whose dims equal
//! the checkpoint's `config.json`.

use std::fmt::Write as _;

/// (name, hidden, heads, kv heads, head dim, intermediate, vocab, capacity).
const CONFIGS: &[(&str, usize, usize, usize, usize, usize, usize, usize)] = &[
    // scripts/llama_checkpoints.py's "tiny" (the committed test fixture).
    ("tiny", 64, 4, 2, 16, 128, 256, 256),
    // Its "small": grouped-query attention, 8 heads over 2 KV heads.
    ("small", 512, 8, 2, 64, 1408, 4096, 512),
    // Its "base100m".
    ("base100m", 768, 12, 4, 64, 2048, 32000, 512),
];

fn main() {
    let template = std::fs::read_to_string("src/model.rs.in").expect("src/model.rs.in");
    println!("cargo:rerun-if-changed=src/model.rs.in");
    let mut out = String::new();
    for &(name, h, nh, kv, d, i, v, cap) in CONFIGS {
        let text = template
            .replace("__NAME", name)
            .replace("__QD", &(nh * d).to_string())
            .replace("__KD", &(kv * d).to_string())
            .replace("__HALF", &(d / 2).to_string())
            .replace("__G", &(nh / kv).to_string())
            .replace("__NH", &nh.to_string())
            .replace("__KV", &kv.to_string())
            .replace("__H", &h.to_string())
            .replace("__D", &d.to_string())
            .replace("__I", &i.to_string())
            .replace("__V", &v.to_string())
            .replace("__CAP", &cap.to_string());
        writeln!(out, "{text}").unwrap();
    }
    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let path = dir.join("model.rs");
    std::fs::write(&path, out).unwrap();
    println!("cargo:rerun-if-env-changed=RELAX_AOT_NATIVE");
    let native = std::env::var("RELAX_AOT_NATIVE").is_ok_and(|v| v == "1");
    relax::aot::Builder::new()
        .file(&path)
        .native_cpu(native)
        .compile("model");
}
