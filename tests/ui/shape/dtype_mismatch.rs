// Both operands of add must have one dtype.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), f32], y: Tensor![(3,), i64]) -> Tensor![(3,), f32] {
            R::add(x, y)
        }
    }
}

fn main() {}
