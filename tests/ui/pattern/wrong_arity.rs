// A call in a pattern must have the op's number of arguments.
fn main() {
    let _p = relax::pattern!(R::nn::relu(x, y) | R::exp(x));
}
