// An f16 tensor added to an f32 one: add does not convert, the dtypes must
// agree (cast one with R::astype).
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), f16], y: Tensor![(3,), f32]) -> Tensor![(3,), f32] {
            R::add(x, y)
        }
    }
}

fn main() {}
