//! Load-time validation of an [`Executable`].
//!
//! An executable may come from bytes that decoded but were corrupted, or be
//! built by hand, so before it runs every index it holds is checked once:
//! registers against `num_regs`, constants against the pool, functions,
//! kernel entries and host-function names against their tables, jump targets
//! against the code, shape-heap slots against `num_slots` (including the
//! symbolic attributes of the kernel entries a function calls), and the
//! nesting depth of expressions, patterns and attributes against
//! [`MAX_NESTING`]. The interpreter still reads everything with checked
//! accessors; validation turns a late, vague failure into an early error
//! that names the function and instruction.

use crate::error::Error;
use crate::executable::{
    Arg, Callee, DimPattern, Executable, Instr, KernelAttr, Pattern, SymExpr, VmFunction,
};
use crate::serialize::MAX_NESTING;
use crate::value::Value;

impl Executable {
    /// Checks that every index in the executable is in range (registers,
    /// constants, functions, kernel entries, host functions, jump targets,
    /// shape-heap slots) and that nothing nests deeper than
    /// [`MAX_NESTING`]. [`crate::VirtualMachine::call`] refuses to run an
    /// executable that fails this check.
    pub fn validate(&self) -> Result<(), Error> {
        for (i, c) in self.constants.iter().enumerate() {
            let func = match c {
                Value::Func(f) => Some(*f),
                Value::Closure(closure) => Some(closure.func),
                _ => None,
            };
            if let Some(f) = func {
                if f as usize >= self.functions.len() {
                    return Err(invalid(format!(
                        "constant {i} refers to function {f}, but there are {} functions",
                        self.functions.len()
                    )));
                }
            }
        }
        for f in &self.functions {
            let check = FunctionCheck {
                exec: self,
                func: f,
            };
            if f.params.len() as u64 > u64::from(f.num_regs) {
                return Err(invalid(format!(
                    "function `{}` has {} parameters but only {} registers",
                    f.name,
                    f.params.len(),
                    f.num_regs
                )));
            }
            for (pc, instr) in f.instrs.iter().enumerate() {
                check
                    .instr(instr)
                    .map_err(|why| invalid(format!("`{}`, instruction {pc}: {why}", f.name)))?;
            }
        }
        Ok(())
    }
}

/// The error for a malformed executable.
pub(super) fn invalid(why: String) -> Error {
    Error::InvalidExecutable(why)
}

/// Checks the instructions of one function.
struct FunctionCheck<'a> {
    exec: &'a Executable,
    func: &'a VmFunction,
}

/// The in-place part of a native call: each index -1 or an argument's
/// position, none repeated, as many -1s as allocated outputs; each moved
/// argument an in-place one held in a register, which no other argument
/// of the call reads.
fn inplace(indices: &[i32], moved: &[u32], allocated: usize, args: &[Arg]) -> Result<(), String> {
    if indices.is_empty() {
        return match moved.is_empty() {
            true => Ok(()),
            false => Err("a native call without in-place outputs moves arguments".into()),
        };
    }
    let fresh = indices.iter().filter(|&&i| i == -1).count();
    if fresh != allocated {
        return Err(format!(
            "a native call has {fresh} inplace indices of -1 but {allocated} outputs to allocate"
        ));
    }
    for (k, &i) in indices.iter().enumerate() {
        if i == -1 {
            continue;
        }
        if i < 0 || i as usize >= args.len() {
            return Err(format!(
                "inplace index {k} is {i}, not -1 or an argument of the {}",
                args.len()
            ));
        }
        if indices[..k].contains(&i) {
            return Err(format!("inplace index {k} repeats argument {i}"));
        }
    }
    for &m in moved {
        let Some(Arg::Reg(r)) = args.get(m as usize) else {
            return Err(format!(
                "moved argument {m} is not an argument held in a register"
            ));
        };
        if !indices.contains(&(m as i32)) {
            return Err(format!("moved argument {m} is not written in place"));
        }
        let readers = args.iter().filter(|a| **a == Arg::Reg(*r)).count();
        if readers != 1 {
            return Err(format!(
                "moved argument {m} (register {r}) is passed {readers} times"
            ));
        }
    }
    Ok(())
}

