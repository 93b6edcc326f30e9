// The function promises f32 but computes (and returns) f16.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(n, 4), f16], w: Tensor![(4, 4), f16]) -> Tensor![(n, 4), f32] {
            R::nn::relu(R::matmul(x, w))
        }
    }
}

fn main() {}
