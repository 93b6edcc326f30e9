//! Buffer loads and stores.
//!
//! 1. An access's flat element offset is computed in `int64`: row-major over
//!    the buffer's shape, or through its strides (both in elements).
//! 2. Inside a vectorized loop step an access is one of three kinds, by how
//!    its offset depends on the loop variable: *invariant* (a scalar access;
//!    a load is broadcast, a store keeps the last lane, the one a serial loop
//!    would leave), *contiguous* (coefficient exactly 1: one vector load or
//!    store at the lane-0 offset, aligned to the element only), *strided*
//!    (a coefficient that is a small constant `s`, 2 to
//!    [`MAX_LOAD_STRIDE`]: a load is one vector load of exactly the span
//!    the lanes cover, `s · (n - 1) + 1` elements, then a shuffle of every
//!    `s`-th element, a pool's window at stride 2; with AVX-512 and 32- or
//!    64-bit elements a store is a shuffle spreading the lanes and one
//!    masked store of the span, the elements between the lanes masked
//!    off; without AVX-512 a strided store is a scatter), or *gather* /
//!    *scatter* (anything else: one scalar access per lane).
//! 3. `bool` elements are bytes in memory: loads compare with 0, stores
//!    zero-extend.
//! 4. `float16` and `bfloat16` elements are `i16`s in memory: loads widen
//!    them to `float32`, stores round to them ([`super::half`]).

use super::expr::{lanes_of, vec_type};
use super::stmt::FuncGen;
use super::types::{internal, memory_type, unsupported, Ll};
use super::vectorize::{linear_coeff, uses_var};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::Buffer;
use inkwell::types::{BasicType, VectorType};
use inkwell::values::{BasicValueEnum, IntValue, PointerValue, VectorValue};
use inkwell::{AddressSpace, IntPredicate};
use relax_runtime::{DataType, Error};

/// How a vector step reaches memory. See the module docs.
enum Access {
    Scalar,
    Contiguous,
    /// A load whose lanes are this many elements apart.
    Strided(u32),
    PerLane,
}

