// Two functions named `f`.
relax::module! {
    pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            x
        }
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::exp(x)
        }
    }
}

fn main() {}
