//! Tensor constants: `R.const(…)` literals and the module's metadata section.
//!
//! 1. A rank-0 constant always prints inline: `R.const(1.5, "float32")`.
//! 2. When a module is printed, every other constant is an entry of the
//!    `metadata` table that follows the class, and the expression prints as
//!    `metadata["relax.expr.Constant"][i]`; `i` counts constants in order of
//!    first appearance in the text, one entry per constant node.
//! 3. Without a module (a function or expression alone) there is no table,
//!    and those constants print inline as nested lists.
//! 4. A constant with no elements also states its shape
//!    (`R.const([], "float32", shape=(0, 3))`), which the nested list loses.

use super::prim::{py_tuple, quote};
use relax_runtime::{DataType, Tensor, TypeCode};
use std::collections::HashMap;

/// Where constants of rank one or more go.
#[derive(Debug)]
pub(crate) enum Constants {
    /// Inline as `R.const(<nested list>, "<dtype>")`.
    Inline,
    /// Into the metadata table.
    Metadata {
        /// Constant node id to its index in `tensors`.
        index: HashMap<usize, usize>,
        /// The entries, in order of first appearance.
        tensors: Vec<Tensor>,
    },
}

impl Constants {
    /// A metadata table, empty.
    pub(crate) fn metadata() -> Self {
        Constants::Metadata {
            index: HashMap::new(),
            tensors: Vec::new(),
        }
    }

    /// The text of the constant node `node_id` holding `t`.
    pub(crate) fn reference(&mut self, node_id: usize, t: &Tensor) -> String {
        match self {
            _ if t.ndim() == 0 => const_literal(t),
            Constants::Inline => const_literal(t),
            Constants::Metadata { index, tensors } => {
                let i = *index.entry(node_id).or_insert_with(|| {
                    tensors.push(t.clone());
                    tensors.len() - 1
                });
                format!("metadata[\"relax.expr.Constant\"][{i}]")
            }
        }
    }

    /// The tensors of the metadata table, in order (none when inline).
    pub(crate) fn into_tensors(self) -> Vec<Tensor> {
        match self {
            Constants::Inline => Vec::new(),
            Constants::Metadata { tensors, .. } => tensors,
        }
    }

    /// The `metadata = {…}` section, or `None` when no constant went there.
    pub(crate) fn section(&self) -> Option<String> {
        let Constants::Metadata { tensors, .. } = self else {
            return None;
        };
        if tensors.is_empty() {
            return None;
        }
        let mut out = String::from("metadata = {\n    \"relax.expr.Constant\": [\n");
        for t in tensors {
            out.push_str("        ");
            out.push_str(&const_literal(t));
            out.push_str(",\n");
        }
        out.push_str("    ],\n}");
        Some(out)
    }
}

/// `R.const(<values>, "<dtype>")`, plus `shape=(…)` when there are no elements.
pub(crate) fn const_literal(t: &Tensor) -> String {
    let values = nested_values(t);
    let dtype = quote(&t.dtype().to_string());
    if t.numel() == 0 {
        let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
        format!("R.const({values}, {dtype}, shape={})", py_tuple(&shape))
    } else {
        format!("R.const({values}, {dtype})")
    }
}

/// The elements as nested Python lists (a bare scalar for rank 0).
fn nested_values(t: &Tensor) -> String {
    let elements = element_texts(t);
    let mut out = String::new();
    nest(&mut out, t.shape(), &elements, 0);
    out
}

fn nest(out: &mut String, shape: &[i64], elements: &[String], offset: usize) {
    match shape.split_first() {
        None => out.push_str(elements.get(offset).map_or("0", String::as_str)),
        Some((&d, rest)) => {
            let stride: usize = rest.iter().map(|&x| x.max(0) as usize).product();
            out.push('[');
            for i in 0..d.max(0) as usize {
                if i > 0 {
                    out.push_str(", ");
                }
                nest(out, rest, elements, offset + i * stride);
            }
            out.push(']');
        }
    }
}

/// Each element as a Python literal. Integers are read from their bytes, so
/// 64-bit values beyond 2^53 print exactly; floats print in the shortest form
/// that reads back to the same value of their width.
fn element_texts(t: &Tensor) -> Vec<String> {
    let dtype = t.dtype();
    let width = dtype.size_in_bytes();
    let integer = matches!(dtype.code(), TypeCode::Int | TypeCode::UInt) && !dtype.is_bool();
    if integer && dtype.lanes() == 1 && (1..=8).contains(&width) {
        let signed = dtype.code() == TypeCode::Int;
        return t
            .as_bytes()
            .chunks_exact(width)
            .take(t.numel())
            .map(|b| int_text(b, signed))
            .collect();
    }
    t.to_f64_vec()
        .into_iter()
        .map(|v| scalar_text(dtype, v))
        .collect()
}

fn int_text(bytes: &[u8], signed: bool) -> String {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    let raw = u64::from_le_bytes(buf);
    if signed {
        let shift = 64 - 8 * bytes.len() as u32;
        (((raw << shift) as i64) >> shift).to_string()
    } else {
        raw.to_string()
    }
}

fn scalar_text(dtype: DataType, v: f64) -> String {
    if dtype.is_bool() {
        (if v != 0.0 { "True" } else { "False" }).into()
    } else if dtype.is_float() {
        relax_runtime::tensor::format_float(v, dtype.bits())
    } else {
        // Not a number type (a handle): print what the runtime reads.
        relax_runtime::tensor::format_float(v, 64)
    }
}
