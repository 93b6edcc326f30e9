//! The output pool: buffers of native-kernel outputs kept for reuse (the
//! run-time half of memory planning; the compiler's half is the `Kill`
//! instruction after a dataflow variable's last use).
//!
//! 1. Every output a native kernel writes is also kept here. The next
//!    output takes the buffer of a kept tensor that nothing else holds any
//!    more (the pool's handle is the only one), instead of allocating: an
//!    intermediate killed earlier in the same call, or any tensor of an
//!    earlier call the caller has dropped. Any dtype and shape may take a
//!    buffer of at least its bytes and at most [`MAX_SLACK`] times them:
//!    the smallest such, and of those the one kept last. So the outputs of
//!    a model's layers cycle through a few buffers that stay in the caches
//!    (the role of TVM's storage tokens in `StaticPlanBlockMemory`), where
//!    one buffer per distinct shape made every layer write memory no layer
//!    had touched since the call before: MobileNet v2's layers ran two to
//!    three times slower in the model than alone.
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

/// How many times an output's bytes a buffer it takes may have.
pub const MAX_SLACK: usize = 4;

/// See the module docs. The kept tensors are few, so a scan finds one:
/// no key is built or hashed on the call path.
#[derive(Default)]
pub(super) struct OutputPool {
    kept: Mutex<Vec<Tensor>>,
}

impl OutputPool {
    /// The buffer of a kept tensor that nothing else holds, as a tensor
    /// of `dtype` and `shape` (module docs: the best fit, then the last
    /// kept).
    pub(super) fn take(&self, dtype: DataType, shape: &[i64]) -> Option<Tensor> {
        let bytes = Tensor::bytes_of(dtype, shape)?;
        let mut kept = self.kept.lock().ok()?;
        let fits = |t: &Tensor| {
            t.capacity() >= bytes && t.capacity() <= bytes.max(1).saturating_mul(MAX_SLACK)
        };
        let (i, _) = kept
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, t)| fits(t) && t.is_unique())
            .min_by_key(|(_, t)| t.capacity())?;
        let t = kept.remove(i);
        t.reuse_as(dtype, shape)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(shape: &[i64]) -> Tensor {
        Tensor::zeros(DataType::f32(), shape).unwrap()
    }

    #[test]
    fn a_free_buffer_is_taken_by_any_shape_and_dtype_it_fits() {
        let pool = OutputPool::default();
        let t = f32s(&[4, 4]);
        pool.keep(&t);
        // Held by the caller: not handed out.
        assert!(pool.take(DataType::f32(), &[4, 4]).is_none());
        drop(t);
        // 64 bytes: a (2, 8) float32, or a (4, 4) float16 in 32 of them.
        let u = pool.take(DataType::f32(), &[2, 8]).unwrap();
        assert_eq!((u.shape(), u.as_bytes().len()), (&[2i64, 8][..], 64));
        pool.keep(&u);
        drop(u);
        let h = pool.take(DataType::f16(), &[4, 4]).unwrap();
        assert_eq!(
            (h.dtype(), h.as_bytes().len(), h.capacity()),
            (DataType::f16(), 32, 64)
        );
        pool.keep(&h);
        drop(h);
        // Too large, or more than MAX_SLACK times too small: a new buffer.
        assert!(pool.take(DataType::f32(), &[17]).is_none());
        assert!(pool.take(DataType::f32(), &[3]).is_none());
        assert!(pool.take(DataType::f32(), &[4]).is_some());
    }

    #[test]
    fn the_smallest_fit_then_the_last_kept_is_taken() {
        let pool = OutputPool::default();
        let (big, small_a, small_b) = (f32s(&[32]), f32s(&[16]), f32s(&[16]));
        for t in [&big, &small_a, &small_b] {
            pool.keep(t);
        }
        let (big_p, a_p, b_p) = (
            big.as_bytes().as_ptr(),
            small_a.as_bytes().as_ptr(),
            small_b.as_bytes().as_ptr(),
        );
        drop((big, small_a, small_b));
        let t = pool.take(DataType::f32(), &[12]).unwrap();
        assert_eq!(t.as_bytes().as_ptr(), b_p, "the last kept of the smallest");
        let t2 = pool.take(DataType::f32(), &[12]).unwrap();
        assert_eq!(t2.as_bytes().as_ptr(), a_p);
        let t3 = pool.take(DataType::f32(), &[12]).unwrap();
        assert_eq!(t3.as_bytes().as_ptr(), big_p);
        assert!(pool.take(DataType::f32(), &[12]).is_none());
    }
}
