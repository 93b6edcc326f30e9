// Broadcasting (3, 4) with (3, 5) is provably impossible.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3, 4), f32], y: Tensor![(3, 5), f32]) -> Tensor![(3, 4), f32] {
            R::add(x, y)
        }
    }
}

fn main() {}
