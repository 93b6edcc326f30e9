// A model written by `relax import model.onnx -o prelu.rs` (ONNX's PReLU
// with a slope per channel) compiles as it is, and its struct binds the
// weights once: `Prelu::load(path)?.main(&x)` takes only the model's input.
// relax-cli's tests check that `relax import` still writes exactly this file.
include!("imported/prelu.rs");

use relax::ndarray::Array4;

fn main() {
    let bytes = include_bytes!("imported/prelu.weights");
    let path = std::env::temp_dir().join(format!("prelu-{}.weights", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let model = Prelu::load(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let slope: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let x = Array4::from_shape_fn((2, 3, 4, 5), |(n, c, h, w)| {
        (n * 60 + c * 20 + h * 5 + w) as f32 / 10.0 - 6.0
    });
    let y = model.main(&x).unwrap();
    let expected = Array4::from_shape_fn((2, 3, 4, 5), |(n, c, h, w)| {
        let v = x[[n, c, h, w]];
        if v > 0.0 {
            v
        } else {
            slope[c] * v
        }
    });
    assert_eq!(y, expected);
    // The positional function is still there, weights after the inputs.
    let weights = load_weights(std::env::temp_dir().join("missing.weights"));
    assert!(weights.is_err());
}
