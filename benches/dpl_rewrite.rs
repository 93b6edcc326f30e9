//! `cargo bench --bench dpl_rewrite`: the pattern language's cost on a
//! large function, against the cost of building that function.
//!
//! A 10 000-binding function (2 500 repetitions of
//! `relu(multiply(x, y) + z)` and an `exp`) is built with the BlockBuilder;
//! then three patterns rewrite it with `relax::dpl::rewrite_call`:
//! `add(multiply(a, b), c)` → `ewise_fma(a, b, c)` (2 500 matches),
//! `relu(relu(a))` → `relu(a)` and `negative(negative(a))` → `a` (no
//! match). Both are timed in the same run (median of several rounds) and
//! the ratio is printed: matching is linear in the block length for
//! patterns of bounded size, so the rewrite should cost a small multiple of
//! the build at most.

use relax::dpl::{is_op, rewrite_call, wildcard, Pattern};
use relax::ir::{Attrs, DataType, Expr, Function, PrimExpr, StructInfo, Var};
use relax::BlockBuilder;
use std::time::Instant;

const REPEATS: usize = 2500;

fn op(name: &str, args: Vec<Expr>) -> Expr {
    relax::op::lookup(name)
        .expect("a registered op")
        .call(args, &Attrs::new())
        .expect("a well-typed call")
}

fn build() -> Function {
    let t = StructInfo::tensor(vec![PrimExpr::int(16)], DataType::f32());
    let (x, y, z) = (
        Var::new("x", Some(t.clone())),
        Var::new("y", Some(t.clone())),
        Var::new("z", Some(t)),
    );
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone(), y.clone(), z.clone()], |bb| {
        bb.dataflow(|bb| {
            let mut cur = x.to_expr();
            for _ in 0..REPEATS {
                let m = bb.emit(op("relax.multiply", vec![cur.clone(), y.to_expr()]))?;
                let a = bb.emit(op("relax.add", vec![m.to_expr(), z.to_expr()]))?;
                let r = bb.emit(op("relax.nn.relu", vec![a.to_expr()]))?;
                cur = bb.emit(op("relax.exp", vec![r.to_expr()]))?.to_expr();
            }
            Ok(bb.emit_output(cur)?.to_expr())
        })
    })
    .expect("the function builds");
    bb.finalize()
        .expect("a well-formed module")
        .get_relax("main")
        .expect("main")
        .clone()
}

fn rewrite(f: &Function) -> Function {
    let p = |name: &str| is_op(name).expect("a registered op");
    let (a, b, c) = (wildcard(), wildcard(), wildcard());
    let fma = p("relax.add").call([p("relax.multiply").call([a.clone(), b.clone()]), c.clone()]);
    let inner = p("relax.nn.relu").call([wildcard()]);
    let relu2 = p("relax.nn.relu").call([inner.clone()]);
    let neg_arg = wildcard();
    let neg2 = p("relax.negative").call([p("relax.negative").call([neg_arg.clone()])]);
    let arg = |m: &relax::dpl::Match, q: &Pattern| m.get(q).expect("matched").clone();
    let f = rewrite_call(
        &fma,
        |_, m| op("relax.ewise_fma", vec![arg(m, &a), arg(m, &b), arg(m, &c)]),
        f,
    )
    .expect("the fma rewrite");
    let f = rewrite_call(&relu2, |_, m| arg(m, &inner), &f).expect("the relu rewrite");
    rewrite_call(&neg2, |_, m| arg(m, &neg_arg), &f).expect("the negative rewrite")
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let (mut build_s, mut rewrite_s) = (Vec::new(), Vec::new());
    let mut fused = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let f = build();
        build_s.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let out = rewrite(&f);
        rewrite_s.push(t.elapsed().as_secs_f64());
        fused = out
            .body
            .as_seq()
            .expect("a sequence")
            .blocks
            .iter()
            .flat_map(|b| &b.bindings)
            .filter(|b| b.value().call_op_name() == Some("relax.ewise_fma"))
            .count();
    }
    assert_eq!(fused, REPEATS, "every multiply-add became an ewise_fma");
    let (b, r) = (median(build_s), median(rewrite_s));
    println!("bindings                      {}", 4 * REPEATS);
    println!("build with the BlockBuilder   {:>8.1} ms", b * 1e3);
    println!("rewrite with three patterns   {:>8.1} ms", r * 1e3);
    println!("rewrite / build               {:>8.2}", r / b);
}
