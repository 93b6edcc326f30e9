//! `Buffer`: a typed, shaped view of memory in the loop-level IR.
//!
//! 1. A buffer has a name, an element dtype, a shape of PrimExprs (symbolic
//!    dims allowed) and optional strides (empty = contiguous, row-major).
//! 2. Identity is a unique id, like a variable's: two buffers with the same
//!    name and shape are different buffers.
//! 3. Buffers are immutable and shared through `Arc`.
//! 4. A buffer has a storage scope (TVM's `Buffer.scope()`): `"global"`
//!    (main memory, the default) or a narrower one a schedule asks for
//!    (`"local"`, `"shared"`, …, [`Buffer::with_scope`]). The CPU back end
//!    and the interpreter place every scope in main memory; the scope is
//!    kept, printed and compared as TVM does.

use crate::ir::prim_expr::{fresh_id, PrimExpr};
use relax_runtime::DataType;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

struct BufferNode {
    id: u64,
    name: String,
    dtype: DataType,
    shape: Vec<PrimExpr>,
    strides: Vec<PrimExpr>,
    scope: String,
}

/// A buffer. See the module docs.
#[derive(Clone)]
pub struct Buffer(Arc<BufferNode>);

impl Buffer {
    /// A new contiguous buffer.
    pub fn new(name: impl Into<String>, shape: Vec<PrimExpr>, dtype: DataType) -> Self {
        Self::with_strides(name, shape, dtype, vec![])
    }
    /// A new buffer with explicit strides (in elements).
    pub fn with_strides(
        name: impl Into<String>,
        shape: Vec<PrimExpr>,
        dtype: DataType,
        strides: Vec<PrimExpr>,
    ) -> Self {
        Buffer(Arc::new(BufferNode {
            id: fresh_id(),
            name: name.into(),
            dtype,
            shape,
            strides,
            scope: "global".to_string(),
        }))
    }
    /// A new buffer like this one (name, dtype, shape, strides) in the
    /// storage scope `scope`: a different buffer, by identity.
    pub fn with_scope(&self, scope: &str) -> Self {
        Buffer(Arc::new(BufferNode {
            id: fresh_id(),
            name: self.0.name.clone(),
            dtype: self.0.dtype,
            shape: self.0.shape.clone(),
            strides: self.0.strides.clone(),
            scope: scope.to_string(),
        }))
    }
    /// The storage scope (`"global"` unless set).
    pub fn scope(&self) -> &str {
        &self.0.scope
    }
    /// The identity.
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// The name it prints with.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.0.dtype
    }
    /// The dims.
    pub fn shape(&self) -> &[PrimExpr] {
        &self.0.shape
    }
    /// The strides in elements; empty when contiguous.
    pub fn strides(&self) -> &[PrimExpr] {
        &self.0.strides
    }
    /// The element offset of `indices` (row-major, or through the strides).
    pub fn offset_of(&self, indices: &[PrimExpr]) -> PrimExpr {
        if !self.0.strides.is_empty() {
            return indices
                .iter()
                .zip(&self.0.strides)
                .fold(PrimExpr::int(0), |acc, (i, s)| acc + i.clone() * s.clone());
        }
        indices
            .iter()
            .zip(&self.0.shape)
            .fold(PrimExpr::int(0), |acc, (i, d)| acc * d.clone() + i.clone())
    }
}

impl PartialEq for Buffer {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for Buffer {}
impl Hash for Buffer {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Buffer({}#{}, {:?}, {})",
            self.0.name, self.0.id, self.0.shape, self.0.dtype
        )
    }
}
