// The annotation says (3, 5); the value is (3, 4).
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3, 4), f32]) -> Tensor![(3, 4), f32] {
            let y: Tensor![(3, 5), f32] = R::exp(x);
            x
        }
    }
}

fn main() {}
