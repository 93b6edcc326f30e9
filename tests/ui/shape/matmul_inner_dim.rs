// matmul's inner dimensions must agree: the error names both shapes.
relax::module! {
    pub mod m {
        #[function]
        pub fn main(x: Tensor![(n, 784), f32], w: Tensor![(128, 785), f32]) -> Tensor![(n, 128), f32] {
            R::dataflow! {
                let lv = R::matmul(x, R::permute_dims(w));
                R::output(lv);
            }
            lv
        }
    }
}

fn main() {}
