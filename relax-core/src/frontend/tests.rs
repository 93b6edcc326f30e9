//! Tests of the DSL frontend.

use super::*;
use std::str::FromStr;

fn lower(src: &str) -> Result<Lowered, Vec<FrontendError>> {
    lower_module_macro(TokenStream::from_str(src).expect("test input tokenizes"))
}

#[test]
fn smoke() {
    let r = lower("pub mod m { #[function] pub fn main(x: Tensor![(n, 4), f32]) -> Tensor![(n, 4), f32] { let y = R::add(x, x); y } }");
    match r {
        Ok(l) => println!("{}", l.module),
        Err(e) => panic!("{e:?}"),
    }
}
