// A misspelled op gets the nearest registered name.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2, 2), f32]) -> Tensor![(2, 2), f32] {
            R::matmull(x, x)
        }
    }
}

fn main() {}