impl FunctionCheck<'_> {
    fn instr(&self, instr: &Instr) -> Result<(), String> {
        match instr {
            Instr::Call { callee, args, dst } => {
                self.callee(callee)?;
                if let Callee::Native {
                    outputs,
                    inplace_indices,
                    moved,
                    ..
                } = callee
                {
                    inplace(inplace_indices, moved, outputs.len(), args)?;
                }
                args.iter().try_for_each(|a| self.arg(a))?;
                self.reg(*dst)
            }
            Instr::MatchCast {
                value,
                pattern,
                dst,
                ..
            } => {
                self.arg(value)?;
                self.pattern(pattern, 0)?;
                dst.map_or(Ok(()), |d| self.reg(d))
            }
            Instr::MakeShape { dims, dst } => {
                dims.iter().try_for_each(|e| self.sym(e, 0))?;
                self.reg(*dst)
            }
            Instr::MakePrim { value, dtype, dst } => {
                if !(dtype.is_integer() || dtype.is_float()) {
                    return Err(format!("a prim value cannot have dtype {dtype}"));
                }
                self.sym(value, 0)?;
                self.reg(*dst)
            }
            Instr::MakeTuple { fields, dst } => {
                fields.iter().try_for_each(|a| self.arg(a))?;
                self.reg(*dst)
            }
            Instr::GetItem { tuple, dst, .. } => {
                self.arg(tuple)?;
                self.reg(*dst)
            }
            Instr::Move { src, dst } => {
                self.arg(src)?;
                self.reg(*dst)
            }
            Instr::If { cond, else_target } => {
                self.arg(cond)?;
                self.target(*else_target)
            }
            Instr::Goto { target } => self.target(*target),
            Instr::Ret { value } => self.arg(value),
            Instr::Kill { reg } => self.reg(*reg),
        }
    }

    fn callee(&self, callee: &Callee) -> Result<(), String> {
        let exec = self.exec;
        let in_range = |what: &str, i: u32, len: usize| {
            if (i as usize) < len {
                Ok(())
            } else {
                Err(format!("{what} {i} is out of range (there are {len})"))
            }
        };
        match callee {
            Callee::Function(i) => in_range("function", *i, exec.functions.len()),
            Callee::Kernel(k) => {
                in_range("kernel entry", *k, exec.kernels.len())?;
                let entry = &exec.kernels[*k as usize];
                entry
                    .attrs
                    .iter()
                    .try_for_each(|(_, a)| self.attr(a, 0))
                    .map_err(|why| format!("kernel entry {k} ({}): {why}", entry.op))
            }
            Callee::Packed(p) => in_range("host function", *p, exec.packed.len()),
            Callee::DpsPacked { name, outputs } => {
                in_range("host function", *name, exec.packed.len())?;
                outputs.iter().try_for_each(|p| self.pattern(p, 0))
            }
            Callee::Closure(r) => self.reg(*r),
            Callee::Native {
                symbol,
                outputs,
                scalars,
                ..
            } => {
                in_range("native kernel", *symbol, exec.natives.len())?;
                for (i, p) in outputs.iter().enumerate() {
                    self.pattern(p, 0)?;
                    if !allocatable(p) {
                        return Err(format!(
                            "output {i} of native kernel {symbol} is not a tensor of known dtype and dims"
                        ));
                    }
                }
                scalars.iter().try_for_each(|s| self.sym(s, 0))
            }
        }
    }

    fn reg(&self, r: u32) -> Result<(), String> {
        if r < self.func.num_regs {
            Ok(())
        } else {
            Err(format!(
                "register {r} is out of range (the function has {})",
                self.func.num_regs
            ))
        }
    }

    fn arg(&self, a: &Arg) -> Result<(), String> {
        match a {
            Arg::Reg(r) => self.reg(*r),
            Arg::Const(c) if (*c as usize) < self.exec.constants.len() => Ok(()),
            Arg::Const(c) => Err(format!(
                "constant {c} is out of range (the pool has {})",
                self.exec.constants.len()
            )),
            Arg::Imm(_) => Ok(()),
        }
    }

    fn target(&self, t: u32) -> Result<(), String> {
        if (t as usize) < self.func.instrs.len() {
            Ok(())
        } else {
            Err(format!(
                "jump target {t} is out of range (the function has {} instructions)",
                self.func.instrs.len()
            ))
        }
    }

    fn slot(&self, s: u32) -> Result<(), String> {
        if s < self.func.num_slots {
            Ok(())
        } else {
            Err(format!(
                "shape-heap slot {s} is out of range (the function has {})",
                self.func.num_slots
            ))
        }
    }

    fn depth(depth: usize) -> Result<(), String> {
        if depth > MAX_NESTING {
            Err(format!("nesting deeper than {MAX_NESTING} levels"))
        } else {
            Ok(())
        }
    }

    fn sym(&self, e: &SymExpr, depth: usize) -> Result<(), String> {
        Self::depth(depth)?;
        if let SymExpr::Slot(s) = e {
            self.slot(*s)?;
        }
        e.operands().try_for_each(|o| self.sym(o, depth + 1))
    }

    fn dim(&self, p: &DimPattern, depth: usize) -> Result<(), String> {
        match p {
            DimPattern::Any => Ok(()),
            DimPattern::Bind { slot, .. } => self.slot(*slot),
            DimPattern::Check { expr, .. } => self.sym(expr, depth + 1),
        }
    }

    fn pattern(&self, p: &Pattern, depth: usize) -> Result<(), String> {
        Self::depth(depth)?;
        match p {
            Pattern::Object | Pattern::Func => Ok(()),
            Pattern::Tensor { ndim, dims, .. } | Pattern::Shape { ndim, dims } => {
                if let (Some(n), Some(d)) = (ndim, dims) {
                    if *n as usize != d.len() {
                        return Err(format!(
                            "a pattern of rank {n} lists {} dimensions",
                            d.len()
                        ));
                    }
                }
                dims.iter()
                    .flatten()
                    .try_for_each(|d| self.dim(d, depth + 1))
            }
            Pattern::Prim { value, .. } => value.iter().try_for_each(|d| self.dim(d, depth + 1)),
            Pattern::Tuple(fields) => fields.iter().try_for_each(|f| self.pattern(f, depth + 1)),
        }
    }

    fn attr(&self, a: &KernelAttr, depth: usize) -> Result<(), String> {
        Self::depth(depth)?;
        match a {
            KernelAttr::Sym(e) => self.sym(e, depth + 1),
            KernelAttr::Array(items) => items.iter().try_for_each(|i| self.attr(i, depth + 1)),
            _ => Ok(()),
        }
    }
}

/// Whether the VM can allocate an output of this pattern: a tensor of known
/// dtype whose every dim is computed (`Check`).
pub(super) fn allocatable(p: &crate::executable::Pattern) -> bool {
    use crate::executable::{DimPattern, Pattern};
    matches!(
        p,
        Pattern::Tensor { dtype: Some(_), dims: Some(dims), .. }
            if dims.iter().all(|d| matches!(d, DimPattern::Check { .. }))
    )
}
