//! Case 4 of the module docs: a reduction along a variable every input is
//! contiguous in, while no input is contiguous along the output's last
//! axis — a matmul whose right operand is read transposed
//! (`C[i, j] += A[i, k] · W[j, k]`, the MLP's `x · wᵀ` once the transpose
//! is inlined). Each output is a dot product vectorized along `k`:
//! [`VECTOR_LANES`] partial sums in a local buffer (one vector register),
//! a horizontal sum, then the tail of `k`. The partial sums reassociate the
//! reduction (numerical tests compare with a tolerance that follows from
//! its length).

use super::nest::Nest;
use super::util::*;
use super::VECTOR_LANES;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::{Block, Buffer, ForKind, Stmt};

impl Nest {
    /// Whether case 4 applies: one reduce variable, contiguous in every
    /// input and absent from the store, a float update of the form
    /// `C[..] + term` with `term` not reading `C`, and an init.
    pub(super) fn dot_reduction_applies(&self) -> bool {
        let [k] = self.reduce.as_slice() else {
            return false;
        };
        if !self.buffer.dtype().is_float() || self.init.is_none() {
            return false;
        }
        let (store, loads) = self.coefficients(&k.var);
        if store != Some(0) || loads.is_empty() || !loads.iter().all(|c| *c == Some(1)) {
            return false;
        }
        self.dot_term().is_some()
    }

    /// `term` of an update `C[..] + term`.
    fn dot_term(&self) -> Option<PrimExpr> {
        let PrimExprKind::Add(a, b) = self.value.kind() else {
            return None;
        };
        let is_out = |e: &PrimExpr| matches!(e.kind(), PrimExprKind::BufferLoad(buf, idx) if *buf == self.buffer && *idx == self.indices);
        let reads_out = |e: &PrimExpr| {
            let mut loads = Vec::new();
            collect_loads(e, &mut loads);
            loads.iter().any(|(buf, _)| *buf == self.buffer)
        };
        match (is_out(a), is_out(b)) {
            (true, false) if !reads_out(b) => Some(b.clone()),
            (false, true) if !reads_out(a) => Some(a.clone()),
            _ => None,
        }
    }

    /// Case 4 of the module docs.
    pub(super) fn dot_reduction(&self, parallel: bool) -> Stmt {
        let k = &self.reduce[0];
        let term = self.dot_term().expect("checked by dot_reduction_applies");
        let kdt = k.loop_var.dtype();
        let int = |v: i64| PrimExpr::int_of(kdt, v);
        let lanes = int(VECTOR_LANES);
        let an = Analyzer::new();
        let chunks = an.simplify(&k.extent.clone().floordiv(lanes.clone()));
        let full = an.simplify(&(chunks.clone() * lanes.clone()));
        let rest = an.simplify(&(k.extent.clone() - full.clone()));
        let map = identity(&self.spatial);
        let dtype = self.buffer.dtype();
        let acc = Buffer::new("dot", vec![int(VECTOR_LANES)], dtype);
        let out = PrimExpr::load(
            &self.buffer,
            self.indices
                .iter()
                .map(|i| i.substitute_map(&map))
                .collect(),
        );
        let store_out = |value: PrimExpr| Stmt::BufferStore {
            buffer: self.buffer.clone(),
            value,
            indices: self
                .indices
                .iter()
                .map(|i| i.substitute_map(&map))
                .collect(),
        };
        let zero_value = PrimExpr::float(dtype, 0.0);
        // acc[l] = 0
        let l0 = fresh(&k.loop_var, "_l");
        let init_acc = for_(
            &l0,
            int(0),
            lanes.clone(),
            ForKind::Vectorized,
            Stmt::BufferStore {
                buffer: acc.clone(),
                value: zero_value,
                indices: vec![PrimExpr::var(&l0)],
            },
        );
        // acc[l] += term[k := ko * L + l]
        let (ko, l1) = (fresh(&k.loop_var, "_o"), fresh(&k.loop_var, "_l"));
        let mut m = map.clone();
        m.insert(
            k.var.clone(),
            PrimExpr::var(&ko) * lanes.clone() + PrimExpr::var(&l1),
        );
        let lane = PrimExpr::load(&acc, vec![PrimExpr::var(&l1)]);
        let update = for_(
            &ko,
            int(0),
            chunks.clone(),
            ForKind::Serial,
            for_(
                &l1,
                int(0),
                lanes.clone(),
                ForKind::Vectorized,
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: lane + term.substitute_map(&m),
                    indices: vec![PrimExpr::var(&l1)],
                },
            ),
        );
        // C = init; C += acc[l]; C += term[k] over the tail.
        let init = self.init.as_ref().expect("checked").substitute_map(&map);
        let l2 = fresh(&k.loop_var, "_s");
        let reduce_lanes = for_(
            &l2,
            int(0),
            lanes,
            ForKind::Unrolled,
            store_out(out.clone() + PrimExpr::load(&acc, vec![PrimExpr::var(&l2)])),
        );
        let kt = fresh(&k.loop_var, "_t");
        let mut m = map.clone();
        m.insert(k.var.clone(), PrimExpr::var(&kt));
        let tail = for_(
            &kt,
            full,
            rest.clone(),
            ForKind::Serial,
            store_out(out + term.substitute_map(&m)),
        );
        let mut body = vec![init_acc];
        if !is_zero(&chunks) {
            body.push(update);
        }
        body.push(store_out(init));
        body.push(reduce_lanes);
        if !is_zero(&rest) {
            body.push(tail);
        }
        let point = Stmt::Block(Box::new(Block {
            name: format!("{}_dot", self.buffer.name()),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(seq(body)),
            alloc_buffers: vec![acc],
        }));
        nest(&self.spatial, point, parallel.then_some(ForKind::Parallel))
    }
}
