//! Writes `relax-onnx/src/proto/onnx.rs` from `relax-onnx/proto/onnx.proto`.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let proto = root.join("proto");
    let out = root.join("src/proto");
    std::fs::create_dir_all(&out)?;
    let fds = protox::compile(["onnx.proto"], [&proto])?;
    prost_build::Config::new().out_dir(&out).compile_fds(fds)?;
    println!("wrote {}", out.join("onnx.rs").display());
    Ok(())
}
