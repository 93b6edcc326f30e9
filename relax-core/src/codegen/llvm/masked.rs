//! Masked vector loads: a padded window's `Select(inside, X[clamped], v)`
//! inside a vector step, as one `llvm.masked.load` of the unclamped,
//! contiguous elements with `inside` as the mask and `v` where it is off,
//! or, where the unclamped offset is not contiguous in the lanes (a
//! strided window's image), as one `llvm.masked.gather` of them.
//!
//! `LegalizeOps` writes a padded read as `Select(0 <= h < H and …,
//! X[.., max(min(h, H - 1), 0), ..], pad)`: the clamps keep the load inside
//! `X` whichever side is chosen, and make its offset non-affine, so the
//! vector step would read it lane by lane. Where the condition holds, each
//! clamp is the identity; where it does not, a masked-off lane reads no
//! memory. So the load is rewritten with its clamps removed, provided that
//! for every clamp of `e` the condition has the conjuncts `e >= 0` and
//! `e < D` (as far as the clamp bounds it), compared in the simplifier's
//! canonical form. Anything else is left to the usual lane-by-lane code.

use super::expr::vec_type;
use super::stmt::FuncGen;
use super::types::{internal, memory_type, Ll};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::affine::{linear_coeff, masked_offset};
use inkwell::types::BasicType;
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use relax_runtime::{DataType, Error};

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// `Select(c, t, f)` inside a vector step as a masked load (see the
    /// module docs), or `None` when it is not one.
    pub(super) fn masked_select(
        &mut self,
        c: &PrimExpr,
        t: &PrimExpr,
        f: &PrimExpr,
        d: DataType,
    ) -> Result<Option<BasicValueEnum<'ctx>>, Error> {
        let Some(lanes) = &self.lanes else {
            return Ok(None);
        };
        let (n, var) = (lanes.n, lanes.var.clone());
        let Some((buffer, offset)) = masked_offset(c, t, &var) else {
            return Ok(None);
        };
        let dtype = buffer.dtype();
        if dtype != d || dtype.is_bool() || dtype.lanes() != 1 {
            return Ok(None);
        }
        let mask = self.expr_as(c, DataType::bool())?;
        let mask = self.with_lanes(mask, n)?;
        let other = self.expr_as(f, d)?;
        let mut other = self.with_lanes(other, n)?;
        if dtype.is_half() {
            // Loaded as stored bits, widened after.
            other = self.f32_to_half(other, dtype)?;
        }
        let base = self.buffer_ptr(&buffer)?;
        if linear_coeff(&offset, &var) != Some(1) {
            // SAFETY (of the generated code): as below, only the lanes the
            // mask keeps are read.
            let v = self.expr_as(&offset, DataType::i64())?;
            let offsets = self.with_lanes(v, n)?.into_vector_value();
            let mask = mask.into_vector_value();
            let v = self.masked_gather(&buffer, base, offsets, mask, other)?;
            return Ok(Some(if dtype.is_half() {
                self.half_to_f32(v, dtype)?
            } else {
                v
            }));
        }
        let off = self.at_lane0(&offset)?;
        // SAFETY (of the generated code): only the lanes the mask keeps are
        // read, and for them the offset equals the clamped one, inside the
        // buffer. Not an `inbounds` GEP: lane 0 itself may lie outside the
        // buffer (a padding column), which would make that pointer poison.
        let p = unsafe { self.b.build_gep(base, &[off], "masked").ll()? };
        let vty = vec_type(memory_type(self.ctx, dtype)?, n)?;
        let vp = self
            .b
            .build_pointer_cast(p, vty.ptr_type(AddressSpace::default()), "mptr")
            .ll()?;
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.masked.load")
            .and_then(|i| {
                i.get_declaration(
                    self.module,
                    &[
                        vty.as_basic_type_enum(),
                        vty.ptr_type(AddressSpace::default()).into(),
                    ],
                )
            })
            .ok_or_else(|| internal("no llvm.masked.load"))?;
        let align = self
            .ctx
            .i32_type()
            .const_int(dtype.size_in_bytes().max(1) as u64, false);
        let v = self
            .b
            .build_call(
                decl,
                &[vp.into(), align.into(), mask.into(), other.into()],
                "masked",
            )
            .ll()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| internal("llvm.masked.load returned no value"))?;
        if dtype.is_half() {
            return Ok(Some(self.half_to_f32(v, dtype)?));
        }
        Ok(Some(v))
    }
}
