// `lv` is not listed in R::output, so it is not visible after the block.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::dataflow! {
                let lv = R::exp(x);
                let gv = R::negative(lv);
                R::output(gv);
            }
            lv
        }
    }
}

fn main() {}
