//! The model: the seed's MLP for 8×8 digit images (64 inputs, 128 hidden
//! units, 10 classes). build.rs compiles this file ahead of time; the
//! macro still expands here, checks the shapes and generates the typed
//! wrapper `mlp::main`, which runs the linked artifact.

relax::module! {
    /// A two-layer perceptron with a symbolic batch size `n`.
    pub mod mlp {
        #[function]
        pub fn main(
            x: Tensor![(n, 64), f32],
            w0: Tensor![(128, 64), f32],
            b0: Tensor![(128,), f32],
            w1: Tensor![(10, 128), f32],
            b1: Tensor![(10,), f32],
        ) -> Tensor![(n, 10), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0));
                let lv1 = R::add(lv0, b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1));
                let gv = R::add(lv3, b1);
                R::output(gv);
            }
            gv
        }
    }
}
