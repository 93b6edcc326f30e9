// Two parameters named `x`.
relax::module! {
    pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32], x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            x
        }
    }
}

fn main() {}
