//! Executable serialization: a compact, versioned, little-endian binary format.
//!
//! 1. The bytes start with the magic `RELAXVM\0` and a `u32` format version
//!    ([`FORMAT_VERSION`]); then come the functions, the kernel table, the
//!    host-function names and the constant pool, and nothing after them.
//! 2. Integers are fixed-width little-endian; every length (of a list, a
//!    string, a tensor's data) is a `u64` written before its items; every
//!    enum variant is a one-byte tag; `bool`s are one byte, 0 or 1; floats are
//!    their IEEE bits; strings are UTF-8.
//! 3. A dtype is its code (one byte: int, uint, float, handle), bits (`u16`)
//!    and lanes (`u16`). A tensor is its dtype, its rank and dims (`i64`
//!    each), then its row-major bytes.
//! 4. Decoding trusts nothing: every tag, length, boolean, string, dtype and
//!    tensor size is checked, and a length is compared with the bytes left
//!    before anything is allocated for it, so a corrupted length cannot
//!    trigger a huge allocation. Nesting (expressions, patterns, attributes,
//!    tuples) deeper than [`MAX_NESTING`] is rejected so decoding cannot
//!    overflow the stack. Any failure is an [`Error::Deserialize`] saying
//!    what was wrong and at which byte offset.
//!
//! Decoding checks the format, not the program: whether indices are in
//! range is [`Executable::validate`]'s job, done when a VM is built.

use crate::data_type::{DataType, TypeCode};
use crate::error::Error;
use crate::executable::{
    Arg, Callee, DimPattern, Executable, Instr, KernelAttr, KernelEntry, Pattern, SymExpr,
    VmFunction,
};
use crate::tensor::Tensor;
use crate::value::Value;

/// The first bytes of every serialized executable.
pub const MAGIC: &[u8; 8] = b"RELAXVM\0";

/// The format version written by [`Executable::to_bytes`], and the only one
/// [`Executable::from_bytes`] reads.
pub const FORMAT_VERSION: u32 = 3;

/// The deepest nesting of symbolic expressions, patterns, kernel attributes
/// and tuple values that decoding and [`Executable::validate`] accept.
pub const MAX_NESTING: usize = 256;

impl Executable {
    /// The executable as bytes (with a version header). See the module docs.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.u32(FORMAT_VERSION);
        w.len(self.functions.len());
        for f in &self.functions {
            w.function(f);
        }
        w.len(self.kernels.len());
        for k in &self.kernels {
            w.str(&k.op);
            w.len(k.attrs.len());
            for (name, a) in &k.attrs {
                w.str(name);
                w.attr(a);
            }
        }
        w.len(self.packed.len());
        for p in &self.packed {
            w.str(p);
        }
        w.len(self.constants.len());
        for c in &self.constants {
            w.value(c);
        }
        w.len(self.natives.len());
        for n in &self.natives {
            w.str(n);
        }
        w.0
    }

    /// An executable from bytes written by [`Executable::to_bytes`]; any
    /// malformed input is an [`Error::Deserialize`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Executable, Error> {
        let mut r = Reader {
            bytes,
            pos: 0,
            depth: 0,
        };
        let magic = r.take(MAGIC.len(), "the magic number")?;
        if magic != MAGIC {
            return Err(Error::Deserialize(
                "the bytes do not start with the magic number of a relax-rs executable".into(),
            ));
        }
        let version = r.u32()?;
        if version != FORMAT_VERSION {
            return Err(Error::Deserialize(format!(
                "format version {version} is not supported (this build reads version {FORMAT_VERSION})"
            )));
        }
        let functions = r.list(|r| r.function())?;
        let kernels = r.list(|r| {
            Ok(KernelEntry {
                op: r.str()?,
                attrs: r.list(|r| Ok((r.str()?, r.attr()?)))?,
            })
        })?;
        let packed = r.list(|r| r.str())?;
        let constants = r.list(|r| r.value())?;
        let natives = r.list(|r| r.str())?;
        if r.pos != bytes.len() {
            return Err(r.error(format!(
                "{} unexpected bytes after the end of the executable",
                bytes.len() - r.pos
            )));
        }
        Ok(Executable {
            functions,
            kernels,
            packed,
            constants,
            natives,
            library: None,
        })
    }
}

