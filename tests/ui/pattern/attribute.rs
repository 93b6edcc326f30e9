// Attributes are not part of pattern syntax (yet).
fn main() {
    let _p = relax::pattern!(R::sum(x, axis = [1]));
}
