//! `BindParams`: bind some parameters of a function to constant tensors
//! (TVM's `relax.transform.BindParams`).
//!
//! The bound parameters are removed from the signature and every use becomes
//! a `Constant`. This is how model weights become part of the module, as in
//! the MLC course's MLP (section 7.4); `FoldConstant` can then evaluate what
//! depends only on them (a weight's `permute_dims`) once, at build time.
//!
//! A tensor must match the parameter's StructInfo (dtype, rank, literal
//! dims); symbolic dims of the parameter are bound from the tensor's shape
//! wherever they appear. Binding a name the function does not have, or a
//! tensor that does not fit, is an error.

use super::Pass;
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::arith::Analyzer;
use crate::ir::{Expr, Function, IRModule, PrimExpr, StructInfo, TirVar, Var};
use crate::mutator::replace_vars;
use relax_runtime::{Diagnostic, Error, Tensor};
use std::collections::HashMap;

/// Binds parameters of one function to constants. See the module docs.
pub struct BindParams {
    func: String,
    params: Vec<(String, Tensor)>,
}

impl BindParams {
    /// Binds, in function `func`, each named parameter to its tensor.
    pub fn new(
        func: impl Into<String>,
        params: impl IntoIterator<Item = (String, Tensor)>,
    ) -> Self {
        BindParams {
            func: func.into(),
            params: params.into_iter().collect(),
        }
    }
}

fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("bind-params", message)])
}

impl Pass for BindParams {
    fn name(&self) -> &str {
        "BindParams"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let Some(func) = module.get_relax(&self.func) else {
            return Err(error(format!(
                "BindParams: the module has no Relax function `{}`",
                self.func
            )));
        };
        let mut constants: HashMap<Var, Expr> = HashMap::new();
        let mut dims: HashMap<TirVar, PrimExpr> = HashMap::new();
        for (name, tensor) in &self.params {
            let Some(p) = func.params.iter().find(|p| p.name_hint() == name) else {
                return Err(error(format!(
                    "BindParams: `{}` has no parameter `{name}`",
                    self.func
                )));
            };
            let c = Expr::constant(tensor.clone());
            if let (Some(expected), Some(found)) = (p.struct_info(), c.struct_info()) {
                if struct_info_base_check(expected, found, &Analyzer::new())
                    == BaseCheckResult::FailL0
                {
                    return Err(error(format!(
                        "BindParams: parameter `{name}` of `{}` is {expected}, the tensor is {found}",
                        self.func
                    )));
                }
                bind_dims(expected, tensor.shape(), &mut dims);
            }
            constants.insert(p.clone(), c);
        }
        let params: Vec<Var> = func
            .params
            .iter()
            .filter(|p| !constants.contains_key(*p))
            .cloned()
            .collect();
        let ret = func
            .ret_struct_info
            .map_prim_exprs(&|e| e.substitute_map(&dims));
        let unbound = Function {
            params,
            ret_struct_info: ret,
            ..func.clone()
        };
        // Rebuilt and re-normalized, so every expression's StructInfo sees
        // the constants.
        let e = replace_vars(&Expr::function(unbound), &constants, &module)?;
        let Some(f) = e.as_function() else {
            return Err(error(
                "BindParams: rewriting did not return a function".into(),
            ));
        };
        let gv = module.global_var(&self.func).expect("looked up above");
        Ok(module.with_function(gv, f.clone()))
    }
}

/// Records, for each symbolic dim standing alone in `sinfo`'s shape, the
/// tensor's extent.
fn bind_dims(sinfo: &StructInfo, shape: &[i64], dims: &mut HashMap<TirVar, PrimExpr>) {
    if let Some(values) = sinfo.as_tensor().and_then(|t| t.shape_values()) {
        for (d, &extent) in values.iter().zip(shape) {
            if let Some(v) = d.as_var() {
                dims.insert(v.clone(), PrimExpr::int(extent));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;
    use crate::transform::{DeadCodeElimination, FoldConstant};

    const BEFORE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32"), w: R.Tensor((3, 2), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((2, 3), dtype="float32") = R.permute_dims(w, axes=None)
            gv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            R.output(gv)
        return gv
"#;

    fn w() -> Tensor {
        Tensor::from_vec(&[3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()
    }

    #[test]
    fn binds_then_fold_constant_folds_the_transpose() {
        let m: IRModule = BEFORE.parse().unwrap();
        let bound = BindParams::new("main", [("w".to_string(), w())])
            .run(m)
            .unwrap();
        // As in the build pipeline: fold, then drop what became unused.
        let folded = DeadCodeElimination::default()
            .run(FoldConstant.run(bound).unwrap())
            .unwrap();
        let wt = Tensor::from_vec(&[2, 3], vec![1.0f32, 3.0, 5.0, 2.0, 4.0, 6.0]).unwrap();
        let expected: IRModule = format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, metadata["relax.expr.Constant"][0], out_dtype="void")
            R.output(gv)
        return gv

metadata = {{
    "relax.expr.Constant": [
        R.const({wt}, "float32"),
    ],
}}
"#
        )
        .parse()
        .unwrap();
        if let Err(e) = structural_equal_report(&folded, &expected) {
            panic!("{e}\n{folded}");
        }
    }

    #[test]
    fn wrong_names_and_shapes_are_errors() {
        let m: IRModule = BEFORE.parse().unwrap();
        let e = BindParams::new("main", [("v".to_string(), w())])
            .run(m.clone())
            .unwrap_err();
        assert!(e.to_string().contains("has no parameter `v`"), "{e}");
        let bad = Tensor::from_vec(&[2, 3], vec![0.0f32; 6]).unwrap();
        let e = BindParams::new("main", [("w".to_string(), bad)])
            .run(m.clone())
            .unwrap_err();
        assert!(e.to_string().contains("parameter `w` of `main`"), "{e}");
        let e = BindParams::new("nope", [("w".to_string(), w())])
            .run(m)
            .unwrap_err();
        assert!(e.to_string().contains("no Relax function `nope`"), "{e}");
    }
}
