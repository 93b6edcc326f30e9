// conv2d needs rank-4 data.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3, 32), f32], w: Tensor![(8, 3, 3, 3), f32]) -> Object {
            R::nn::conv2d(x, w)
        }
    }
}

fn main() {}
