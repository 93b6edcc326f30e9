// The attribute form reports errors the same way.
#[relax::function]
pub fn double(x: Tensor![(n, 4), f32], w: Tensor![(5, 4), f32]) -> Tensor![(n, 4), f32] {
    R::matmul(x, w)
}

fn main() {}
