// A pattern's annotations are checked like the DSL's: a bad dtype is an
// error on it, and a name is annotated once.
fn main() {
    let _p = relax::pattern!(R::exp(x: Tensor![(n, 4), f33]));
    let _q = relax::pattern!(R::add(x: Tensor![(n, 4), f32], x: Tensor![(n, 4), f32]));
}
