//! `IRModule`: global functions by name.
//!
//! 1. Each [`GlobalVar`] (a unique name) maps to a Relax [`Function`], a
//!    loop-level [`PrimFunc`], or an external function by its symbol
//!    (TVM's `ExternFunc` bound as a global, `f = R.ExternFunc("f")` in the
//!    class: a call of it is a call of the host function of that name).
//! 2. Functions are kept sorted by name, the order TVM prints them in.
//! 3. Immutable in use: passes build a new module (`with_function`), and
//!    cloning shares every function.
//! 4. Module attributes (TVM's `IRModule::attrs`, printed and parsed as
//!    `I.module_attrs({…})` at the top of the class) go along with the
//!    functions through the passes.
//!
//! `Display` prints TVMScript (`@I.ir_module class Module: …`) and `FromStr`
//! parses it back (see [`crate::printer`] and [`crate::parser`]).

use super::attrs::Attrs;
use super::expr::{Expr, GlobalVar};
use super::function::Function;
use super::struct_info::StructInfo;
use crate::tir::PrimFunc;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A module-level function.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseFunc {
    /// A Relax function.
    Relax(Function),
    /// A loop-level function.
    Prim(PrimFunc),
    /// An external function, by its symbol (TVM's `ExternFunc` as a
    /// module-level function).
    Extern(String),
}

impl BaseFunc {
    /// Its StructInfo as a value.
    pub fn struct_info(&self) -> StructInfo {
        match self {
            BaseFunc::Relax(f) => f.struct_info(),
            BaseFunc::Prim(f) => f.struct_info(),
            BaseFunc::Extern(symbol) => Expr::extern_func(symbol.clone())
                .struct_info()
                .cloned()
                .unwrap_or_else(StructInfo::object),
        }
    }
    /// The Relax function, if this is one.
    pub fn as_relax(&self) -> Option<&Function> {
        match self {
            BaseFunc::Relax(f) => Some(f),
            BaseFunc::Prim(_) | BaseFunc::Extern(_) => None,
        }
    }
    /// The PrimFunc, if this is one.
    pub fn as_prim(&self) -> Option<&PrimFunc> {
        match self {
            BaseFunc::Prim(f) => Some(f),
            BaseFunc::Relax(_) | BaseFunc::Extern(_) => None,
        }
    }
}

impl From<Function> for BaseFunc {
    fn from(f: Function) -> Self {
        BaseFunc::Relax(f)
    }
}
impl From<PrimFunc> for BaseFunc {
    fn from(f: PrimFunc) -> Self {
        BaseFunc::Prim(f)
    }
}

/// A Relax program: global functions by name. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IRModule {
    functions: Arc<BTreeMap<GlobalVar, BaseFunc>>,
    attrs: Attrs,
}

impl IRModule {
    /// An empty module.
    pub fn new() -> Self {
        Self::default()
    }
    /// A module from `(name, function)` pairs.
    pub fn from_functions(funcs: impl IntoIterator<Item = (GlobalVar, BaseFunc)>) -> Self {
        IRModule {
            functions: Arc::new(funcs.into_iter().collect()),
            attrs: Attrs::default(),
        }
    }
    /// The module's attributes (`I.module_attrs({…})`).
    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }
    /// This module with its attributes replaced by `attrs`.
    pub fn with_attrs(mut self, attrs: Attrs) -> Self {
        self.attrs = attrs;
        self
    }
    /// Adds or replaces the function `gv`.
    pub fn add(&mut self, gv: GlobalVar, func: impl Into<BaseFunc>) {
        Arc::make_mut(&mut self.functions).insert(gv, func.into());
    }
    /// This module with the function `gv` added or replaced.
    pub fn with_function(&self, gv: GlobalVar, func: impl Into<BaseFunc>) -> Self {
        let mut m = self.clone();
        m.add(gv, func);
        m
    }
    /// Removes the function `gv`, returning it.
    pub fn remove(&mut self, gv: &GlobalVar) -> Option<BaseFunc> {
        Arc::make_mut(&mut self.functions).remove(gv)
    }
    /// The function named `name`.
    pub fn get(&self, name: &str) -> Option<&BaseFunc> {
        self.functions.get(&GlobalVar::new(name))
    }
    /// The Relax function named `name`.
    pub fn get_relax(&self, name: &str) -> Option<&Function> {
        self.get(name).and_then(BaseFunc::as_relax)
    }
    /// The global var named `name`, if the module has it.
    pub fn global_var(&self, name: &str) -> Option<GlobalVar> {
        self.functions
            .get_key_value(&GlobalVar::new(name))
            .map(|(gv, _)| gv.clone())
    }
    /// Whether the module defines `gv`.
    pub fn contains(&self, gv: &GlobalVar) -> bool {
        self.functions.contains_key(gv)
    }
    /// All functions, sorted by name.
    pub fn functions(&self) -> impl Iterator<Item = (&GlobalVar, &BaseFunc)> {
        self.functions.iter()
    }
    /// The number of functions.
    pub fn len(&self) -> usize {
        self.functions.len()
    }
    /// Whether the module is empty.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }
    /// A reference to `gv` as an expression, carrying the function's StructInfo.
    pub fn global_var_expr(&self, gv: &GlobalVar) -> Expr {
        let e = Expr::global_var(gv.clone());
        match self.functions.get(gv) {
            Some(f) => e.with_struct_info(f.struct_info()),
            None => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::{DeadCodeElimination, Pass};

    /// `f = R.ExternFunc("symbol")` in the class: parsed and printed back,
    /// kept by dead-code elimination even when nothing calls it (as TVM
    /// keeps external functions), and a call of the global is a call of
    /// the host function of that symbol.
    #[test]
    fn an_extern_function_is_a_module_function() {
        let text = r#"
@I.ir_module
class Module:
    double = R.ExternFunc("test.module.double")
    unused = R.ExternFunc("test.module.unused")

    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Object:
        cls = Module
        y: R.Object = cls.double(x)
        return y
"#;
        let m: IRModule = text.parse().unwrap();
        assert_eq!(
            m.get("double"),
            Some(&BaseFunc::Extern("test.module.double".into()))
        );
        let printed = m.to_string();
        assert!(
            printed.contains(r#"    double = R.ExternFunc("test.module.double")"#),
            "{printed}"
        );
        let again: IRModule = printed.parse().unwrap();
        crate::ir::structural_equal_report(&m, &again).unwrap();
        let kept = DeadCodeElimination::default().run(m.clone()).unwrap();
        assert!(kept.get("unused").is_some(), "{kept}");

        use relax_runtime::{Tensor, Value, VirtualMachine};
        relax_runtime::packed::register_packed("test.module.double", |args| {
            let t = args[0].as_tensor().ok_or("a tensor")?;
            let v: Vec<f32> = t.to_vec().map_err(|e| e.to_string())?;
            let doubled = v.iter().map(|x| x * 2.0).collect();
            Ok(Value::Tensor(
                Tensor::from_vec(&[2], doubled).map_err(|e| e.to_string())?,
            ))
        });
        let exec = crate::backend::build(&m, &crate::backend::Target::tir_interpreter()).unwrap();
        let x = Value::Tensor(Tensor::from_vec(&[2], vec![1.0f32, 3.0]).unwrap());
        let y = VirtualMachine::new(&exec).call("main", &[x]).unwrap();
        assert_eq!(y.as_tensor().unwrap().to_vec::<f32>().unwrap(), [2.0, 6.0]);
    }
}
