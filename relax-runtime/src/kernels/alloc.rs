//! Fallible memory for the reference kernels.
//!
//! 1. Every buffer a reference kernel allocates whose size follows from
//!    user data (its output, a broadcast operand, a permuted copy, a lane
//!    buffer) comes from here: the element count and byte size are checked,
//!    and the memory is reserved with `try_reserve_exact`, so memory the
//!    system refuses is an `Err` naming the bytes asked for, never an abort.
//! 2. A VM with a memory limit runs its reference kernels inside
//!    [`with_budget`]. Scratch buffers ([`vec`], [`collect`]) are charged to
//!    that budget before they are allocated and stay charged until the
//!    kernel returns (a kernel's scratch is short-lived; counting it until
//!    the end over-estimates its peak, never under-estimates it). The
//!    output tensor ([`tensor`]) is charged for as long as it lives, as a
//!    native kernel's output is.
//! 3. The budget is the calling thread's: reference kernels run on the
//!    thread that calls the VM, so nothing here is shared between threads.

use crate::data_type::DataType;
use crate::tensor::{Element, MemoryBudget, Tensor};
use std::cell::RefCell;
use std::sync::Arc;

/// The budget of the kernel running on this thread, and the scratch bytes
/// charged to it so far.
struct Current {
    budget: Arc<MemoryBudget>,
    scratch: usize,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// Runs `f` (a reference kernel) with its allocations charged to `budget`;
/// its scratch is given back when `f` returns.
pub fn with_budget<R>(budget: Option<&Arc<MemoryBudget>>, f: impl FnOnce() -> R) -> R {
    let Some(budget) = budget else {
        return f();
    };
    /// Gives the scratch back and restores the outer state, also when `f`
    /// unwinds.
    struct Restore(Option<Current>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            if let Some(done) = CURRENT.with(|c| c.replace(outer)) {
                done.budget.release_bytes(done.scratch);
            }
        }
    }
    let outer = CURRENT.with(|c| {
        c.replace(Some(Current {
            budget: budget.clone(),
            scratch: 0,
        }))
    });
    let _restore = Restore(outer);
    f()
}

/// The bytes of `n` elements of `T`, or an error when they do not fit in
/// the address space.
fn bytes_of<T>(n: usize) -> Result<usize, String> {
    n.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| format!("{n} elements have more bytes than the address space holds"))
}

/// Charges `bytes` of scratch to the current budget, if any.
fn charge_scratch(bytes: usize) -> Result<(), String> {
    CURRENT.with(|c| match c.borrow_mut().as_mut() {
        None => Ok(()),
        Some(cur) => {
            cur.budget.charge_bytes(bytes).map_err(|left| {
                format!(
                    "cannot allocate {bytes} bytes of scratch: the memory limit of {} bytes \
                     leaves {left}",
                    cur.budget.limit()
                )
            })?;
            cur.scratch += bytes;
            Ok(())
        }
    })
}

/// An empty vector with room for `n` elements, or an error when the system
/// or the budget does not give the memory.
pub(crate) fn vec<T>(n: usize) -> Result<Vec<T>, String> {
    let bytes = bytes_of::<T>(n)?;
    charge_scratch(bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        format!("cannot allocate {bytes} bytes of scratch: the system has no memory for it")
    })?;
    Ok(v)
}

/// The `n` items of `items` in a vector allocated by [`vec`] (an iterator
/// yielding more than `n` items would grow it: callers pass the exact
/// count).
pub(crate) fn collect<T>(n: usize, items: impl IntoIterator<Item = T>) -> Result<Vec<T>, String> {
    let mut v = vec(n)?;
    v.extend(items);
    Ok(v)
}

/// As [`collect`], for items that may fail: the first error is returned.
pub(crate) fn try_collect<T>(
    n: usize,
    items: impl IntoIterator<Item = Result<T, String>>,
) -> Result<Vec<T>, String> {
    let mut v = vec(n)?;
    for item in items {
        v.push(item?);
    }
    Ok(v)
}

/// Refills `buf` (a buffer reused from lane to lane) with the `n` items of
/// `items`, growing it through the same checks as [`vec`] when it is too
/// small.
pub(crate) fn refill<T>(
    buf: &mut Vec<T>,
    n: usize,
    items: impl IntoIterator<Item = T>,
) -> Result<(), String> {
    buf.clear();
    if buf.capacity() < n {
        *buf = vec(n)?;
    }
    buf.extend(items);
    Ok(())
}

/// A zero-filled tensor of `dtype` and `shape`, charged to the current
/// budget (if any) for as long as it lives.
pub(crate) fn zeros(dtype: DataType, shape: &[i64]) -> Result<Tensor, String> {
    Tensor::zeros_in(dtype, shape, current().as_ref()).map_err(|e| e.to_string())
}

/// The current budget, if any.
fn current() -> Option<Arc<MemoryBudget>> {
    CURRENT.with(|c| c.borrow().as_ref().map(|cur| cur.budget.clone()))
}

/// A tensor of `shape` holding row-major `data`, charged to the current
/// budget (if any) for as long as it lives.
pub(crate) fn tensor<T: Element>(shape: &[i64], data: &[T]) -> Result<Tensor, String> {
    Tensor::from_slice_in(shape, data, current().as_ref()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_counts_against_the_budget_until_the_kernel_returns() {
        let budget = Arc::new(MemoryBudget::new(1000));
        with_budget(Some(&budget), || {
            let a = vec::<u8>(600).unwrap();
            assert_eq!(budget.live(), 600);
            drop(a);
            let err = vec::<u8>(600).unwrap_err();
            assert!(
                err.contains("memory limit of 1000 bytes leaves 400"),
                "{err}"
            );
            let t = tensor::<u8>(&[4], &[1, 2, 3, 4]).unwrap();
            assert_eq!(budget.live(), 604);
            t
        });
        // The scratch is given back; the output's 4 bytes went with it.
        assert_eq!(budget.live(), 0);
    }

    #[test]
    fn a_huge_request_is_an_error_not_an_abort() {
        let err = vec::<f64>(usize::MAX / 4).unwrap_err();
        assert!(err.contains("address space"), "{err}");
        let err = vec::<u8>(isize::MAX as usize - 1).unwrap_err();
        assert!(err.contains("system has no memory"), "{err}");
    }

    #[test]
    fn without_a_budget_nothing_is_charged() {
        assert_eq!(collect(3, [1, 2, 3]).unwrap(), [1, 2, 3]);
        let failed = try_collect(2, [Ok(1), Err("bad".to_string())]);
        assert_eq!(failed.unwrap_err(), "bad");
    }
}
