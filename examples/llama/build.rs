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
//! the checkpoint's `config.json`; `OUT_DIR/dispatch.rs` is the macro
//! that calls a function of the module chosen by name, and `executable`,
//! that module's compiled form.

use std::fmt::Write as _;

mod configs {
    include!("src/configs.rs");
}
use configs::CONFIGS;

fn main() {
    let template = std::fs::read_to_string("src/model.rs.in").expect("src/model.rs.in");
    println!("cargo:rerun-if-changed=src/model.rs.in");
    println!("cargo:rerun-if-changed=src/configs.rs");
    let mut out = String::new();
    // `dispatch!(name, f(args…))`: calls `f` of the module `llama_<name>`.
    let mut dispatch = String::from(
        "macro_rules! dispatch {\n    ($name:expr, $f:ident ( $($arg:expr),* $(,)? )) => {\n        match $name {\n",
    );
    // `executable(name)`: the compiled form of the module `llama_<name>`
    // (for its kernel profile).
    let mut executable = String::from(
        "/// The compiled form of the module of the configuration `name`.\nfn executable(name: &str) -> &'static relax::dsl::ExecutableCache {\n    match name {\n",
    );
    for c in CONFIGS {
        let (name, h, nh, kv, d, i, v, cap) = (
            c.name,
            c.hidden,
            c.heads,
            c.kv_heads,
            c.head_dim,
            c.intermediate,
            c.vocab,
            c.capacity,
        );
        writeln!(
            dispatch,
            "            {name:?} => crate::model::llama_{name}::$f($($arg),*),"
        )
        .unwrap();
        writeln!(
            executable,
            "        {name:?} => &crate::model::llama_{name}::__RELAX_EXECUTABLE,"
        )
        .unwrap();
        // The quantized functions (`layer_q8`, `layer_q4`, `head_q8`,
        // `head_q4`) hold each matrix in groups of 32 along its input axis.
        for (what, k) in [
            ("hidden", h),
            ("heads × head dim", nh * d),
            ("intermediate", i),
        ] {
            assert!(
                k % 32 == 0,
                "configuration {name}: the quantized layers need a {what} that is a multiple of 32, found {k}"
            );
        }
        let text = template
            .replace("__GRP_H", &(h / 32).to_string())
            .replace("__GRP_QD", &(nh * d / 32).to_string())
            .replace("__GRP_I", &(i / 32).to_string())
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
    dispatch.push_str(
        "            other => unreachable!(\"no compiled module {other}\"),\n        }\n    };\n}\n",
    );
    executable
        .push_str("        other => unreachable!(\"no compiled module {other}\"),\n    }\n}\n");
    dispatch.push_str(&executable);
    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(dir.join("dispatch.rs"), dispatch).unwrap();
    let path = dir.join("model.rs");
    std::fs::write(&path, out).unwrap();
    println!("cargo:rerun-if-env-changed=RELAX_AOT_NATIVE");
    let native = std::env::var("RELAX_AOT_NATIVE").is_ok_and(|v| v == "1");
    relax::aot::Builder::new()
        .file(&path)
        .native_cpu(native)
        .compile("model");
}
