// The function promises f64 but returns f32.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), f32]) -> Tensor![(3,), f64] {
            R::exp(x)
        }
    }
}

fn main() {}
