//! The pattern AST: what a dataflow pattern can say about an expression
//! (the pattern-language RFC's grammar and TVM's `relax.dpl` patterns).
//!
//! A [`Pattern`] is an immutable shared node; its *identity* matters: a
//! pattern object used twice in one pattern must match the same expression
//! both times, and a match reports what each pattern object matched
//! ([`super::Match::get`]). Patterns are built with the functions of this
//! file (`wildcard()`, `is_op("relax.add")?`, …), the methods of
//! [`Pattern`] (`.call([..])`, `.has_dtype(..)`, …) and the operators `|`
//! (alternatives), `&` (both) and `!` (negation).
//!
//! | pattern | matches |
//! |---|---|
//! | `wildcard()` | anything |
//! | `is_expr(e)` | an expression structurally equal to `e` |
//! | `is_var(name)` / `is_dfv(name)` | a variable / dataflow variable (of that name) |
//! | `is_input()` | a variable with no producer (a parameter): the RFC's input |
//! | `is_gv(name)` / `is_const()` / `is_extern(name)` | a global function / a tensor constant / a packed function |
//! | `is_op(name)?` | the operator, as a call's callee |
//! | `p.call([a, b])` / `p.call_variadic([a])` | a call of `p` with exactly / at least these arguments |
//! | `is_tuple([..])` / `is_tuple_unordered([..])` | a tuple of these fields (in any order) |
//! | `is_tuple_get_item(p, Some(i))` | field `i` (any field with `None`) of a tuple matching `p` |
//! | `is_function([params], body)` / `is_shape(dims)` | a function / a shape expression |
//! | `is_call_tir(name, [..])`, `is_call_packed(..)`, `is_call_dps_packed(..)` | those call forms |
//! | `p.has_struct_info(s)` (`has_type`), `p.has_dtype(d)`, `p.has_shape(dims)` | `p`, with that StructInfo, dtype or (provably equal) shape |
//! | `p.has_attr([(k, v)])` | `p`, a call whose attribute `k` is `v` (`op_pattern` reads the op's kind) |
//! | `p.same_shape_as(q)` | `p`, whose shape is provably that of what `q` matched |
//! | `named(name, p)` | `p`, reported under `name` |
//! | `p | q`, `p & q`, `!p` (`reject(p)`) | either, both, not |
//! | `dominates(parent, path, child)` | the seed's dominator pattern (see the matcher) |

use crate::ir::{AttrValue, DataType, Expr, PrimExpr, StructInfo};
use relax_runtime::{Diagnostic, Error};
use std::fmt;
use std::sync::Arc;

/// A dataflow pattern. See the module docs.
#[derive(Clone)]
pub struct Pattern(pub(super) Arc<PatternKind>);

/// The forms of a pattern. See the module docs.
#[derive(Debug)]
pub enum PatternKind {
    /// Anything.
    Wildcard,
    /// An expression structurally equal to this one.
    Expr(Expr),
    /// A variable, of this name if given.
    Var(Option<String>),
    /// A dataflow variable, of this name if given.
    DataflowVar(Option<String>),
    /// A variable that no binding produces.
    Input,
    /// A global function, of this name if given.
    GlobalVar(Option<String>),
    /// A tensor constant.
    Constant,
    /// A packed function, of this symbol if given.
    ExternFunc(Option<String>),
    /// An operator (`relax.add`).
    Op(String),
    /// A call: callee, arguments, and whether more arguments may follow.
    Call {
        /// The callee.
        op: Pattern,
        /// The (leading) arguments.
        args: Vec<Pattern>,
        /// Whether further arguments are allowed.
        variadic: bool,
    },
    /// A tuple: fields, and whether their order is free.
    Tuple {
        /// The fields.
        fields: Vec<Pattern>,
        /// Whether any order matches.
        unordered: bool,
    },
    /// A field of a tuple (any field with `None`).
    TupleGetItem {
        /// The tuple.
        tuple: Pattern,
        /// The index, if fixed.
        index: Option<usize>,
    },
    /// A function with these parameters and body.
    Function {
        /// The parameters.
        params: Vec<Pattern>,
        /// The body.
        body: Pattern,
    },
    /// A shape expression of these dims.
    Shape(Vec<PrimExpr>),
    /// `p` with StructInfo `s` (symbolic dims of `s` bind on first use).
    StructInfo(Pattern, StructInfo),
    /// `p` with this dtype.
    DataType(Pattern, DataType),
    /// `p` with a shape provably equal to this one.
    ShapeOf(Pattern, Vec<PrimExpr>),
    /// `p`, a call with these attribute values.
    Attr(Pattern, Vec<(String, AttrValue)>),
    /// `p` with the shape of what the other pattern matched.
    SameShapeAs(Pattern, Pattern),
    /// `p`, reported under a name.
    Named(String, Pattern),
    /// Either.
    Or(Pattern, Pattern),
    /// Both.
    And(Pattern, Pattern),
    /// Not.
    Not(Pattern),
    /// The seed's dominator pattern.
    Dominates {
        /// What the dominated node matches.
        parent: Pattern,
        /// What every node between them matches.
        path: Pattern,
        /// What the expression itself matches.
        child: Pattern,
    },
}

