mod m {
    #[function]
    fn f(x: Tensor![(n, m), f32], s: Shape![(a, b)], k: i64) -> (Tensor![(n, m), f32], Tensor![ndim = 2, f32]) {
        let y = R::nn::softmax(x, axis = -1);
        let z = R::match_cast(y, Tensor![(n, m), f32]);
        let w = if k > 0 { R::exp(z) } else { R::negative(z) };
        (w, R::sum(x, axis = [1], keepdims = true))
    }
}
