// A matmul of f16 by f32: without out_dtype the operands must have one
// dtype.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2, 4), f16], w: Tensor![(4, 8), f32]) -> Tensor![(2, 8), f32] {
            R::matmul(x, w)
        }
    }
}

fn main() {}
