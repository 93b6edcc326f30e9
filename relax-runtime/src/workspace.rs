//! Scratch memory for compiled kernels (the role of TVM's
//! `TVMBackendAllocWorkspace` / `TVMBackendFreeWorkspace`).
//!
//! 1. A kernel's intermediate buffers that are too large for its stack (an
//!    attention's score matrix, a GEMM's packed panels) are taken with
//!    [`relax_workspace_alloc`] and given back with
//!    [`relax_workspace_free`], in the same scope on the same thread.
//! 2. A block given back is kept in a per-thread cache, keyed by its size,
//!    and handed to the next request of that size: a model called in a loop
//!    asks for the same sizes every time, and reusing the pages it already
//!    touched saves the operating system's page faults and zeroing (a
//!    fresh 12 MiB block costs about 3000 faults; for an attention over 500
//!    tokens that was half the kernel's time).
//! 3. The cache holds at most [`CACHE_LIMIT`] bytes per thread; a block
//!    that would pass it is freed, the oldest first. A thread's cache is
//!    freed when the thread exits.
//! 4. Blocks are aligned to 64 bytes (a cache line, an AVX-512 vector).
//!    A request the allocator refuses returns null, which the kernel
//!    reports as an out-of-memory error.

use std::alloc::{alloc, dealloc, Layout};
use std::cell::RefCell;

/// The most bytes a thread keeps for reuse.
pub const CACHE_LIMIT: usize = 512 << 20;

/// The alignment of every block.
const ALIGN: usize = 64;

/// Blocks given back on this thread, oldest first.
struct Cache {
    blocks: Vec<(usize, *mut u8)>,
    bytes: usize,
}

impl Drop for Cache {
    fn drop(&mut self) {
        for &(size, p) in &self.blocks {
            release(p, size);
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache { blocks: Vec::new(), bytes: 0 }) };
}

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.max(1), ALIGN).ok()
}

fn release(p: *mut u8, size: usize) {
    if let Some(l) = layout(size) {
        // SAFETY: `p` came from `alloc` with this layout
        // (`relax_workspace_alloc`, the same size).
        unsafe { dealloc(p, l) }
    }
}

/// A block of `bytes` bytes, aligned to 64, or null when the allocator
/// refuses it. Give it back with [`relax_workspace_free`] and the same
/// size.
#[no_mangle]
pub extern "C" fn relax_workspace_alloc(bytes: i64) -> *mut u8 {
    let Ok(size) = usize::try_from(bytes) else {
        return std::ptr::null_mut();
    };
    let reused = CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            let i = c.blocks.iter().rposition(|&(s, _)| s == size)?;
            let (_, p) = c.blocks.remove(i);
            c.bytes -= size;
            Some(p)
        })
        .ok()
        .flatten();
    if let Some(p) = reused {
        return p;
    }
    match layout(size) {
        // SAFETY: the layout has a non-zero size.
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// Gives back a block of [`relax_workspace_alloc`].
///
/// # Safety
/// `p` must come from `relax_workspace_alloc(bytes)` on this thread and
/// not have been given back yet; null is ignored.
#[no_mangle]
pub unsafe extern "C" fn relax_workspace_free(p: *mut u8, bytes: i64) {
    if p.is_null() {
        return;
    }
    let size = usize::try_from(bytes).unwrap_or(0);
    let kept = CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            if size > CACHE_LIMIT {
                return false;
            }
            while c.bytes + size > CACHE_LIMIT {
                let (s, old) = c.blocks.remove(0);
                c.bytes -= s;
                release(old, s);
            }
            c.blocks.push((size, p));
            c.bytes += size;
            true
        })
        .unwrap_or(false);
    if !kept {
        release(p, size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_given_back_is_reused_for_the_same_size() {
        let a = relax_workspace_alloc(1 << 20);
        assert!(!a.is_null());
        assert_eq!(a as usize % ALIGN, 0);
        // SAFETY: a fresh block of this size, written within it.
        unsafe {
            a.write_bytes(7, 1 << 20);
            relax_workspace_free(a, 1 << 20);
        }
        let b = relax_workspace_alloc(1 << 20);
        assert_eq!(a, b, "the cached block");
        let c = relax_workspace_alloc(1 << 10);
        assert_ne!(c, b);
        // SAFETY: both are live blocks of these sizes.
        unsafe {
            relax_workspace_free(b, 1 << 20);
            relax_workspace_free(c, 1 << 10);
        }
    }

    #[test]
    fn the_cache_stays_under_its_limit_and_refusals_are_null() {
        let big = relax_workspace_alloc(CACHE_LIMIT as i64 / 2 + 1);
        let big2 = relax_workspace_alloc(CACHE_LIMIT as i64 / 2 + 1);
        // SAFETY: live blocks of these sizes.
        unsafe {
            relax_workspace_free(big, CACHE_LIMIT as i64 / 2 + 1);
            relax_workspace_free(big2, CACHE_LIMIT as i64 / 2 + 1);
        }
        CACHE.with(|c| assert!(c.borrow().bytes <= CACHE_LIMIT));
        assert!(relax_workspace_alloc(-1).is_null());
        assert!(relax_workspace_alloc(i64::MAX).is_null());
        // SAFETY: null is ignored.
        unsafe { relax_workspace_free(std::ptr::null_mut(), 8) };
    }
}
