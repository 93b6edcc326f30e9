// The two functions of a rewriter must have the same signature.
fn main() {
    let _r = relax::rewriter! {
        fn pattern(a: Tensor![(n,), f32], b: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            R::add(a, b)
        }
        fn replacement(a: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            R::multiply(a, a)
        }
    };
}