/// Appends the encoding of each part to a byte vector.
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn dtype(&mut self, d: DataType) {
        self.u8(match d.code() {
            TypeCode::Int => 0,
            TypeCode::UInt => 1,
            TypeCode::Float => 2,
            TypeCode::Handle => 3,
            TypeCode::BFloat => 4,
        });
        self.u16(d.bits());
        self.u16(d.lanes());
    }
    fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Self, T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                f(self, v);
            }
        }
    }

    fn function(&mut self, f: &VmFunction) {
        self.str(&f.name);
        self.len(f.params.len());
        for p in &f.params {
            self.str(p);
        }
        self.u32(f.num_regs);
        self.u32(f.num_slots);
        self.len(f.instrs.len());
        for i in &f.instrs {
            self.instr(i);
        }
    }

    fn arg(&mut self, a: &Arg) {
        match a {
            Arg::Reg(r) => {
                self.u8(0);
                self.u32(*r);
            }
            Arg::Const(c) => {
                self.u8(1);
                self.u32(*c);
            }
            Arg::Imm(i) => {
                self.u8(2);
                self.i64(*i);
            }
        }
    }

    fn args(&mut self, args: &[Arg]) {
        self.len(args.len());
        for a in args {
            self.arg(a);
        }
    }

    fn instr(&mut self, i: &Instr) {
        match i {
            Instr::Call { callee, args, dst } => {
                self.u8(0);
                self.callee(callee);
                self.args(args);
                self.u32(*dst);
            }
            Instr::MatchCast {
                value,
                pattern,
                dst,
                context,
                expected,
            } => {
                self.u8(1);
                self.arg(value);
                self.pattern(pattern);
                self.opt(*dst, Self::u32);
                self.str(context);
                self.str(expected);
            }
            Instr::MakeShape { dims, dst } => {
                self.u8(2);
                self.len(dims.len());
                for d in dims {
                    self.sym(d);
                }
                self.u32(*dst);
            }
            Instr::MakePrim { value, dtype, dst } => {
                self.u8(3);
                self.sym(value);
                self.dtype(*dtype);
                self.u32(*dst);
            }
            Instr::MakeTuple { fields, dst } => {
                self.u8(4);
                self.args(fields);
                self.u32(*dst);
            }
            Instr::GetItem { tuple, index, dst } => {
                self.u8(5);
                self.arg(tuple);
                self.u32(*index);
                self.u32(*dst);
            }
            Instr::Move { src, dst } => {
                self.u8(6);
                self.arg(src);
                self.u32(*dst);
            }
            Instr::If { cond, else_target } => {
                self.u8(7);
                self.arg(cond);
                self.u32(*else_target);
            }
            Instr::Goto { target } => {
                self.u8(8);
                self.u32(*target);
            }
            Instr::Ret { value } => {
                self.u8(9);
                self.arg(value);
            }
            Instr::Kill { reg } => {
                self.u8(10);
                self.u32(*reg);
            }
        }
    }

    fn callee(&mut self, c: &Callee) {
        match c {
            Callee::Function(i) => {
                self.u8(0);
                self.u32(*i);
            }
            Callee::Kernel(i) => {
                self.u8(1);
                self.u32(*i);
            }
            Callee::Packed(i) => {
                self.u8(2);
                self.u32(*i);
            }
            Callee::DpsPacked { name, outputs } => {
                self.u8(3);
                self.u32(*name);
                self.len(outputs.len());
                for p in outputs {
                    self.pattern(p);
                }
            }
            Callee::Closure(r) => {
                self.u8(4);
                self.u32(*r);
            }
            Callee::Native {
                symbol,
                outputs,
                scalars,
                inplace_indices,
                moved,
            } => {
                // `call_tir` keeps tag 5 and its layout; an in-place call
                // is tag 6, with its indices and moved arguments after.
                self.u8(if inplace_indices.is_empty() { 5 } else { 6 });
                self.u32(*symbol);
                self.len(outputs.len());
                for p in outputs {
                    self.pattern(p);
                }
                self.len(scalars.len());
                for s in scalars {
                    self.sym(s);
                }
                if !inplace_indices.is_empty() {
                    self.len(inplace_indices.len());
                    for &i in inplace_indices {
                        self.i64(i64::from(i));
                    }
                    self.len(moved.len());
                    for &m in moved {
                        self.u32(m);
                    }
                }
            }
        }
    }

    fn sym(&mut self, e: &SymExpr) {
        use SymExpr as S;
        match e {
            S::Const(c) => {
                self.u8(0);
                self.i64(*c);
            }
            S::Slot(s) => {
                self.u8(1);
                self.u32(*s);
            }
            S::Add(a, b) => self.sym_bin(2, a, b),
            S::Sub(a, b) => self.sym_bin(3, a, b),
            S::Mul(a, b) => self.sym_bin(4, a, b),
            S::FloorDiv(a, b) => self.sym_bin(5, a, b),
            S::FloorMod(a, b) => self.sym_bin(6, a, b),
            S::Min(a, b) => self.sym_bin(7, a, b),
            S::Max(a, b) => self.sym_bin(8, a, b),
            S::Eq(a, b) => self.sym_bin(9, a, b),
            S::Ne(a, b) => self.sym_bin(10, a, b),
            S::Lt(a, b) => self.sym_bin(11, a, b),
            S::Le(a, b) => self.sym_bin(12, a, b),
            S::Gt(a, b) => self.sym_bin(13, a, b),
            S::Ge(a, b) => self.sym_bin(14, a, b),
            S::And(a, b) => self.sym_bin(15, a, b),
            S::Or(a, b) => self.sym_bin(16, a, b),
            S::Not(a) => {
                self.u8(17);
                self.sym(a);
            }
            S::Select(c, t, f) => {
                self.u8(18);
                self.sym(c);
                self.sym(t);
                self.sym(f);
            }
        }
    }

    fn sym_bin(&mut self, tag: u8, a: &SymExpr, b: &SymExpr) {
        self.u8(tag);
        self.sym(a);
        self.sym(b);
    }

    fn dim(&mut self, d: &DimPattern) {
        match d {
            DimPattern::Any => self.u8(0),
            DimPattern::Bind { slot, name } => {
                self.u8(1);
                self.u32(*slot);
                self.str(name);
            }
            DimPattern::Check { expr, text } => {
                self.u8(2);
                self.sym(expr);
                self.str(text);
            }
        }
    }

    fn dims(&mut self, dims: Option<&Vec<DimPattern>>) {
        self.opt(dims, |w, dims| {
            w.len(dims.len());
            for d in dims {
                w.dim(d);
            }
        });
    }

    fn pattern(&mut self, p: &Pattern) {
        match p {
            Pattern::Object => self.u8(0),
            Pattern::Tensor { ndim, dtype, dims } => {
                self.u8(1);
                self.opt(*ndim, Self::u32);
                self.opt(*dtype, Self::dtype);
                self.dims(dims.as_ref());
            }
            Pattern::Shape { ndim, dims } => {
                self.u8(2);
                self.opt(*ndim, Self::u32);
                self.dims(dims.as_ref());
            }
            Pattern::Prim { dtype, value } => {
                self.u8(3);
                self.dtype(*dtype);
                self.opt(value.as_ref(), Self::dim);
            }
            Pattern::Tuple(fields) => {
                self.u8(4);
                self.len(fields.len());
                for f in fields {
                    self.pattern(f);
                }
            }
            Pattern::Func => self.u8(5),
        }
    }

    fn attr(&mut self, a: &KernelAttr) {
        match a {
            KernelAttr::None => self.u8(0),
            KernelAttr::Bool(b) => {
                self.u8(1);
                self.bool(*b);
            }
            KernelAttr::Int(i) => {
                self.u8(2);
                self.i64(*i);
            }
            KernelAttr::Float(f) => {
                self.u8(3);
                self.u64(f.to_bits());
            }
            KernelAttr::Str(s) => {
                self.u8(4);
                self.str(s);
            }
            KernelAttr::DataType(d) => {
                self.u8(5);
                self.dtype(*d);
            }
            KernelAttr::Array(items) => {
                self.u8(6);
                self.len(items.len());
                for i in items {
                    self.attr(i);
                }
            }
            KernelAttr::Sym(e) => {
                self.u8(7);
                self.sym(e);
            }
        }
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Tensor(t) => {
                self.u8(0);
                self.dtype(t.dtype());
                self.len(t.ndim());
                for &d in t.shape() {
                    self.i64(d);
                }
                self.len(t.as_bytes().len());
                self.0.extend_from_slice(t.as_bytes());
            }
            Value::Int(i) => {
                self.u8(1);
                self.i64(*i);
            }
            Value::Float(f) => {
                self.u8(2);
                self.u64(f.to_bits());
            }
            Value::Bool(b) => {
                self.u8(3);
                self.bool(*b);
            }
            Value::Shape(dims) => {
                self.u8(4);
                self.len(dims.len());
                for &d in dims.iter() {
                    self.i64(d);
                }
            }
            Value::Tuple(fields) => {
                self.u8(5);
                self.len(fields.len());
                for f in fields.iter() {
                    self.value(f);
                }
            }
            Value::Str(s) => {
                self.u8(6);
                self.str(s);
            }
            Value::DataType(d) => {
                self.u8(7);
                self.dtype(*d);
            }
            Value::Func(i) => {
                self.u8(8);
                self.u32(*i);
            }
            Value::Closure(c) => {
                self.u8(9);
                self.u32(c.func);
                self.len(c.captured.len());
                for v in &c.captured {
                    self.value(v);
                }
            }
            // A cache as its reserved storage and fill count (a new cache
            // with the same contents when read back).
            Value::KvCache(c) => {
                self.u8(10);
                let (storage, fill_count) = c.snapshot();
                self.value(&Value::Tensor(storage));
                self.i64(fill_count);
            }
        }
    }
}

