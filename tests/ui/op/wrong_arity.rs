// add takes two arguments.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::add(x)
        }
    }
}

fn main() {}
