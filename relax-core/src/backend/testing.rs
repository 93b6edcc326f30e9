//! PrimFuncs with bodies for tests, built in Rust (the text parser reads
//! PrimFunc signatures only).

use crate::ir::Attrs;
use crate::ir::{IRModule, PrimExpr, TirVar};
use crate::tir::{Buffer, ForKind, PrimFunc, PrimFuncParam, Stmt};
use relax_runtime::DataType;

/// `B[i] = A[i] + 1` over `A, B: (m,)` float32, `m` symbolic.
pub(crate) fn add_one() -> PrimFunc {
    let f32_ = DataType::f32();
    let m = TirVar::new("m");
    let a = Buffer::new("A", vec![PrimExpr::var(&m)], f32_);
    let b = Buffer::new("B", vec![PrimExpr::var(&m)], f32_);
    let i = TirVar::new("i");
    let body = Stmt::For {
        loop_var: i.clone(),
        min: PrimExpr::int(0),
        extent: PrimExpr::var(&m),
        kind: ForKind::Serial,
        body: Box::new(Stmt::BufferStore {
            buffer: b.clone(),
            value: PrimExpr::load(&a, vec![PrimExpr::var(&i)]) + PrimExpr::float(f32_, 1.0),
            indices: vec![PrimExpr::var(&i)],
        }),
        annotations: Attrs::new(),
    };
    PrimFunc::new(
        vec![PrimFuncParam::Buffer(a), PrimFuncParam::Buffer(b)],
        body,
    )
}

/// `module` with its function `name` replaced by `func`.
pub(crate) fn with_prim_func(mut module: IRModule, name: &str, func: PrimFunc) -> IRModule {
    let gv = module
        .global_var(name)
        .unwrap_or_else(|| panic!("the module has no `{name}`"));
    module.add(gv, func);
    module
}
