// Both functions of a rewriter are checked like any DSL function.
fn main() {
    let _r = relax::rewriter! {
        fn pattern(a: Tensor![(2, 4), f32], b: Tensor![(2, 4), f32]) -> Tensor![(2, 4), f32] {
            R::add(a, b)
        }
        fn replacement(a: Tensor![(2, 4), f32], b: Tensor![(2, 4), f32]) -> Tensor![(2, 4), f32] {
            R::matmul(a, b)
        }
    };
}
