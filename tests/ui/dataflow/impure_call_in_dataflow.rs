// A host function call is impure: not allowed inside a dataflow block.
relax::module! {
    pub mod m {
        #[function(pure = false)]
        pub fn main(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::dataflow! {
                let lv = R::call_packed("my.double", x, sinfo = Tensor![(2,), f32]);
                R::output(lv);
            }
            lv
        }
    }
}

fn main() {}
