//! Expansion cost of the DSL macros: the frontend (parse, lower through the
//! BlockBuilder, infer and check every binding, well_formed) and code
//! generation, on a generated module with 200 bindings — the work
//! `relax::module!` does inside `cargo build`.
//!
//! `cargo bench -p relax-macros --bench expansion` prints the median of 20 runs of each
//! phase; the design's budget is well under 100 ms for the whole expansion.

use relax_core::frontend::{codegen, lower_module_macro};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// A module whose `main` has `bindings` bindings in one dataflow block,
/// cycling through matmul, add, relu and permute_dims on symbolic shapes.
fn module_source(bindings: usize) -> String {
    let mut body = String::new();
    let mut last = "x".to_string();
    for i in 0..bindings {
        let name = format!("lv{i}");
        let value = match i % 4 {
            0 => format!("R::matmul({last}, w)"),
            1 => format!("R::add({last}, b)"),
            2 => format!("R::nn::relu({last})"),
            _ => format!("R::permute_dims(R::permute_dims({last}))"),
        };
        body.push_str(&format!("let {name} = {value};\n"));
        last = name;
    }
    format!(
        "pub mod big {{
            #[function]
            pub fn main(x: Tensor![(n, 64), f32], w: Tensor![(64, 64), f32], b: Tensor![(64,), f32]) -> Tensor![(n, 64), f32] {{
                R::dataflow! {{
                    {body}
                    R::output({last});
                }}
                {last}
            }}
        }}"
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let source = module_source(200);
    let mut lower_times = Vec::new();
    let mut codegen_times = Vec::new();
    for _ in 0..20 {
        let tokens =
            proc_macro2::TokenStream::from_str(&source).expect("the benchmark source tokenizes");
        let start = Instant::now();
        let lowered = match lower_module_macro(tokens) {
            Ok(l) => l,
            Err(errors) => panic!("the benchmark module must lower: {}", errors[0].message),
        };
        lower_times.push(start.elapsed());
        let start = Instant::now();
        let out = codegen::module_tokens(&lowered);
        codegen_times.push(start.elapsed());
        assert!(!out.is_empty());
    }
    let (lower, gen) = (median(lower_times), median(codegen_times));
    println!("expansion of a 200-binding module (median of 20 runs)");
    println!(
        "  frontend (parse, lower, infer, check): {:>8.2} ms",
        lower.as_secs_f64() * 1e3
    );
    println!(
        "  code generation:                       {:>8.2} ms",
        gen.as_secs_f64() * 1e3
    );
    println!(
        "  total:                                 {:>8.2} ms (budget: 100 ms)",
        (lower + gen).as_secs_f64() * 1e3
    );
}
