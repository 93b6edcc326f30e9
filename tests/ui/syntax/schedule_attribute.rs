// `#[schedule(prim_func = schedule_fn)]` takes the path of a function:
// a literal or a closure is an error at its tokens.
relax::module! {
    pub mod m {
        #[function]
        #[schedule(matmul = 3, add = |sch| Ok(()))]
        pub fn main(a: Tensor![(4, 4), f32], b: Tensor![(4, 4), f32]) -> Tensor![(4, 4), f32] {
            R::add(R::matmul(a, b), a)
        }
    }
}

fn main() {}
