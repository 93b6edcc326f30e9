pub mod mlp {
    #[function]
    pub fn main(x: Tensor![(n, 784), f32], w0: Tensor![(128, 784), f32], b0: Tensor![(128,), f32], w1: Tensor![(10, 128), f32], b1: Tensor![(10,), f32]) -> Tensor![(n, 10), f32] {
        let lv0 = R::matmul(x, R::permute_dims(w0));
        let lv1 = R::nn::relu(R::add(lv0, b0));
        let gv = R::add(R::matmul(lv1, R::permute_dims(w1)), b1);
        gv
    }
}
