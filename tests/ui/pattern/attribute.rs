// Attributes in a pattern are checked against the op's schema, as in the
// DSL: an attribute the op does not have is an error on it.
fn main() {
    let _p = relax::pattern!(R::sum(x, axes = [1]));
}
