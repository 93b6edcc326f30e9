//! The executable: register-based VM code, as in TVM's Relax VM.
//!
//! 1. An [`Executable`] holds functions, a kernel table (an op name and its
//!    attributes per entry), the names of host (packed) functions it calls,
//!    and a constant pool. It is plain data: `Send + Sync`, serializable.
//! 2. A [`VmFunction`] has a register file: parameters arrive in registers
//!    `0..params.len()`. Instructions read [`Arg`]s (a register, a constant,
//!    an immediate) and write one destination register.
//! 3. Symbolic shape dims live in a per-call *shape heap* of `num_slots`
//!    integers. [`Instr::MatchCast`] checks a value against a [`Pattern`]
//!    and binds slots where a symbolic dim first appears; [`SymExpr`]s read
//!    slots to compute shapes and prim values (TVM's `VMShapeLower`).
//! 4. Control flow is `If` (jump to `else_target` when the condition is
//!    false) and `Goto`, with targets as instruction indices in the function.
//!
//! The VM that runs it is in [`crate::vm`]; the compiler that produces it is
//! `relax_core::backend::vm` (`relax::build`).

use crate::data_type::DataType;
use crate::value::Value;

/// A register index.
pub type Reg = u32;

/// An instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// The value in a register.
    Reg(Reg),
    /// A value of the constant pool.
    Const(u32),
    /// An integer immediate (a `Value::Int`).
    Imm(i64),
}

/// A symbolic integer expression over shape-heap slots (a compiled PrimExpr).
#[derive(Clone, Debug, PartialEq)]
pub enum SymExpr {
    /// A literal.
    Const(i64),
    /// The value in a shape-heap slot.
    Slot(u32),
    /// `a + b`
    Add(Box<SymExpr>, Box<SymExpr>),
    /// `a - b`
    Sub(Box<SymExpr>, Box<SymExpr>),
    /// `a * b`
    Mul(Box<SymExpr>, Box<SymExpr>),
    /// `a // b` (floor)
    FloorDiv(Box<SymExpr>, Box<SymExpr>),
    /// `a % b` (floor)
    FloorMod(Box<SymExpr>, Box<SymExpr>),
    /// `min(a, b)`
    Min(Box<SymExpr>, Box<SymExpr>),
    /// `max(a, b)`
    Max(Box<SymExpr>, Box<SymExpr>),
    /// `a == b` (0 or 1)
    Eq(Box<SymExpr>, Box<SymExpr>),
    /// `a != b`
    Ne(Box<SymExpr>, Box<SymExpr>),
    /// `a < b`
    Lt(Box<SymExpr>, Box<SymExpr>),
    /// `a <= b`
    Le(Box<SymExpr>, Box<SymExpr>),
    /// `a > b`
    Gt(Box<SymExpr>, Box<SymExpr>),
    /// `a >= b`
    Ge(Box<SymExpr>, Box<SymExpr>),
    /// `a and b`
    And(Box<SymExpr>, Box<SymExpr>),
    /// `a or b`
    Or(Box<SymExpr>, Box<SymExpr>),
    /// `not a`
    Not(Box<SymExpr>),
    /// `c ? t : f`
    Select(Box<SymExpr>, Box<SymExpr>, Box<SymExpr>),
}

/// How one dimension (or prim value) of a [`Pattern`] is matched.
#[derive(Clone, Debug, PartialEq)]
pub enum DimPattern {
    /// Anything.
    Any,
    /// The first occurrence of a symbolic dim: store the actual value in
    /// `slot`. `name` is the dim's name, for messages.
    Bind {
        /// The shape-heap slot.
        slot: u32,
        /// The symbolic dim's name.
        name: String,
    },
    /// Must equal the value of this expression (a literal, an already bound
    /// dim, or a compound expression).
    Check {
        /// What the dim must equal.
        expr: SymExpr,
        /// How the expression prints (`784`, `n`, `n * 2`), for messages.
        text: String,
    },
}

/// What a value must look like (a compiled StructInfo).
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Any value.
    Object,
    /// A tensor.
    Tensor {
        /// The rank, if known.
        ndim: Option<u32>,
        /// The dtype, if known.
        dtype: Option<DataType>,
        /// The dims, if known (then `ndim` is their count).
        dims: Option<Vec<DimPattern>>,
    },
    /// A shape value.
    Shape {
        /// The rank, if known.
        ndim: Option<u32>,
        /// The dims, if known.
        dims: Option<Vec<DimPattern>>,
    },
    /// A prim value of a dtype, optionally with a known value.
    Prim {
        /// The dtype (int, float or bool).
        dtype: DataType,
        /// The value, if known.
        value: Option<DimPattern>,
    },
    /// A tuple.
    Tuple(Vec<Pattern>),
    /// A function.
    Func,
}

