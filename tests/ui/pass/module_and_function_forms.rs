// Both macro forms compile, and their wrappers take ndarray arrays and
// return ndarray arrays.
use relax::ndarray::{arr1, Array1};

relax::module! {
    /// Two small functions.
    pub mod small {
        #[function]
        pub fn scale(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            R::multiply(x, x)
        }
    }
}

#[relax::function]
pub fn negate(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
    R::negative(x)
}

fn main() {
    let x: Array1<f32> = arr1(&[1.0, 2.0, 3.0]);
    let y = small::scale(&x).unwrap();
    assert_eq!(y, arr1(&[1.0, 4.0, 9.0]));
    let z = negate(&x).unwrap();
    assert_eq!(z, arr1(&[-1.0, -2.0, -3.0]));
    assert!(negate::module().get_relax("negate").is_some());
    assert!(small::module().get_relax("scale").is_some());
}
