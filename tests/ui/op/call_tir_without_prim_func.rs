// call_tir needs a PrimFunc, which the DSL cannot define yet.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(4,), f32]) -> Tensor![(4,), f32] {
            R::call_tir(add_one, (x,), out = Tensor![(4,), f32])
        }
    }
}

fn main() {}
