// Loops are not part of the Relax DSL.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), f32]) -> Tensor![(3,), f32] {
            for _ in 0..3 {}
            x
        }
    }
}

fn main() {}
