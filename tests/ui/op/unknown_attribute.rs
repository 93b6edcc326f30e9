// sum has `axis` and `keepdims`, not `axes`.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2, 3), f32]) -> Tensor![(2,), f32] {
            R::sum(x, axes = [1])
        }
    }
}

fn main() {}
