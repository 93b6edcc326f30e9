//! `cargo bench --bench dpl_rewrite`: the pattern language's cost on a
//! large function, against the cost of building that function.
//!
//! A 10 000-binding function (2 500 repetitions of
//! `relu(multiply(x, y) + z)` and an `exp`) is built with the BlockBuilder;
//! then three rules rewrite it: `add(multiply(a, b), c)` →
//! `ewise_fma(a, b, c)` (2 500 matches), `relu(relu(a))` → `relu(a)` and
//! `negative(negative(a))` → `a` (no match). The rules run two ways: as one
//! rewrite with three rules (`rewrite_calls`, TVM's `a | b | c`), and as
//! three `rewrite_call`s in sequence. Everything is timed in the same run,
//! interleaved (median of the rounds), and printed with its ratio to the
//! build. The same rewrite on a quarter of the function shows that the
//! cost grows linearly with the block (a quadratic matcher would take 16×
//! as long on four times the bindings, a linear one 4×).

use relax::dpl::{is_op, rewrite_call, rewrite_calls, wildcard, Match, Pattern};
use relax::ir::{Attrs, DataType, Expr, Function, PrimExpr, StructInfo, Var};
use relax::BlockBuilder;
use std::time::Instant;

const REPEATS: usize = 2500;
const ROUNDS: usize = 16;

fn op(name: &str, args: Vec<Expr>) -> Expr {
    relax::op::lookup(name)
        .expect("a registered op")
        .call(args, &Attrs::new())
        .expect("a well-typed call")
}

fn build(repeats: usize) -> Function {
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
            for _ in 0..repeats {
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

/// The three rules' patterns, with the wildcards their rewrites read.
struct Rules {
    fma: Pattern,
    abc: [Pattern; 3],
    relu2: Pattern,
    inner: Pattern,
    neg2: Pattern,
    neg_arg: Pattern,
}

impl Rules {
    fn new() -> Self {
        let p = |name: &str| is_op(name).expect("a registered op");
        let abc = [wildcard(), wildcard(), wildcard()];
        let fma = p("relax.add").call([
            p("relax.multiply").call([abc[0].clone(), abc[1].clone()]),
            abc[2].clone(),
        ]);
        let inner = p("relax.nn.relu").call([wildcard()]);
        let relu2 = p("relax.nn.relu").call([inner.clone()]);
        let neg_arg = wildcard();
        let neg2 = p("relax.negative").call([p("relax.negative").call([neg_arg.clone()])]);
        Rules {
            fma,
            abc,
            relu2,
            inner,
            neg2,
            neg_arg,
        }
    }

    fn fma(&self, m: &Match) -> Expr {
        let args = self.abc.iter().map(|q| arg(m, q)).collect();
        op("relax.ewise_fma", args)
    }
}

fn arg(m: &Match, q: &Pattern) -> Expr {
    m.get(q).expect("matched").clone()
}

/// The three rules as one rewrite.
fn rewrite_once(r: &Rules, f: &Function) -> Function {
    let fma = |_: &Expr, m: &Match| r.fma(m);
    let relu = |_: &Expr, m: &Match| arg(m, &r.inner);
    let neg = |_: &Expr, m: &Match| arg(m, &r.neg_arg);
    rewrite_calls(&[(&r.fma, &fma), (&r.relu2, &relu), (&r.neg2, &neg)], f).expect("the rewrite")
}

/// The three rules as three rewrites in sequence.
fn rewrite_three(r: &Rules, f: &Function) -> Function {
    let f = rewrite_call(&r.fma, |_, m| r.fma(m), f).expect("the fma rewrite");
    let f = rewrite_call(&r.relu2, |_, m| arg(m, &r.inner), &f).expect("the relu rewrite");
    rewrite_call(&r.neg2, |_, m| arg(m, &r.neg_arg), &f).expect("the negative rewrite")
}

fn fused(f: &Function) -> usize {
    f.body
        .as_seq()
        .expect("a sequence")
        .blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .filter(|b| b.value().call_op_name() == Some("relax.ewise_fma"))
        .count()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Times `f`, including dropping what it returns.
fn time<T>(out: &mut Vec<f64>, f: impl FnOnce() -> T) {
    let t = Instant::now();
    drop(f());
    out.push(t.elapsed().as_secs_f64());
}

fn main() {
    let rules = Rules::new();
    let (f, small) = (build(REPEATS), build(REPEATS / 4));
    assert_eq!(
        fused(&rewrite_once(&rules, &f)),
        REPEATS,
        "every multiply-add became an ewise_fma"
    );
    assert_eq!(fused(&rewrite_three(&rules, &f)), REPEATS);
    assert_eq!(fused(&rewrite_once(&rules, &small)), REPEATS / 4);
    // Each timed call's result is dropped at once, so every measurement
    // runs with the same live heap: the input function and nothing else.
    let (mut build_s, mut once_s, mut three_s, mut quarter_s) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The order turns every round: what follows a big free pays for the
    // allocator's clean-up, and that should not always be the same one.
    for round in 0..ROUNDS {
        for step in 0..4 {
            match (round + step) % 4 {
                0 => time(&mut build_s, || build(REPEATS)),
                1 => time(&mut once_s, || rewrite_once(&rules, &f)),
                2 => time(&mut three_s, || rewrite_three(&rules, &f)),
                _ => time(&mut quarter_s, || rewrite_once(&rules, &small)),
            }
        }
    }
    let (b, o, t, q) = (
        median(build_s),
        median(once_s),
        median(three_s),
        median(quarter_s),
    );
    println!("bindings                                 {}", 4 * REPEATS);
    println!(
        "build with the BlockBuilder              {:>8.1} ms",
        b * 1e3
    );
    println!(
        "rewrite, three rules in one pass         {:>8.1} ms   {:.2} × build",
        o * 1e3,
        o / b
    );
    println!(
        "rewrite, three rewrite_calls in sequence {:>8.1} ms   {:.2} × build",
        t * 1e3,
        t / b
    );
    println!(
        "rewrite of a quarter of the function     {:>8.1} ms   (full / quarter = {:.1}; linear is 4)",
        q * 1e3,
        o / q
    );
}
