// keepdims is a bool.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2, 3), f32]) -> Tensor![(2,), f32] {
            R::sum(x, axis = [1], keepdims = 3)
        }
    }
}

fn main() {}
