// Two independent mistakes are both reported; the second function's result
// does not cascade from the first error.
relax::module! {
    pub mod m {
        #[function]
        pub fn f(x: Tensor![(3, 4), f32], y: Tensor![(3, 5), f32]) -> Tensor![(3, 4), f32] {
            let z = R::add(x, y);
            let w = R::exp(z);
            w
        }
        #[function]
        pub fn g(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::sigmod(x)
        }
    }
}

fn main() {}
