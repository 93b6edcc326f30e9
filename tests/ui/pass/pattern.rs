// A pattern written in the DSL matches through bindings, reports names,
// and a name used twice needs one value.
use relax::dpl::Bindings;
use relax::ir::IRModule;

fn main() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((3, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            gv = R.add(lv, lv)
            R.output(gv)
        return gv
"#;
    let m: IRModule = text.parse().unwrap();
    let f = m.get_relax("main").unwrap();
    let b = Bindings::of_function(f);
    let gv = f.body.as_seq().unwrap().blocks[0].bindings[1].value().clone();
    let p = relax::pattern!(R::add(R::matmul(x, w), _) | R::exp(x));
    let found = p.extract(&gv, &b).expect("matches through lv");
    assert_eq!(found.named("w").unwrap().as_var().unwrap().name_hint(), "w");
    assert!(relax::pattern!(R::add(y, y)).matches(&gv, &b));
    assert!(!relax::pattern!(R::add(R::matmul(x, x), _)).matches(&gv, &b));
    // Annotations: `n` binds to 2 at `x` and must be 2 again at the add.
    let typed = relax::pattern!(R::add(
        R::matmul(x: Tensor![(n, k), f32], w: Tensor![(k, k), f32]),
        _: Tensor![(n, 3), f32]
    ));
    assert!(typed.matches(&gv, &b));
    assert!(!relax::pattern!(R::add(R::matmul(x: Tensor![(n, n), f32], w), _)).matches(&gv, &b));
    assert!(!relax::pattern!(R::add(R::matmul(x: Tensor![ndim = 2, f16], w), _)).matches(&gv, &b));
    fma::check();
    attributes();
}

// Attributes: the written ones must match (as the op stores them), the
// others are not checked.
fn attributes() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            gv = R.sum(x, axis=[1], keepdims=False)
            R.output(gv)
        return gv
"#;
    let m: IRModule = text.parse().unwrap();
    let f = m.get_relax("main").unwrap();
    let b = Bindings::of_function(f);
    let gv = f.body.as_seq().unwrap().blocks[0].bindings[0].value().clone();
    assert!(relax::pattern!(R::sum(x, axis = [1])).matches(&gv, &b));
    assert!(relax::pattern!(R::sum(x, axis = [1], keepdims = false)).matches(&gv, &b));
    assert!(!relax::pattern!(R::sum(x, axis = [0])).matches(&gv, &b));
    assert!(!relax::pattern!(R::sum(x, keepdims = true)).matches(&gv, &b));
}

// The seed's EwiseFMA rewrite as a `relax::rewriter!`: a Pass.
mod fma {
    use relax::ir::IRModule;
    use relax::transform::Pass;

    pub fn check() {
        let rewriter = relax::rewriter! {
            fn pattern(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
                R::add(R::multiply(a, b), c)
            }
            fn replacement(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
                R::ewise_fma(a, b, c)
            }
        }
        .expect("a rewriter");
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0
"#;
        let m: IRModule = text.parse().unwrap();
        let out = rewriter.run(m).unwrap();
        assert!(out.to_string().contains("R.ewise_fma(x, y, y)"), "{out}");
        assert!(!out.to_string().contains("R.multiply"), "{out}");
    }
}
