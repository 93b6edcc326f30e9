// `helper` is not a function of the module.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            helper(x)
        }
    }
}

fn main() {}
