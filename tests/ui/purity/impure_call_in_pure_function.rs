// An impure call needs #[function(pure = false)].
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            let y = R::call_packed("my.double", x, sinfo = Tensor![(2,), f32]);
            y
        }
    }
}

fn main() {}
