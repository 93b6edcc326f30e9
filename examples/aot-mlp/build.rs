//! Compiles the DSL in `src/model.rs` ahead of time: `libmodel.a` and the
//! serialized executables go to OUT_DIR, and the generated `mlp` module
//! runs them instead of compiling at run time.
//!
//! The code targets a generic CPU of the build machine's architecture, so
//! the binary runs on any such machine. `RELAX_AOT_NATIVE=1` opts in to the
//! build machine's own CPU features.

fn main() {
    println!("cargo:rerun-if-env-changed=RELAX_AOT_NATIVE");
    let native = std::env::var("RELAX_AOT_NATIVE").is_ok_and(|v| v == "1");
    relax::aot::Builder::new()
        .file("src/model.rs")
        .native_cpu(native)
        .compile("model");
}