/// The largest stride of a load read as one vector and a shuffle: its
/// span is at most four vectors' worth of elements.
pub(super) const MAX_LOAD_STRIDE: i64 = 4;

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// The flat element offset of `buffer[indices]`, as an `int64`
    /// expression; simplified when an index divides or takes a remainder,
    /// so that an index split into a quotient and a remainder and spread
    /// over two dims (`[.., jr // 7, jr % 7]`) is contiguous again.
    pub fn offset_expr(&self, buffer: &Buffer, indices: &[PrimExpr]) -> Result<PrimExpr, Error> {
        let offset = self.flat_offset(buffer, indices)?;
        if indices.iter().any(divides) {
            return Ok(crate::arith::analyzer::Analyzer::new().simplify(&offset));
        }
        Ok(offset)
    }

    fn flat_offset(&self, buffer: &Buffer, indices: &[PrimExpr]) -> Result<PrimExpr, Error> {
        let rank = buffer.shape().len();
        if indices.len() != rank {
            return Err(unsupported(format!(
                "buffer `{}` of rank {rank} indexed with {} indices",
                buffer.name(),
                indices.len()
            )));
        }
        let i64t = DataType::i64();
        let strides = buffer.strides();
        if !strides.is_empty() {
            if strides.len() != rank {
                return Err(unsupported(format!(
                    "buffer `{}` has {} strides for rank {rank}",
                    buffer.name(),
                    strides.len()
                )));
            }
            return Ok(indices
                .iter()
                .zip(strides)
                .map(|(i, s)| i.clone().cast(i64t) * s.clone().cast(i64t))
                .reduce(|a, b| a + b)
                .unwrap_or_else(|| PrimExpr::int(0)));
        }
        let mut offset: Option<PrimExpr> = None;
        for (i, d) in indices.iter().zip(buffer.shape()) {
            let i = i.clone().cast(i64t);
            offset = Some(match offset {
                None => i,
                Some(o) => o * d.clone().cast(i64t) + i,
            });
        }
        Ok(offset.unwrap_or_else(|| PrimExpr::int(0)))
    }

    pub(super) fn buffer_ptr(&self, buffer: &Buffer) -> Result<PointerValue<'ctx>, Error> {
        self.buffers.get(&buffer.id()).copied().ok_or_else(|| {
            unsupported(format!(
                "buffer `{}` is neither a parameter nor allocated where it is used",
                buffer.name()
            ))
        })
    }

    /// `T.prefetch(T.address_of(B[i…]), rw, locality, cache_type)`: LLVM's
    /// `llvm.prefetch` of the element's address (x86's `prefetcht0` for a
    /// read of locality 3). A hint only: it reads nothing and never faults.
    /// Inside a vector step the address is lane 0's.
    pub(super) fn prefetch(&mut self, args: &[PrimExpr]) -> Result<BasicValueEnum<'ctx>, Error> {
        let element = match args[0].kind() {
            PrimExprKind::Call(name, inner) if name == "address_of" => match inner.as_slice() {
                [load] => match load.kind() {
                    PrimExprKind::BufferLoad(buffer, indices) => Some((buffer, indices)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let Some((buffer, indices)) = element else {
            return Err(unsupported(
                "`T.prefetch` of anything but `T.address_of(B[…])`".to_string(),
            ));
        };
        let flag = |e: &PrimExpr, max: i64| {
            e.as_int()
                .filter(|v| (0..=max).contains(v))
                .map(|v| self.ctx.i32_type().const_int(v as u64, false))
                .ok_or_else(|| unsupported("`T.prefetch` flags other than constants (rw 0-1, locality 0-3, cache type 0-1)".to_string()))
        };
        let (rw, locality, cache) = (flag(&args[1], 1)?, flag(&args[2], 3)?, flag(&args[3], 1)?);
        let base = self.buffer_ptr(buffer)?;
        let offset = self.offset_expr(buffer, indices)?;
        let off = match self.lanes {
            Some(_) => self.at_lane0(&offset)?,
            None => self.scalar_of(&offset, DataType::i64())?,
        };
        let p = self.element(base, off)?;
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let p = self.b.build_pointer_cast(p, i8p, "pf").ll()?;
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.prefetch")
            .and_then(|i| i.get_declaration(self.module, &[i8p.into()]))
            .ok_or_else(|| internal("no LLVM intrinsic llvm.prefetch"))?;
        self.b
            .build_call(
                decl,
                &[p.into(), rw.into(), locality.into(), cache.into()],
                "",
            )
            .ll()?;
        Ok(self.ctx.i32_type().const_zero().into())
    }

    fn access(&self, offset: &PrimExpr) -> Access {
        match &self.lanes {
            None => Access::Scalar,
            Some(l) if !uses_var(offset, &l.var) => Access::Scalar,
            Some(l) => match linear_coeff(offset, &l.var) {
                Some(1) => Access::Contiguous,
                Some(s) if (2..=MAX_LOAD_STRIDE).contains(&s) => Access::Strided(s as u32),
                _ => Access::PerLane,
            },
        }
    }

    /// `offset` evaluated for lane 0 of the current vector step.
    pub(super) fn at_lane0(&mut self, offset: &PrimExpr) -> Result<IntValue<'ctx>, Error> {
        let lanes = self
            .lanes
            .take()
            .ok_or_else(|| internal("lane 0 outside a vector step"))?;
        let old = self.bind(&lanes.var, lanes.base.into());
        let r = self.scalar_of(offset, DataType::i64());
        self.unbind(&lanes.var, old);
        self.lanes = Some(lanes);
        r
    }

    pub(super) fn element(
        &self,
        base: PointerValue<'ctx>,
        offset: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, Error> {
        // SAFETY (of the generated code, not of this call): the VM checked
        // every buffer's shape, so offsets stay inside the allocation.
        unsafe { self.b.build_in_bounds_gep(base, &[offset], "elem").ll() }
    }

    pub(super) fn lane_offsets(&mut self, offset: &PrimExpr) -> Result<Vec<IntValue<'ctx>>, Error> {
        let v = self.expr_as(offset, DataType::i64())?;
        let BasicValueEnum::VectorValue(vec) = v else {
            return Err(internal("per-lane offsets that are not a vector"));
        };
        let n = vec.get_type().get_size();
        (0..n)
            .map(|k| {
                let idx = self.ctx.i32_type().const_int(k as u64, false);
                Ok(self
                    .b
                    .build_extract_element(vec, idx, "off")
                    .ll()?
                    .into_int_value())
            })
            .collect()
    }

    /// The elements of `buffer` at `offsets` (an `int64` vector) where
    /// `mask` is on, and `other` where it is off, as one
    /// `llvm.masked.gather` (`vgatherqps` where the CPU has AVX-512 or
    /// AVX2, one load per lane elsewhere): the lanes it masks
    /// off read no memory. Values as stored: half-precision elements are
    /// not widened.
    pub(super) fn masked_gather(
        &mut self,
        buffer: &Buffer,
        base: PointerValue<'ctx>,
        offsets: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        other: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let n = offsets.get_type().get_size();
        let elem_ty = memory_type(self.ctx, buffer.dtype())?;
        let size = buffer.dtype().size_in_bytes().max(1) as u64;
        let i64t = self.ctx.i64_type();
        let addr = self.b.build_ptr_to_int(base, i64t, "base").ll()?;
        let addr = self.splat(addr.into(), n)?;
        let size_v = self.splat(i64t.const_int(size, false).into(), n)?;
        let bytes = self.b.build_int_mul(offsets, size_v, "bytes").ll()?;
        let addrs = self.b.build_int_add(addr, bytes, "addrs").ll()?;
        let pty = elem_ty.ptr_type(AddressSpace::default());
        let ptrs = self
            .b
            .build_int_to_ptr(addrs, pty.vec_type(n), "ptrs")
            .ll()?;
        let vty = vec_type(elem_ty, n)?;
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.masked.gather")
            .and_then(|i| {
                i.get_declaration(
                    self.module,
                    &[vty.as_basic_type_enum(), ptrs.get_type().into()],
                )
            })
            .ok_or_else(|| internal("no llvm.masked.gather"))?;
        let align = self.ctx.i32_type().const_int(size, false);
        self.b
            .build_call(
                decl,
                &[ptrs.into(), align.into(), mask.into(), other.into()],
                "gathered",
            )
            .ll()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| internal("llvm.masked.gather returned no value"))
    }

    fn lane_count(&self) -> u32 {
        self.lanes.as_ref().map_or(1, |l| l.n)
    }

    /// `len` consecutive elements of `buffer` from `offset`'s lane-0
    /// value, as one vector load aligned to the element only.
    pub(super) fn vector_load(
        &mut self,
        buffer: &Buffer,
        base: PointerValue<'ctx>,
        offset: &PrimExpr,
        len: u32,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let elem_ty = memory_type(self.ctx, buffer.dtype())?;
        let off = self.at_lane0(offset)?;
        let p = self.element(base, off)?;
        let vty = vec_type(elem_ty, len)?;
        let vp = self
            .b
            .build_pointer_cast(p, vty.ptr_type(AddressSpace::default()), "vptr")
            .ll()?;
        let v = self.b.build_load(vp, buffer.name()).ll()?;
        set_alignment(v, buffer.dtype().size_in_bytes().max(1) as u32)?;
        Ok(v)
    }

    /// The value of `buffer[indices]`.
    pub fn load(
        &mut self,
        buffer: &Buffer,
        indices: &[PrimExpr],
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if let Some(v) = self.transposed_load(buffer, indices) {
            return Ok(v);
        }
        let base = self.buffer_ptr(buffer)?;
        let offset = self.offset_expr(buffer, indices)?;
        let dtype = buffer.dtype();
        let elem_ty = memory_type(self.ctx, dtype)?;
        let raw: BasicValueEnum = match self.access(&offset) {
            Access::Scalar => {
                let off = self.scalar_of(&offset, DataType::i64())?;
                let p = self.element(base, off)?;
                self.b.build_load(p, buffer.name()).ll()?
            }
            Access::Contiguous => {
                let n = self.lane_count();
                self.vector_load(buffer, base, &offset, n)?
            }
            Access::Strided(stride) => {
                let n = self.lane_count();
                let span = stride * (n - 1) + 1;
                let wide = self.vector_load(buffer, base, &offset, span)?;
                let wide = wide.into_vector_value();
                let i32t = self.ctx.i32_type();
                let lanes: Vec<_> = (0..n)
                    .map(|k| i32t.const_int(u64::from(k * stride), false))
                    .collect();
                let mask = VectorType::const_vector(&lanes);
                let undef = wide.get_type().get_undef();
                self.b
                    .build_shuffle_vector(wide, undef, mask, "every")
                    .ll()?
                    .into()
            }
            Access::PerLane => {
                let offs = self.lane_offsets(&offset)?;
                let vty = vec_type(elem_ty, offs.len() as u32)?;
                let mut acc = vty.get_undef();
                for (k, off) in offs.into_iter().enumerate() {
                    let p = self.element(base, off)?;
                    let x = self.b.build_load(p, buffer.name()).ll()?;
                    let idx = self.ctx.i32_type().const_int(k as u64, false);
                    acc = self.b.build_insert_element(acc, x, idx, "gather").ll()?;
                }
                acc.into()
            }
        };
        if dtype.is_bool() {
            let zero = self.constant_like(raw, 0)?;
            return self.icmp(IntPredicate::NE, raw, zero);
        }
        if dtype.is_half() {
            return self.half_to_f32(raw, dtype);
        }
        Ok(raw)
    }

    /// `buffer[indices] = value`.
    pub fn store(
        &mut self,
        buffer: &Buffer,
        indices: &[PrimExpr],
        value: &PrimExpr,
    ) -> Result<(), Error> {
        let base = self.buffer_ptr(buffer)?;
        let offset = self.offset_expr(buffer, indices)?;
        let dtype = buffer.dtype();
        let elem_ty = memory_type(self.ctx, dtype)?;
        let align = dtype.size_in_bytes().max(1) as u32;
        let outer = self.accumulator.replace((buffer.clone(), indices.to_vec()));
        let v = self.expr_as(value, dtype);
        self.accumulator = outer;
        let mut v = v?;
        if dtype.is_bool() {
            let target = match lanes_of(v) {
                Some(n) => vec_type(elem_ty, n)?.as_basic_type_enum(),
                None => elem_ty,
            };
            v = self
                .b
                .build_cast(inkwell::values::InstructionOpcode::ZExt, v, target, "byte")
                .ll()?;
        }
        if dtype.is_half() {
            v = self.f32_to_half(v, dtype)?;
        }
        match self.access(&offset) {
            Access::Scalar => {
                if let BasicValueEnum::VectorValue(vec) = v {
                    // Every lane writes the same element: the last one wins.
                    let last = vec.get_type().get_size().saturating_sub(1);
                    let idx = self.ctx.i32_type().const_int(last as u64, false);
                    v = self.b.build_extract_element(vec, idx, "last").ll()?;
                }
                let off = self.scalar_of(&offset, DataType::i64())?;
                let p = self.element(base, off)?;
                self.b.build_store(p, v).ll()?;
            }
            Access::Contiguous => {
                let n = self.lane_count();
                v = self.with_lanes(v, n)?;
                let off = self.at_lane0(&offset)?;
                let p = self.element(base, off)?;
                let vty = vec_type(elem_ty, n)?;
                let vp = self
                    .b
                    .build_pointer_cast(p, vty.ptr_type(AddressSpace::default()), "vptr")
                    .ll()?;
                let st = self.b.build_store(vp, v).ll()?;
                st.set_alignment(align).map_err(internal)?;
                if self.streaming_store(buffer, &offset, n) {
                    self.mark_streaming(st)?;
                }
            }
            // With AVX-512 a strided store of 32- or 64-bit elements is one
            // masked store of its span, the lanes spread out by a shuffle:
            // the elements between them are masked off, so not written.
            Access::Strided(stride) if self.avx512 && matches!(dtype.bits(), 32 | 64) => {
                let n = self.lane_count();
                v = self.with_lanes(v, n)?;
                self.strided_store(base, &offset, v, stride, align)?;
            }
            // Elsewhere it writes lane by lane (a wide store would
            // overwrite the elements between the lanes).
            Access::Strided(_) | Access::PerLane => {
                let offs = self.lane_offsets(&offset)?;
                v = self.with_lanes(v, offs.len() as u32)?;
                let BasicValueEnum::VectorValue(vec) = v else {
                    return Err(internal("a scatter of a non-vector"));
                };
                for (k, off) in offs.into_iter().enumerate() {
                    let idx = self.ctx.i32_type().const_int(k as u64, false);
                    let x = self.b.build_extract_element(vec, idx, "lane").ll()?;
                    let p = self.element(base, off)?;
                    self.b.build_store(p, x).ll()?;
                }
            }
        }
        Ok(())
    }

    /// The `n` lanes of `v` stored `stride` elements apart from `offset`'s
    /// lane-0 value, as one `llvm.masked.store` of the span they cover
    /// (`stride · (n - 1) + 1` elements) whose mask is on at the lanes'
    /// elements only: the elements between them are neither read nor
    /// written (a Winograd output transform's stride-4 columns: one
    /// `vmovups` with a mask per 16 elements instead of an extract and a
    /// scalar store per lane).
    fn strided_store(
        &mut self,
        base: PointerValue<'ctx>,
        offset: &PrimExpr,
        v: BasicValueEnum<'ctx>,
        stride: u32,
        align: u32,
    ) -> Result<(), Error> {
        let BasicValueEnum::VectorValue(vec) = v else {
            return Err(internal("a strided store of a non-vector"));
        };
        let n = vec.get_type().get_size();
        let span = stride * (n - 1) + 1;
        let i32t = self.ctx.i32_type();
        let bool_t = self.ctx.bool_type();
        // Element `e` of the span takes lane `e / stride` where `stride`
        // divides it; the others are masked off (any lane will do).
        let picks: Vec<_> = (0..span)
            .map(|e| i32t.const_int(u64::from(e / stride), false))
            .collect();
        let mask: Vec<_> = (0..span)
            .map(|e| bool_t.const_int(u64::from(e % stride == 0), false))
            .collect();
        let undef = vec.get_type().get_undef();
        let spread = self
            .b
            .build_shuffle_vector(vec, undef, VectorType::const_vector(&picks), "spread")
            .ll()?;
        let mask = VectorType::const_vector(&mask);
        let off = self.at_lane0(offset)?;
        let p = self.element(base, off)?;
        let vty = spread.get_type();
        let vp = self
            .b
            .build_pointer_cast(p, vty.ptr_type(AddressSpace::default()), "vptr")
            .ll()?;
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.masked.store")
            .and_then(|i| i.get_declaration(self.module, &[vty.into(), vp.get_type().into()]))
            .ok_or_else(|| internal("no llvm.masked.store"))?;
        let align = i32t.const_int(u64::from(align), false);
        self.b
            .build_call(
                decl,
                &[spread.into(), vp.into(), align.into(), mask.into()],
                "",
            )
            .ll()?;
        Ok(())
    }
}

/// Whether `e` has an integer division or remainder.
fn divides(e: &PrimExpr) -> bool {
    use crate::ir::prim_expr::PrimExprKind;
    matches!(e.kind(), PrimExprKind::Div(..) | PrimExprKind::Mod(..))
        || e.children().into_iter().any(divides)
}

fn set_alignment(v: BasicValueEnum<'_>, align: u32) -> Result<(), Error> {
    let inst = match v {
        BasicValueEnum::VectorValue(v) => v.as_instruction(),
        _ => None,
    };
    match inst {
        Some(i) => i.set_alignment(align).map_err(internal),
        None => Err(internal("a vector load that is not an instruction")),
    }
}
