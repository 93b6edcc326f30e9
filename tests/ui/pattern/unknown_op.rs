// A misspelled op in a pattern gets the nearest registered name.
fn main() {
    let _p = relax::pattern!(R::add(R::matmull(x, w), _));
}