/// Reads the encoding back, checking everything. See the module docs.
struct Reader<'b> {
    bytes: &'b [u8],
    pos: usize,
    /// How deeply the recursive structure being read is nested.
    depth: usize,
}

impl<'b> Reader<'b> {
    fn error(&self, why: String) -> Error {
        Error::Deserialize(format!("{why} (at byte {})", self.pos))
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next `n` bytes, which must exist.
    fn take(&mut self, n: usize, what: &str) -> Result<&'b [u8], Error> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "the input ends inside {what} (needs {n} bytes, {} are left)",
                self.remaining()
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.array::<1>("a byte")?[0])
    }
    fn u16(&mut self) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array("a 16-bit integer")?))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array("a 32-bit integer")?))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array("a 64-bit integer")?))
    }
    fn i64(&mut self) -> Result<i64, Error> {
        Ok(i64::from_le_bytes(self.array("a 64-bit integer")?))
    }
    fn f64(&mut self) -> Result<f64, Error> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn bool(&mut self) -> Result<bool, Error> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error(format!("{b} is not a boolean (0 or 1)"))),
        }
    }

    /// A length whose items take at least `min_item` bytes each; it must fit
    /// in the bytes left.
    fn len(&mut self, min_item: usize, what: &str) -> Result<usize, Error> {
        let n = self.u64()?;
        let fits = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(min_item).map(|b| (n, b)))
            .filter(|(_, bytes)| *bytes <= self.remaining());
        match fits {
            Some((n, _)) => Ok(n),
            None => Err(self.error(format!(
                "a length of {n} {what} exceeds the {} bytes left",
                self.remaining()
            ))),
        }
    }

    /// A length-prefixed list; every item takes at least one byte.
    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let n = self.len(1, "items")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(item(self)?);
        }
        Ok(out)
    }

    fn str(&mut self) -> Result<String, Error> {
        let n = self.len(1, "string bytes")?;
        let start = self.pos;
        let raw = self.take(n, "a string")?;
        std::str::from_utf8(raw).map(str::to_string).map_err(|_| {
            Error::Deserialize(format!("the string at byte {start} is not valid UTF-8"))
        })
    }

    fn opt<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self.u8()? {
            0 => Ok(None),
            1 => f(self).map(Some),
            t => Err(self.error(format!("{t} is not an option tag (0 or 1)"))),
        }
    }

    fn bad_tag(&self, tag: u8, what: &str) -> Error {
        Error::Deserialize(format!(
            "{tag} is not the tag of {what} (at byte {})",
            self.pos - 1
        ))
    }

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Error>) -> Result<T, Error> {
        if self.depth > MAX_NESTING {
            return Err(self.error(format!("nesting deeper than {MAX_NESTING} levels")));
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    fn dtype(&mut self) -> Result<DataType, Error> {
        let code = match self.u8()? {
            0 => TypeCode::Int,
            1 => TypeCode::UInt,
            2 => TypeCode::Float,
            3 => TypeCode::Handle,
            4 => TypeCode::BFloat,
            t => return Err(self.bad_tag(t, "a dtype code")),
        };
        let bits = self.u16()?;
        let lanes = self.u16()?;
        let d = DataType::new(code, bits, lanes);
        // The types the text form can spell: `void`, or 1..=128 bits with
        // at least one lane.
        if d.is_void() || ((1..=128).contains(&bits) && lanes >= 1) {
            Ok(d)
        } else {
            Err(self.error(format!(
                "{code:?} with {bits} bits and {lanes} lanes is not a valid dtype"
            )))
        }
    }

    fn function(&mut self) -> Result<VmFunction, Error> {
        Ok(VmFunction {
            name: self.str()?,
            params: self.list(|r| r.str())?,
            num_regs: self.u32()?,
            num_slots: self.u32()?,
            instrs: self.list(|r| r.instr())?,
        })
    }

    fn arg(&mut self) -> Result<Arg, Error> {
        match self.u8()? {
            0 => Ok(Arg::Reg(self.u32()?)),
            1 => Ok(Arg::Const(self.u32()?)),
            2 => Ok(Arg::Imm(self.i64()?)),
            t => Err(self.bad_tag(t, "an operand")),
        }
    }

    fn instr(&mut self) -> Result<Instr, Error> {
        Ok(match self.u8()? {
            0 => Instr::Call {
                callee: self.callee()?,
                args: self.list(|r| r.arg())?,
                dst: self.u32()?,
            },
            1 => Instr::MatchCast {
                value: self.arg()?,
                pattern: self.pattern()?,
                dst: self.opt(|r| r.u32())?,
                context: self.str()?,
                expected: self.str()?,
            },
            2 => Instr::MakeShape {
                dims: self.list(|r| r.sym())?,
                dst: self.u32()?,
            },
            3 => Instr::MakePrim {
                value: self.sym()?,
                dtype: self.dtype()?,
                dst: self.u32()?,
            },
            4 => Instr::MakeTuple {
                fields: self.list(|r| r.arg())?,
                dst: self.u32()?,
            },
            5 => Instr::GetItem {
                tuple: self.arg()?,
                index: self.u32()?,
                dst: self.u32()?,
            },
            6 => Instr::Move {
                src: self.arg()?,
                dst: self.u32()?,
            },
            7 => Instr::If {
                cond: self.arg()?,
                else_target: self.u32()?,
            },
            8 => Instr::Goto {
                target: self.u32()?,
            },
            9 => Instr::Ret { value: self.arg()? },
            10 => Instr::Kill { reg: self.u32()? },
            t => return Err(self.bad_tag(t, "an instruction")),
        })
    }

    fn callee(&mut self) -> Result<Callee, Error> {
        Ok(match self.u8()? {
            0 => Callee::Function(self.u32()?),
            1 => Callee::Kernel(self.u32()?),
            2 => Callee::Packed(self.u32()?),
            3 => Callee::DpsPacked {
                name: self.u32()?,
                outputs: self.list(|r| r.pattern())?,
            },
            4 => Callee::Closure(self.u32()?),
            5 => Callee::Native {
                symbol: self.u32()?,
                outputs: self.list(|r| r.pattern())?,
                scalars: self.list(|r| r.sym())?,
                inplace_indices: Vec::new(),
                moved: Vec::new(),
            },
            6 => Callee::Native {
                symbol: self.u32()?,
                outputs: self.list(|r| r.pattern())?,
                scalars: self.list(|r| r.sym())?,
                inplace_indices: self.list(|r| {
                    let i = r.i64()?;
                    i32::try_from(i)
                        .map_err(|_| r.error(format!("inplace index {i} is not a 32-bit integer")))
                })?,
                moved: self.list(|r| r.u32())?,
            },
            t => return Err(self.bad_tag(t, "a callee")),
        })
    }

    fn sym(&mut self) -> Result<SymExpr, Error> {
        self.nested(|r| {
            use SymExpr as S;
            Ok(match r.u8()? {
                0 => S::Const(r.i64()?),
                1 => S::Slot(r.u32()?),
                2 => r.sym_bin(S::Add)?,
                3 => r.sym_bin(S::Sub)?,
                4 => r.sym_bin(S::Mul)?,
                5 => r.sym_bin(S::FloorDiv)?,
                6 => r.sym_bin(S::FloorMod)?,
                7 => r.sym_bin(S::Min)?,
                8 => r.sym_bin(S::Max)?,
                9 => r.sym_bin(S::Eq)?,
                10 => r.sym_bin(S::Ne)?,
                11 => r.sym_bin(S::Lt)?,
                12 => r.sym_bin(S::Le)?,
                13 => r.sym_bin(S::Gt)?,
                14 => r.sym_bin(S::Ge)?,
                15 => r.sym_bin(S::And)?,
                16 => r.sym_bin(S::Or)?,
                17 => S::Not(Box::new(r.sym()?)),
                18 => S::Select(Box::new(r.sym()?), Box::new(r.sym()?), Box::new(r.sym()?)),
                t => return Err(r.bad_tag(t, "a symbolic expression")),
            })
        })
    }

    /// The two operands of a binary expression, then the expression.
    fn sym_bin(
        &mut self,
        make: fn(Box<SymExpr>, Box<SymExpr>) -> SymExpr,
    ) -> Result<SymExpr, Error> {
        let a = Box::new(self.sym()?);
        let b = Box::new(self.sym()?);
        Ok(make(a, b))
    }

    fn dim(&mut self) -> Result<DimPattern, Error> {
        self.nested(|r| {
            Ok(match r.u8()? {
                0 => DimPattern::Any,
                1 => DimPattern::Bind {
                    slot: r.u32()?,
                    name: r.str()?,
                },
                2 => DimPattern::Check {
                    expr: r.sym()?,
                    text: r.str()?,
                },
                t => return Err(r.bad_tag(t, "a dim pattern")),
            })
        })
    }

    fn pattern(&mut self) -> Result<Pattern, Error> {
        self.nested(|r| {
            Ok(match r.u8()? {
                0 => Pattern::Object,
                1 => Pattern::Tensor {
                    ndim: r.opt(|r| r.u32())?,
                    dtype: r.opt(|r| r.dtype())?,
                    dims: r.opt(|r| r.list(|r| r.dim()))?,
                },
                2 => Pattern::Shape {
                    ndim: r.opt(|r| r.u32())?,
                    dims: r.opt(|r| r.list(|r| r.dim()))?,
                },
                3 => Pattern::Prim {
                    dtype: r.dtype()?,
                    value: r.opt(|r| r.dim())?,
                },
                4 => Pattern::Tuple(r.list(|r| r.pattern())?),
                5 => Pattern::Func,
                t => return Err(r.bad_tag(t, "a pattern")),
            })
        })
    }

    fn attr(&mut self) -> Result<KernelAttr, Error> {
        self.nested(|r| {
            Ok(match r.u8()? {
                0 => KernelAttr::None,
                1 => KernelAttr::Bool(r.bool()?),
                2 => KernelAttr::Int(r.i64()?),
                3 => KernelAttr::Float(r.f64()?),
                4 => KernelAttr::Str(r.str()?),
                5 => KernelAttr::DataType(r.dtype()?),
                6 => KernelAttr::Array(r.list(|r| r.attr())?),
                7 => KernelAttr::Sym(r.sym()?),
                t => return Err(r.bad_tag(t, "a kernel attribute")),
            })
        })
    }

    fn value(&mut self) -> Result<Value, Error> {
        self.nested(|r| {
            Ok(match r.u8()? {
                0 => Value::Tensor(r.tensor()?),
                1 => Value::Int(r.i64()?),
                2 => Value::Float(r.f64()?),
                3 => Value::Bool(r.bool()?),
                4 => {
                    let n = r.len(8, "dims")?;
                    let dims = (0..n).map(|_| r.i64()).collect::<Result<Vec<_>, _>>()?;
                    Value::Shape(dims.into())
                }
                5 => Value::tuple(r.list(|r| r.value())?),
                6 => Value::Str(r.str()?.into()),
                7 => Value::DataType(r.dtype()?),
                8 => Value::Func(r.u32()?),
                9 => {
                    let func = r.u32()?;
                    let captured = r.list(|r| r.value())?;
                    Value::Closure(std::sync::Arc::new(crate::value::Closure {
                        func,
                        captured,
                    }))
                }
                10 => {
                    let storage = match r.value()? {
                        Value::Tensor(t) => t,
                        other => {
                            return Err(r.error(format!(
                                "expected a KV cache's storage tensor, found {}",
                                other.describe()
                            )))
                        }
                    };
                    let fill_count = r.i64()?;
                    let cache = crate::kv_cache::AttentionKvCache::from_parts(storage, fill_count)
                        .map_err(|m| r.error(m))?;
                    Value::KvCache(std::sync::Arc::new(cache))
                }
                t => return Err(r.bad_tag(t, "a value")),
            })
        })
    }

    fn tensor(&mut self) -> Result<Tensor, Error> {
        let dtype = self.dtype()?;
        if dtype.is_void() || dtype.lanes() != 1 {
            return Err(self.error(format!("a tensor cannot have dtype {dtype}")));
        }
        let ndim = self.len(8, "dims")?;
        let shape = (0..ndim)
            .map(|_| self.i64())
            .collect::<Result<Vec<_>, _>>()?;
        // The element count, multiplied in the order the tensor itself
        // multiplies, so that no partial product overflows there either.
        let mut numel: usize = 1;
        for &d in &shape {
            let d = usize::try_from(d)
                .map_err(|_| self.error(format!("tensor dimension {d} is negative")))?;
            numel = numel.checked_mul(d).ok_or_else(|| {
                self.error(format!(
                    "a tensor of shape {} has too many elements",
                    crate::tensor::fmt_shape(&shape)
                ))
            })?;
        }
        let expected = numel
            .checked_mul(dtype.size_in_bytes())
            .ok_or_else(|| self.error("a tensor has too many bytes".into()))?;
        let n = self.len(1, "tensor bytes")?;
        if n != expected {
            return Err(self.error(format!(
                "a {dtype} tensor of shape {} needs {expected} bytes, but {n} are given",
                crate::tensor::fmt_shape(&shape)
            )));
        }
        let data = self.take(n, "tensor data")?;
        Tensor::from_bytes(dtype, &shape, data).map_err(|e| self.error(e.to_string()))
    }
}
