// A reshape must keep the number of elements.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3, 4), f32]) -> Tensor![(5, 2), f32] {
            R::reshape(x, R::shape([5, 2]))
        }
    }
}

fn main() {}