impl Pattern {
    fn new(kind: PatternKind) -> Self {
        Pattern(Arc::new(kind))
    }
    /// The form of this pattern.
    pub fn kind(&self) -> &PatternKind {
        &self.0
    }
    /// The identity of this pattern object (shared by its clones).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// A call of this pattern with exactly these arguments (Python's `p(a, b)`).
    pub fn call(&self, args: impl IntoIterator<Item = Pattern>) -> Pattern {
        Pattern::new(PatternKind::Call {
            op: self.clone(),
            args: args.into_iter().collect(),
            variadic: false,
        })
    }
    /// A call of this pattern whose arguments start with these.
    pub fn call_variadic(&self, args: impl IntoIterator<Item = Pattern>) -> Pattern {
        Pattern::new(PatternKind::Call {
            op: self.clone(),
            args: args.into_iter().collect(),
            variadic: true,
        })
    }
    /// This pattern, with StructInfo `s`.
    pub fn has_struct_info(&self, s: StructInfo) -> Pattern {
        Pattern::new(PatternKind::StructInfo(self.clone(), s))
    }
    /// This pattern, with StructInfo `s` (TVM's older name).
    pub fn has_type(&self, s: StructInfo) -> Pattern {
        self.has_struct_info(s)
    }
    /// This pattern, of dtype `dtype`.
    pub fn has_dtype(&self, dtype: DataType) -> Pattern {
        Pattern::new(PatternKind::DataType(self.clone(), dtype))
    }
    /// This pattern, with a shape provably equal to `shape`.
    pub fn has_shape(&self, shape: Vec<PrimExpr>) -> Pattern {
        Pattern::new(PatternKind::ShapeOf(self.clone(), shape))
    }
    /// This pattern, a call with these attribute values.
    pub fn has_attr<K: Into<String>>(
        &self,
        attrs: impl IntoIterator<Item = (K, AttrValue)>,
    ) -> Pattern {
        Pattern::new(PatternKind::Attr(
            self.clone(),
            attrs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        ))
    }
    /// This pattern, with the shape of what `other` matched.
    pub fn same_shape_as(&self, other: &Pattern) -> Pattern {
        Pattern::new(PatternKind::SameShapeAs(self.clone(), other.clone()))
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::BitOr for Pattern {
    type Output = Pattern;
    fn bitor(self, rhs: Pattern) -> Pattern {
        Pattern::new(PatternKind::Or(self, rhs))
    }
}

impl std::ops::BitAnd for Pattern {
    type Output = Pattern;
    fn bitand(self, rhs: Pattern) -> Pattern {
        Pattern::new(PatternKind::And(self, rhs))
    }
}

impl std::ops::Not for Pattern {
    type Output = Pattern;
    fn not(self) -> Pattern {
        reject(self)
    }
}

/// Anything.
pub fn wildcard() -> Pattern {
    Pattern::new(PatternKind::Wildcard)
}
/// An expression structurally equal to `e`.
pub fn is_expr(e: Expr) -> Pattern {
    Pattern::new(PatternKind::Expr(e))
}
/// A variable named `name` (any variable with `None`).
pub fn is_var(name: Option<&str>) -> Pattern {
    Pattern::new(PatternKind::Var(name.map(str::to_string)))
}
/// A dataflow variable named `name` (any with `None`).
pub fn is_dfv(name: Option<&str>) -> Pattern {
    Pattern::new(PatternKind::DataflowVar(name.map(str::to_string)))
}
/// A variable no binding produces (the RFC's input).
pub fn is_input() -> Pattern {
    Pattern::new(PatternKind::Input)
}
/// A global function named `name` (any with `None`).
pub fn is_gv(name: Option<&str>) -> Pattern {
    Pattern::new(PatternKind::GlobalVar(name.map(str::to_string)))
}
/// A tensor constant.
pub fn is_const() -> Pattern {
    Pattern::new(PatternKind::Constant)
}
/// A packed function of symbol `name` (any with `None`).
pub fn is_extern(name: Option<&str>) -> Pattern {
    Pattern::new(PatternKind::ExternFunc(name.map(str::to_string)))
}
/// The operator `name` (`relax.add`; the `relax.` prefix may be left out).
/// An unknown name is an error naming the nearest registered op.
pub fn is_op(name: &str) -> Result<Pattern, Error> {
    let full = if name.starts_with("relax.") {
        name.to_string()
    } else {
        format!("relax.{name}")
    };
    if crate::op::lookup(&full).is_none() {
        let mut d = Diagnostic::new(
            "unknown-op",
            format!("is_op: expected a registered operator, found unknown `{name}`"),
        );
        if let Some(near) = crate::op::nearest(&full) {
            d = d.with_note(format!("did you mean `{near}`?"));
        }
        return Err(Error::Compile(vec![d]));
    }
    Ok(Pattern::new(PatternKind::Op(full)))
}
/// The operator `name`, already checked by `relax::pattern!` at expansion
/// time (the generated code's constructor; not for direct use).
#[doc(hidden)]
pub fn __op(name: &str) -> Pattern {
    Pattern::new(PatternKind::Op(name.to_string()))
}

/// A tuple of these fields, in order.
pub fn is_tuple(fields: impl IntoIterator<Item = Pattern>) -> Pattern {
    Pattern::new(PatternKind::Tuple {
        fields: fields.into_iter().collect(),
        unordered: false,
    })
}
/// A tuple of these fields, in any order.
pub fn is_tuple_unordered(fields: impl IntoIterator<Item = Pattern>) -> Pattern {
    Pattern::new(PatternKind::Tuple {
        fields: fields.into_iter().collect(),
        unordered: true,
    })
}
/// Field `index` (any field with `None`) of a tuple matching `tuple`: the
/// seed's multi-output extension.
pub fn is_tuple_get_item(tuple: Pattern, index: Option<usize>) -> Pattern {
    Pattern::new(PatternKind::TupleGetItem { tuple, index })
}
/// A function with these parameters and body.
pub fn is_function(params: impl IntoIterator<Item = Pattern>, body: Pattern) -> Pattern {
    Pattern::new(PatternKind::Function {
        params: params.into_iter().collect(),
        body,
    })
}
/// A shape expression with dims provably equal to these.
pub fn is_shape(dims: Vec<PrimExpr>) -> Pattern {
    Pattern::new(PatternKind::Shape(dims))
}
/// `R.call_tir(cls.<name>, (args…), …)` (any PrimFunc with `None`).
pub fn is_call_tir(name: Option<&str>, args: impl IntoIterator<Item = Pattern>) -> Pattern {
    let op = Pattern::new(PatternKind::Op("relax.call_tir".into()));
    op.call_variadic([is_gv(name), is_tuple(args)])
}
/// `R.call_dps_packed("<name>", (args…), …)`.
pub fn is_call_dps_packed(name: Option<&str>, args: impl IntoIterator<Item = Pattern>) -> Pattern {
    let op = Pattern::new(PatternKind::Op("relax.call_dps_packed".into()));
    op.call_variadic([is_extern(name), is_tuple(args)])
}
/// `R.call_packed("<name>", args…)`: a call of the packed function.
pub fn is_call_packed(name: Option<&str>, args: impl IntoIterator<Item = Pattern>) -> Pattern {
    is_extern(name).call(args)
}
/// `p`, reported under `name` in a match.
pub fn named(name: &str, p: Pattern) -> Pattern {
    Pattern::new(PatternKind::Named(name.to_string(), p))
}
/// Anything `p` does not match.
pub fn reject(p: Pattern) -> Pattern {
    Pattern::new(PatternKind::Not(p))
}
/// The seed's dominator pattern: the expression matches `child`, and some
/// producer of it matches `parent`, is post-dominated by it in the
/// dataflow block, and every node on every path between them matches `path`.
pub fn dominates(parent: Pattern, path: Pattern, child: Pattern) -> Pattern {
    Pattern::new(PatternKind::Dominates {
        parent,
        path,
        child,
    })
}
