// `float33` is not a dtype.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), float33]) -> Tensor![(3,), f32] {
            x
        }
    }
}

fn main() {}