/// Who is called.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    /// A function of this executable.
    Function(u32),
    /// An entry of the kernel table (an op's reference kernel).
    Kernel(u32),
    /// A host function, by index into [`Executable::packed`].
    Packed(u32),
    /// A host function in destination-passing style (`call_dps_packed`): its
    /// result is checked against the patterns of the call.
    DpsPacked {
        /// Index into [`Executable::packed`].
        name: u32,
        /// The declared outputs.
        outputs: Vec<Pattern>,
    },
    /// A function value held in a register (a closure without captures).
    Closure(Reg),
    /// A native kernel (a PrimFunc) in destination-passing style: the VM
    /// allocates `outputs` (their dims must all be `Check`s, their dtypes
    /// known), calls the kernel with the arguments (tensors) and the values
    /// of `scalars`, and returns the output (a tuple if several). See
    /// [`crate::native`].
    ///
    /// With `inplace_indices` (`call_tir_inplace`), some outputs are
    /// arguments the kernel writes in place instead. Copy on write: the
    /// VM takes each such argument (out of its register when `moved` lists
    /// it, else sharing it), drops the output pool's handle on it, and if
    /// anything else still shares its buffer (another register, a view, a
    /// constant or weight, the caller's own input, external bytes) writes
    /// into a copy of it. So no value anyone else can see ever changes,
    /// and the write costs no copy when the argument's last reference is
    /// the one consumed.
    Native {
        /// Index into [`Executable::natives`].
        symbol: u32,
        /// The outputs to allocate (those whose inplace index is -1).
        outputs: Vec<Pattern>,
        /// The PrimFunc's scalar parameters, over the shape heap.
        scalars: Vec<SymExpr>,
        /// TVM's `inplace_indices`: for each output of the call, the
        /// argument the kernel writes it into, or -1 for the next of
        /// `outputs`. Empty for `call_tir` (every output allocated).
        inplace_indices: Vec<i32>,
        /// The in-place arguments (positions among the call's arguments,
        /// each a register) this call reads for the last time: the VM moves
        /// them out of their registers, which are unset afterwards.
        moved: Vec<u32>,
    },
}

/// One VM instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Instr {
    /// `dst = callee(args…)`
    Call {
        /// Who.
        callee: Callee,
        /// The arguments.
        args: Vec<Arg>,
        /// Where the result goes.
        dst: Reg,
    },
    /// Checks `value` against `pattern`, binding shape-heap slots; an error
    /// names `context` (e.g. "parameter `x` of `main`"), the expected
    /// StructInfo (`expected`, as the DSL prints it) and what was found.
    /// With `dst`, the value is also copied there.
    MatchCast {
        /// The value checked.
        value: Arg,
        /// What it must look like.
        pattern: Pattern,
        /// Where the value goes, if anywhere.
        dst: Option<Reg>,
        /// What is checked, for messages.
        context: String,
        /// The expected StructInfo, printed.
        expected: String,
    },
    /// `dst = R.shape([dims…])`, evaluated over the shape heap.
    MakeShape {
        /// The dims.
        dims: Vec<SymExpr>,
        /// Where the shape goes.
        dst: Reg,
    },
    /// `dst = R.prim_value(value)` of `dtype`.
    MakePrim {
        /// The value.
        value: SymExpr,
        /// Int, float or bool.
        dtype: DataType,
        /// Where it goes.
        dst: Reg,
    },
    /// `dst = (fields…)`
    MakeTuple {
        /// The fields.
        fields: Vec<Arg>,
        /// Where the tuple goes.
        dst: Reg,
    },
    /// `dst = tuple[index]`
    GetItem {
        /// The tuple.
        tuple: Arg,
        /// The field index.
        index: u32,
        /// Where the field goes.
        dst: Reg,
    },
    /// `dst = src`
    Move {
        /// The source.
        src: Arg,
        /// The destination.
        dst: Reg,
    },
    /// Jumps to `else_target` unless `cond` (a bool tensor of rank 0, or a
    /// bool/int prim value) is true.
    If {
        /// The condition.
        cond: Arg,
        /// Where to go when it is false.
        else_target: u32,
    },
    /// Jumps to `target`.
    Goto {
        /// The instruction index.
        target: u32,
    },
    /// Returns `value`.
    Ret {
        /// The result.
        value: Arg,
    },
    /// Drops the value in `reg` (TVM's `kill_tensor`): the register is
    /// unset, and a tensor nothing else holds goes back to the VM's pool
    /// for the next output of its dtype and shape. The compiler emits it
    /// after the last use of a dataflow variable.
    Kill {
        /// The register.
        reg: Reg,
    },
}

/// One compiled Relax function.
#[derive(Clone, Debug, PartialEq)]
pub struct VmFunction {
    /// The function's name.
    pub name: String,
    /// The parameter names, in order (registers `0..n`).
    pub params: Vec<String>,
    /// The register file size.
    pub num_regs: u32,
    /// The shape-heap size.
    pub num_slots: u32,
    /// The code.
    pub instrs: Vec<Instr>,
}

/// An attribute value of a kernel-table entry; symbolic ones are evaluated
/// over the caller's shape heap before the kernel runs.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelAttr {
    /// `None`.
    None,
    /// A bool.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A dtype.
    DataType(DataType),
    /// A list.
    Array(Vec<KernelAttr>),
    /// A symbolic integer, evaluated to `Int` at the call.
    Sym(SymExpr),
}

/// An entry of the kernel table: which op, with which attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelEntry {
    /// The op's registry name (`relax.matmul`).
    pub op: String,
    /// Its attributes, in declaration order.
    pub attrs: Vec<(String, KernelAttr)>,
}

/// A compiled module. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Executable {
    /// The functions; looked up by name by the VM.
    pub functions: Vec<VmFunction>,
    /// The kernel table.
    pub kernels: Vec<KernelEntry>,
    /// The host functions called, by name.
    pub packed: Vec<String>,
    /// The constant pool.
    pub constants: Vec<Value>,
    /// The native kernels called, by symbol.
    pub natives: Vec<String>,
    /// Where the native kernels come from; attached by the compiler, not
    /// serialized (a loaded executable gets it back from
    /// [`Executable::with_library`]).
    pub library: Option<crate::native::LibraryHandle>,
}

impl Executable {
    /// This executable with its native kernels taken from `library`.
    pub fn with_library(
        mut self,
        library: std::sync::Arc<dyn crate::native::NativeLibrary>,
    ) -> Self {
        self.library = Some(crate::native::LibraryHandle(library));
        self
    }

    /// The index of the function named `name`.
    pub fn function_index(&self, name: &str) -> Option<usize> {
        self.functions.iter().position(|f| f.name == name)
    }
}
