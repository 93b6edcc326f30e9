//! Imports two ONNX models and compiles them ahead of time: `libmodels.a`
//! and the serialized executables (weights included) go to OUT_DIR, with a
//! generated Rust module per model (`RELAX_AOT_MODULE_<name>`).
//!
//! - `models/digits_mlp.onnx`: the main example's digits MLP (written by
//!   `scripts/export_digits_onnx.py`), with a symbolic batch `N`;
//! - `models/squeezenet.onnx`: SqueezeNet 1.0 from the `onnx` package's
//!   light test models (its weights are constant fills);
//! - the two-layer Llama decoder that PyTorch exported with its defaults
//!   (`relax-onnx/tests/data/models/tiny_llama`: weights in
//!   `model.onnx.data`, dynamic batch and sequence axes);
//! - `src/imported_mlp.rs`: the digits MLP again, imported as Rust source
//!   (`relax import models/digits_mlp.onnx -o src/imported_mlp.rs`), whose
//!   weights stay in the file `src/imported_mlp.weights`, read at run time.

fn main() {
    relax::aot::Builder::new()
        .onnx("models/digits_mlp.onnx", "digits_mlp")
        .onnx("models/squeezenet.onnx", "squeezenet")
        .onnx(
            "../../relax-onnx/tests/data/models/tiny_llama/model.onnx",
            "tiny_llama",
        )
        .file("src/imported_mlp.rs")
        .compile("models");
}
