//! The output pool: buffers of native-kernel outputs kept for reuse (the
//! run-time half of memory planning; the compiler's half is the `Kill`
//! instruction after a dataflow variable's last use).
//!
//! 1. Every output a native kernel writes is also kept here. The next
//!    output of the same dtype and shape takes a kept
//!    tensor that nothing else holds any more (the pool's handle is the only
//!    one), instead of allocating: an intermediate killed earlier in the
//!    same call, or any tensor of an earlier call the caller has dropped.
//! 2. A tensor anybody else still holds (a live register, a result the
//!    caller keeps, a tuple field) is never handed out, so nothing a caller
//!    can see is written.
//! 3. The pool keeps at most [`MAX_KEPT`] tensors; when full, it drops a
//!    free one to make room, or keeps nothing new. Kept tensors count
//!    against the VM's memory limit; [`OutputPool::clear`] gives them back
//!    when the limit refuses an allocation.
//! 4. A reused buffer is not zeroed: a kernel writes all of its outputs.
//! 5. A tensor written in place (`call_tir_inplace`) is first released
//!    from the pool ([`OutputPool::release`]), so the pool's own handle
//!    does not make it look shared; the result is kept again afterwards.

use crate::data_type::DataType;
use crate::tensor::Tensor;
use std::sync::Mutex;

/// The most tensors a pool keeps.
pub const MAX_KEPT: usize = 64;

/// See the module docs. The kept tensors are few, so a scan finds one:
/// no key is built or hashed on the call path.
#[derive(Default)]
pub(super) struct OutputPool {
    kept: Mutex<Vec<Tensor>>,
}

impl OutputPool {
    /// A kept tensor of `dtype` and `shape` that nothing else holds.
    pub(super) fn take(&self, dtype: DataType, shape: &[i64]) -> Option<Tensor> {
        let mut kept = self.kept.lock().ok()?;
        let i = kept
            .iter()
            .position(|t| t.dtype() == dtype && t.shape() == shape && t.is_unique())?;
        Some(kept.swap_remove(i))
    }

    /// Keeps a handle on `t` for later calls.
    pub(super) fn keep(&self, t: &Tensor) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.len() >= MAX_KEPT {
            // Make room by dropping a tensor nobody else holds.
            match kept.iter().position(Tensor::is_unique) {
                Some(i) => {
                    kept.swap_remove(i);
                }
                None => return,
            }
        }
        kept.push(t.clone());
    }

    /// Drops the kept handles on `t`'s buffer: a tensor about to be
    /// written in place (`call_tir_inplace`) must not stay where the next
    /// output could be handed it.
    pub(super) fn release(&self, t: &Tensor) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.retain(|k| !k.shares_buffer(t));
        }
    }

    /// Whether anything is kept.
    pub(super) fn is_empty(&self) -> bool {
        self.kept.lock().map(|k| k.is_empty()).unwrap_or(true)
    }

    /// Drops every kept handle.
    pub(super) fn clear(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.clear();
        }
    }
}
