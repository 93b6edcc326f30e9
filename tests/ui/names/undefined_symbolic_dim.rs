// `m` is used in a binding annotation before anything introduces it.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            let y: Tensor![(m,), f32] = R::exp(x);
            y
        }
    }
}

fn main() {}
