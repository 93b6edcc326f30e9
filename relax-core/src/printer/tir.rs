//! Printing loop-level functions (`@T.prim_func`).
//!
//! A [`PrimFunc`] has only a signature for now, so it prints as its
//! parameters and a body of `T.evaluate(0)`. Buffer dimensions print through
//! the name table like every other PrimExpr; a symbolic var used in a buffer
//! shape that is not a scalar parameter is declared (`n = T.int64()`) at the
//! top of the body, as TVMScript does.

use super::names::sanitize;
use super::prim::{py_tuple, quote};
use super::relax::Printer;
use crate::ir::function::attr;
use crate::ir::prim_expr::TirVar;
use crate::tir::{PrimFunc, PrimFuncParam};

impl Printer {
    /// The PrimFunc `f`, named `name`.
    pub(crate) fn prim_func(&mut self, name: &str, f: &PrimFunc) {
        self.uses_tir = true;
        let global_symbol = f.attrs.get(attr::GLOBAL_SYMBOL).and_then(|v| v.as_str());
        if global_symbol.is_none() {
            self.line("@T.prim_func(private=True)");
        } else {
            self.line("@T.prim_func");
        }
        let mut params = Vec::new();
        let mut shape_vars: Vec<TirVar> = Vec::new();
        for p in &f.params {
            params.push(match p {
                PrimFuncParam::Buffer(b) => {
                    let (shape, dtype) = (b.shape(), b.dtype());
                    let name = self.names.fresh(b.name());
                    let dims: Vec<String> = shape.iter().map(|d| self.prim(d)).collect();
                    for d in shape {
                        d.collect_vars(&mut shape_vars);
                    }
                    format!(
                        "{name}: T.Buffer({}, {})",
                        py_tuple(&dims),
                        quote(&dtype.to_string())
                    )
                }
                PrimFuncParam::Scalar(v) => {
                    format!("{}: T.{}", self.tir_var_name(v), v.dtype())
                }
            });
        }
        self.line(&format!("def {}({}):", sanitize(name), params.join(", ")));
        self.indent += 1;
        let attrs = if global_symbol == Some(name) {
            f.attrs.without(attr::GLOBAL_SYMBOL)
        } else {
            f.attrs.clone()
        };
        if !attrs.is_empty() {
            let dict = self.attr_dict(&attrs);
            self.line(&format!("T.func_attr({dict})"));
        }
        for v in shape_vars {
            let is_param = f
                .params
                .iter()
                .any(|p| matches!(p, PrimFuncParam::Scalar(s) if *s == v));
            if !is_param {
                let name = self.tir_var_name(&v);
                self.line(&format!("{name} = T.{}()", v.dtype()));
            }
        }
        self.line("T.evaluate(0)");
        self.indent -= 1;
    }
}
