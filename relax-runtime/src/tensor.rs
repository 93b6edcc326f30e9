//! The runtime tensor: a dtype, a shape and a 64-byte-aligned contiguous buffer.
//!
//! 1. The buffer is row-major (C order) and contiguous; its start is aligned to
//!    64 bytes so kernels may use aligned vector loads. The exception is a
//!    tensor over external bytes ([`Tensor::from_external`], the weights of a
//!    memory-mapped checkpoint): it is aligned to its element only, and it
//!    is never written (it is never unique, so nothing takes it as an
//!    output); generated code reads inputs at element alignment.
//! 2. A tensor is immutable once built and cheap to clone (the buffer is shared
//!    through an `Arc`), so it can sit in a `Constant` of a `static` module.
//! 3. `bool` elements take one byte each (0 or 1).
//!
//! Typed access goes through [`Element`], implemented for the Rust scalar types
//! that have a Relax dtype, and for the `half` crate's `f16` and `bf16`.

use crate::data_type::DataType;
use std::fmt;
use std::sync::Arc;

/// A Rust scalar type with a Relax dtype.
///
/// # Safety
/// Implementors must be plain-old-data types of exactly `DTYPE.size_in_bytes()`
/// bytes for which every bit pattern the runtime writes is valid.
pub unsafe trait Element: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The dtype of this element type.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dt:expr),* $(,)?) => {
        $(unsafe impl Element for $t { const DTYPE: DataType = $dt; })*
    };
}

element! {
    f32 => DataType::f32(),
    f64 => DataType::f64(),
    i8 => DataType::int(8),
    i16 => DataType::int(16),
    i32 => DataType::int(32),
    i64 => DataType::int(64),
    u8 => DataType::uint(8),
    u16 => DataType::uint(16),
    u32 => DataType::uint(32),
    u64 => DataType::uint(64),
    bool => DataType::bool(),
    half::f16 => DataType::f16(),
    half::bf16 => DataType::bf16(),
}

/// The alignment of tensor data (a cache line; AVX-512 vectors).
const ALIGN: usize = 64;

/// A 64-byte-aligned, zero-initialized byte buffer, charged to a
/// [`MemoryBudget`] while it lives when it was allocated under one.
///
/// It is allocated with `calloc` semantics (`alloc_zeroed` at byte
/// alignment, then aligned inside by an offset): for large buffers the
/// system hands out pages that are zero until first written, so a kernel
/// that writes its whole output does not also pay for zero-filling it, and
/// the pages are touched by the kernel's own (possibly parallel) threads.
struct AlignedBuffer {
    /// The allocation's start (what is freed).
    base: std::ptr::NonNull<u8>,
    /// The data's offset from `base` (to reach the alignment).
    offset: usize,
    /// The data's length in bytes.
    len: usize,
    /// The budget to give the bytes back to (a trait object: tensors sit
    /// in hashed IR nodes, and their identity never depends on it).
    budget: Option<Arc<dyn Release>>,
    /// For bytes this buffer does not own ([`Tensor::from_external`]): what
    /// keeps them alive (a memory map, say). `base` then points into it,
    /// nothing is freed on drop, and the bytes are never written.
    external: Option<Arc<dyn Send + Sync>>,
}

// SAFETY: the buffer owns its allocation exclusively (like a `Vec<u8>`);
// shared access is read-only, mutable access needs `&mut`.
unsafe impl Send for AlignedBuffer {}
// SAFETY: as above.
unsafe impl Sync for AlignedBuffer {}

/// What a budget does when a tensor charged to it is dropped.
trait Release: Send + Sync {
    fn release(&self, bytes: usize);
}

impl Clone for AlignedBuffer {
    /// A copy is not charged to the budget: only what the budget's owner
    /// allocated is. Running out of memory here aborts, as cloning a `Vec`
    /// does (`Clone` cannot fail); the tensors a VM allocates are shared,
    /// never cloned.
    fn clone(&self) -> Self {
        let mut copy = AlignedBuffer::try_zeroed(self.len)
            .unwrap_or_else(|| std::alloc::handle_alloc_error(Self::layout(self.len)));
        copy.as_bytes_mut().copy_from_slice(self.as_bytes());
        copy
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        if self.external.is_some() {
            return;
        }
        if let Some(b) = &self.budget {
            b.release(self.len);
        }
        // SAFETY: `base` was allocated in `try_zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), Self::layout(self.len)) }
    }
}

impl AlignedBuffer {
    fn layout(len: usize) -> std::alloc::Layout {
        // `len` was checked against `isize::MAX` by the tensor constructor;
        // the extra bytes make room for the alignment offset.
        std::alloc::Layout::from_size_align(len.saturating_add(ALIGN), 1)
            .unwrap_or_else(|_| std::alloc::Layout::new::<[u8; ALIGN]>())
    }

    /// `len` zero bytes, or `None` when the system does not give them (the
    /// allocation fails instead of aborting the process).
    fn try_zeroed(len: usize) -> Option<Self> {
        if len > isize::MAX as usize - ALIGN {
            return None;
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let base = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        let offset = base.as_ptr().align_offset(ALIGN);
        if offset >= ALIGN {
            // SAFETY: allocated just above with this layout.
            unsafe { std::alloc::dealloc(base.as_ptr(), layout) };
            return None;
        }
        Some(AlignedBuffer {
            base,
            offset,
            len,
            budget: None,
            external: None,
        })
    }
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: the allocation holds `offset + len` zero-initialized or
        // written bytes (`layout` reserves `ALIGN >= offset` extra).
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.offset), self.len) }
    }
    /// Only for owned buffers: the callers are `Tensor`'s constructors,
    /// which write fresh buffers, and [`Tensor::bytes_mut`], which refuses
    /// external ones.
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        debug_assert!(self.external.is_none(), "external bytes are read-only");
        // SAFETY: as above, and `&mut self` is the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(self.offset), self.len) }
    }
}

/// Why a tensor could not be built or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensorError {
    /// The element count of the data differs from the product of the shape.
    ShapeMismatch {
        /// The requested shape.
        shape: Vec<i64>,
        /// How many elements were given.
        elements: usize,
    },
    /// A dimension is negative.
    NegativeDim(Vec<i64>),
    /// The tensor's dtype is not the requested element type.
    DTypeMismatch {
        /// The dtype that was asked for.
        expected: DataType,
        /// The tensor's dtype.
        found: DataType,
    },
    /// The dtype has no storage (void, or a vector of lanes).
    UnsupportedDType(DataType),
    /// The tensor's size in bytes does not fit in the address space.
    TooLarge {
        /// The requested shape.
        shape: Vec<i64>,
        /// The dtype.
        dtype: DataType,
    },
    /// The memory could not be had: the system refused it, or it would take
    /// a [`MemoryBudget`] past its limit.
    AllocationFailed {
        /// The requested shape.
        shape: Vec<i64>,
        /// The dtype.
        dtype: DataType,
        /// The bytes asked for.
        bytes: usize,
        /// Why (the system, or the budget and what it had left).
        reason: String,
    },
    /// External bytes ([`Tensor::from_external`]) that cannot hold the
    /// tensor: a range outside its owner's bytes, of another length than
    /// the shape needs, or not aligned to the element's size.
    ExternalBytes {
        /// The requested shape.
        shape: Vec<i64>,
        /// The dtype.
        dtype: DataType,
        /// The byte range asked for.
        range: std::ops::Range<usize>,
        /// How many bytes the owner holds.
        owner_len: usize,
    },
}

/// A limit on the bytes of the tensors allocated under it that are alive at
/// once (a VM's, see `VirtualMachine::with_memory_limit`). Allocation checks
/// and charges it before any memory is taken; a tensor gives its bytes back
/// when its last clone is dropped. Shared by threads.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    live: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        MemoryBudget {
            limit,
            live: std::sync::atomic::AtomicUsize::new(0),
            peak: std::sync::atomic::AtomicUsize::new(0),
        }
    }
    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
    /// The bytes charged now.
    pub fn live(&self) -> usize {
        self.live.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// The most bytes ever charged at once (the high-water mark).
    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Charges `bytes`, or says how much was left.
    pub(crate) fn charge_bytes(&self, bytes: usize) -> Result<(), usize> {
        use std::sync::atomic::Ordering;
        let mut cur = self.live.load(Ordering::Relaxed);
        loop {
            let next = match cur.checked_add(bytes) {
                Some(n) if n <= self.limit => n,
                _ => return Err(self.limit.saturating_sub(cur)),
            };
            match self
                .live
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return Ok(());
                }
                Err(seen) => cur = seen,
            }
        }
    }
}

impl MemoryBudget {
    /// Gives back `bytes` charged earlier.
    pub(crate) fn release_bytes(&self, bytes: usize) {
        self.live
            .fetch_sub(bytes, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Release for MemoryBudget {
    fn release(&self, bytes: usize) {
        self.release_bytes(bytes);
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::ShapeMismatch { shape, elements } => write!(
                f,
                "shape {} needs {} elements, but {elements} were given",
                fmt_shape(shape),
                shape.iter().product::<i64>()
            ),
            TensorError::NegativeDim(shape) => {
                write!(f, "shape {} has a negative dimension", fmt_shape(shape))
            }
            TensorError::DTypeMismatch { expected, found } => {
                write!(f, "expected a tensor of dtype {expected}, found {found}")
            }
            TensorError::UnsupportedDType(dt) => write!(f, "a tensor cannot hold dtype {dt}"),
            TensorError::TooLarge { shape, dtype } => write!(
                f,
                "a {dtype} tensor of shape {} has more bytes than the address space holds",
                fmt_shape(shape)
            ),
            TensorError::AllocationFailed {
                shape,
                dtype,
                bytes,
                reason,
            } => write!(
                f,
                "cannot allocate a {dtype} tensor of shape {} ({bytes} bytes): {reason}",
                fmt_shape(shape)
            ),
            TensorError::ExternalBytes {
                shape,
                dtype,
                range,
                owner_len,
            } => write!(
                f,
                "bytes {}..{} of {owner_len} cannot hold a {dtype} tensor of shape {}: \
                 it needs exactly its elements' bytes, inside the owner, at an address \
                 that is a multiple of {} bytes",
                range.start,
                range.end,
                fmt_shape(shape),
                dtype.size_in_bytes().max(1)
            ),
        }
    }
}

impl std::error::Error for TensorError {}

/// Prints a shape as the DSL does: `(3, 4)`, `(5,)`, `()`.
pub fn fmt_shape(shape: &[i64]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A dense, immutable, shared n-dimensional array.
///
/// Its bytes are the first `len` of a shared buffer: all of it, except for
/// a view ([`Tensor::create_view`]), which reads a prefix of a larger one
/// (the filled rows of a KV cache's reserved storage) without copying.
#[derive(Clone)]
pub struct Tensor {
    dtype: DataType,
    shape: Arc<[i64]>,
    data: Arc<AlignedBuffer>,
    /// The bytes of `shape` and `dtype`, at most the buffer's length.
    len: usize,
}

impl Tensor {
    /// A zero-filled tensor. A size that overflows, or memory the system
    /// does not give, is an `Err`, never an abort.
    pub fn zeros(dtype: DataType, shape: &[i64]) -> Result<Tensor, TensorError> {
        Self::zeros_in(dtype, shape, None)
    }

    /// A zero-filled tensor charged to `budget` (if any) while it lives: an
    /// `Err` before anything is allocated when it would pass the limit.
    pub fn zeros_in(
        dtype: DataType,
        shape: &[i64],
        budget: Option<&Arc<MemoryBudget>>,
    ) -> Result<Tensor, TensorError> {
        let n = checked_numel(shape, dtype)?;
        if dtype.is_void() || dtype.lanes() != 1 {
            return Err(TensorError::UnsupportedDType(dtype));
        }
        let bytes = n
            .checked_mul(dtype.size_in_bytes())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| TensorError::TooLarge {
                shape: shape.to_vec(),
                dtype,
            })?;
        let failed = |reason: String| TensorError::AllocationFailed {
            shape: shape.to_vec(),
            dtype,
            bytes,
            reason,
        };
        if let Some(b) = budget {
            b.charge_bytes(bytes).map_err(|left| {
                failed(format!(
                    "the memory limit of {} bytes leaves {left}",
                    b.limit()
                ))
            })?;
        }
        let Some(mut buffer) = AlignedBuffer::try_zeroed(bytes) else {
            if let Some(b) = budget {
                b.release(bytes);
            }
            return Err(failed("the system has no memory for it".into()));
        };
        buffer.budget = budget.map(|b| b.clone() as Arc<dyn Release>);
        Ok(Tensor {
            dtype,
            shape: shape.into(),
            data: Arc::new(buffer),
            len: bytes,
        })
    }

    /// A tensor from row-major elements.
    pub fn from_vec<T: Element>(shape: &[i64], data: Vec<T>) -> Result<Tensor, TensorError> {
        Self::from_slice(shape, &data)
    }

    /// A tensor from row-major elements (copied).
    pub fn from_slice<T: Element>(shape: &[i64], data: &[T]) -> Result<Tensor, TensorError> {
        Self::from_slice_in(shape, data, None)
    }

    /// A tensor from row-major elements (copied), charged to `budget` (if
    /// any) while it lives.
    pub fn from_slice_in<T: Element>(
        shape: &[i64],
        data: &[T],
        budget: Option<&Arc<MemoryBudget>>,
    ) -> Result<Tensor, TensorError> {
        let n = checked_numel(shape, T::DTYPE)?;
        if n != data.len() {
            return Err(TensorError::ShapeMismatch {
                shape: shape.to_vec(),
                elements: data.len(),
            });
        }
        let mut t = Self::zeros_in(T::DTYPE, shape, budget)?;
        let buf = Arc::get_mut(&mut t.data).expect("fresh buffer is unshared");
        // SAFETY: T is plain old data (Element's contract) and the buffer holds
        // exactly n * size_of::<T>() bytes.
        let src = unsafe {
            std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data))
        };
        buf.as_bytes_mut().copy_from_slice(src);
        Ok(t)
    }

    /// A rank-0 tensor holding `value`.
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Self::from_slice(&[], &[value]).expect("a scalar always has one element")
    }

    /// A tensor from raw little-endian bytes in row-major order.
    pub fn from_bytes(dtype: DataType, shape: &[i64], bytes: &[u8]) -> Result<Tensor, TensorError> {
        let mut t = Self::zeros(dtype, shape)?;
        let elem = dtype.size_in_bytes();
        if bytes.len() != t.len {
            return Err(TensorError::ShapeMismatch {
                shape: shape.to_vec(),
                elements: bytes.len() / elem.max(1),
            });
        }
        Arc::get_mut(&mut t.data)
            .expect("fresh buffer is unshared")
            .as_bytes_mut()
            .copy_from_slice(bytes);
        Ok(t)
    }

    /// The same elements under `shape`, which must have as many: the
    /// buffer is shared, not copied (tensors are immutable).
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor, TensorError> {
        let n = checked_numel(shape, self.dtype)?;
        if n != self.numel() {
            return Err(TensorError::ShapeMismatch {
                shape: shape.to_vec(),
                elements: self.numel(),
            });
        }
        Ok(Tensor {
            dtype: self.dtype,
            shape: shape.into(),
            data: self.data.clone(),
            len: self.len,
        })
    }

    /// A tensor of `shape` (this one's dtype) over this one's first bytes,
    /// sharing the buffer: no copy (TVM's `NDArray::CreateView` at offset
    /// 0). The first rows of a row-major tensor are such a prefix. An
    /// `Err` when `shape` needs more bytes than this tensor has.
    pub fn create_view(&self, shape: &[i64]) -> Result<Tensor, TensorError> {
        let n = checked_numel(shape, self.dtype)?;
        let bytes = n
            .checked_mul(self.dtype.size_in_bytes())
            .filter(|&b| b <= self.len)
            .ok_or_else(|| TensorError::ShapeMismatch {
                shape: shape.to_vec(),
                elements: self.numel(),
            })?;
        Ok(Tensor {
            dtype: self.dtype,
            shape: shape.into(),
            data: self.data.clone(),
            len: bytes,
        })
    }

    /// The bytes a tensor of `dtype` and `shape` holds, if it can exist.
    pub(crate) fn bytes_of(dtype: DataType, shape: &[i64]) -> Option<usize> {
        if dtype.is_void() || dtype.lanes() != 1 {
            return None;
        }
        checked_numel(shape, dtype)
            .ok()?
            .checked_mul(dtype.size_in_bytes())
    }

    /// The bytes of this tensor's whole buffer (more than its own for a
    /// view).
    pub(crate) fn capacity(&self) -> usize {
        self.data.len
    }

    /// A tensor of `dtype` and `shape` over the first bytes of this one's
    /// buffer, its contents whatever the buffer holds: a buffer of the
    /// output pool handed to a kernel that writes all of it. `None` when
    /// the shape needs more bytes than the buffer has.
    pub(crate) fn reuse_as(&self, dtype: DataType, shape: &[i64]) -> Option<Tensor> {
        let bytes = Tensor::bytes_of(dtype, shape).filter(|&b| b <= self.capacity())?;
        Some(Tensor {
            dtype,
            shape: shape.into(),
            data: self.data.clone(),
            len: bytes,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }
    /// The shape, one entry per dimension.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }
    /// The rank.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().map(|&d| d as usize).product()
    }
    /// The raw row-major bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data.as_bytes()[..self.len]
    }
    /// Whether no other tensor shares this one's buffer (so writing to it
    /// is invisible to anyone else). A tensor over external bytes
    /// ([`Tensor::from_external`]) is never unique: its bytes are shared
    /// with their owner.
    pub fn is_unique(&self) -> bool {
        self.data.external.is_none()
            && Arc::strong_count(&self.data) == 1
            && Arc::weak_count(&self.data) == 0
    }

    /// Whether this tensor and `other` share one buffer (a view, a reshape
    /// or a clone of the other).
    pub fn shares_buffer(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }

    /// The raw bytes for writing, if this tensor's buffer is not shared
    /// (a freshly allocated output is not; external bytes always are).
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        let len = self.len;
        if self.data.external.is_some() {
            return None;
        }
        Arc::get_mut(&mut self.data).map(|b| &mut b.as_bytes_mut()[..len])
    }

    /// A tensor over `range` of the bytes `owner` holds, without copying
    /// them: the weights of a memory-mapped checkpoint become tensors that
    /// read the page cache in place. The tensor keeps `owner` alive; it is
    /// read-only (never [`unique`](Self::is_unique)), and a copy of it
    /// (`clone` of the buffer, as copy-on-write does) is an ordinary owned
    /// tensor. An `Err` when `range` is outside the owner's bytes, does not
    /// hold exactly the elements of `shape`, or does not start at a
    /// multiple of the element's size in memory.
    ///
    /// # Safety
    /// `owner.as_ref()` must return the same bytes, at the same address,
    /// for as long as `owner` lives, and nothing may write them meanwhile
    /// (a `Vec<u8>` or `Box<[u8]>` never moved out of its `Arc`, or a
    /// read-only memory map of a file no one changes).
    pub unsafe fn from_external<O: AsRef<[u8]> + Send + Sync + 'static>(
        dtype: DataType,
        shape: &[i64],
        owner: Arc<O>,
        range: std::ops::Range<usize>,
    ) -> Result<Tensor, TensorError> {
        let n = checked_numel(shape, dtype)?;
        if dtype.is_void() || dtype.lanes() != 1 {
            return Err(TensorError::UnsupportedDType(dtype));
        }
        let elem = dtype.size_in_bytes().max(1);
        let bytes = (*owner).as_ref();
        let want = n.checked_mul(elem);
        let data = bytes.get(range.clone());
        let (Some(want), Some(data)) = (want, data) else {
            return Err(TensorError::ExternalBytes {
                shape: shape.to_vec(),
                dtype,
                range,
                owner_len: bytes.len(),
            });
        };
        if data.len() != want || !(data.as_ptr() as usize).is_multiple_of(elem) {
            return Err(TensorError::ExternalBytes {
                shape: shape.to_vec(),
                dtype,
                range,
                owner_len: bytes.len(),
            });
        }
        let base = std::ptr::NonNull::new(data.as_ptr() as *mut u8)
            .unwrap_or(std::ptr::NonNull::dangling());
        Ok(Tensor {
            dtype,
            shape: shape.into(),
            data: Arc::new(AlignedBuffer {
                base,
                offset: 0,
                len: want,
                budget: None,
                external: Some(owner as Arc<dyn Send + Sync>),
            }),
            len: want,
        })
    }
    /// The elements, if `T` is this tensor's element type.
    pub fn as_slice<T: Element>(&self) -> Result<&[T], TensorError> {
        if T::DTYPE != self.dtype {
            return Err(TensorError::DTypeMismatch {
                expected: T::DTYPE,
                found: self.dtype,
            });
        }
        let bytes = self.as_bytes();
        // SAFETY: the buffer is aligned to T (64 bytes, or T's size for
        // external bytes, checked by `from_external`), holds numel elements of T, and
        // was written with values of T.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, self.numel()) })
    }
    /// The elements copied into a `Vec`.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, TensorError> {
        self.as_slice().map(<[T]>::to_vec)
    }
    /// Each element widened to `f64` (integers and bools exactly when they fit).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        let b = self.as_bytes();
        let n = self.numel();
        let w = self.dtype.size_in_bytes();
        (0..n)
            .map(|i| scalar_to_f64(self.dtype, &b[i * w..(i + 1) * w]))
            .collect()
    }
    /// Each element converted to `dtype` as `relax.astype` converts: C
    /// casts, floats rounded to nearest even (`float16` and `bfloat16`
    /// included, from any width), NaN and infinities kept.
    /// A dtype without a Rust element type is [`crate::Error::Unsupported`].
    pub fn astype(&self, dtype: DataType) -> Result<Tensor, crate::Error> {
        crate::kernels::elementwise::cast(self, dtype).map_err(crate::Error::Unsupported)
    }
}

fn checked_numel(shape: &[i64], dtype: DataType) -> Result<usize, TensorError> {
    if shape.iter().any(|&d| d < 0) {
        return Err(TensorError::NegativeDim(shape.to_vec()));
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d as usize))
        .ok_or_else(|| TensorError::TooLarge {
            shape: shape.to_vec(),
            dtype,
        })
}

/// Reads one little-endian element of `dtype` as `f64`.
fn scalar_to_f64(dtype: DataType, b: &[u8]) -> f64 {
    use crate::data_type::TypeCode;
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    let raw = u64::from_le_bytes(buf);
    match (dtype.code(), dtype.bits()) {
        (TypeCode::Float, 32) => f32::from_bits(raw as u32) as f64,
        (TypeCode::Float, 64) => f64::from_bits(raw),
        (TypeCode::Float, 16) => half::f16::from_bits(raw as u16).to_f64(),
        (TypeCode::BFloat, 16) => half::bf16::from_bits(raw as u16).to_f64(),
        (TypeCode::UInt, _) => raw as f64,
        (TypeCode::Int, bits) => {
            let shift = 64 - (b.len() * 8).min(64) as u32;
            let _ = bits;
            ((raw << shift) as i64 >> shift) as f64
        }
        _ => f64::NAN,
    }
}

/// Conversions to and from `ndarray`.
impl Tensor {
    /// A zero-copy view as an ndarray of element type `T`. A tensor with a
    /// zero dim may have other dims whose product ndarray cannot index (it
    /// holds no elements, so it is a valid tensor): viewing it is an error.
    pub fn view<T: Element>(&self) -> Result<ndarray::ArrayViewD<'_, T>, TensorError> {
        let data = self.as_slice::<T>()?;
        let shape: Vec<usize> = self.shape.iter().map(|&d| d as usize).collect();
        ndarray::ArrayViewD::from_shape(shape, data).map_err(|_| TensorError::TooLarge {
            shape: self.shape.to_vec(),
            dtype: self.dtype,
        })
    }

    /// A copy as an owned ndarray of element type `T`; an error names both
    /// dtypes when `T` is not this tensor's element type.
    pub fn to_ndarray<T: Element>(&self) -> Result<ndarray::ArrayD<T>, crate::Error> {
        Ok(self.view::<T>()?.to_owned())
    }

    /// A tensor from an ndarray of any layout and dimension (copied into a
    /// contiguous, aligned buffer in C order).
    pub fn from_ndarray<T, S, D>(array: &ndarray::ArrayBase<S, D>) -> Tensor
    where
        T: Element,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let shape: Vec<i64> = array.shape().iter().map(|&d| d as i64).collect();
        match array.as_slice() {
            Some(contiguous) => Self::from_slice(&shape, contiguous),
            None => Self::from_vec(&shape, array.iter().copied().collect()),
        }
        .expect("an ndarray's element count matches its shape")
    }
}

impl<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension> From<&ndarray::ArrayBase<S, D>>
    for Tensor
{
    fn from(array: &ndarray::ArrayBase<S, D>) -> Self {
        Tensor::from_ndarray(array)
    }
}

impl<T: Element, D: ndarray::Dimension> From<ndarray::Array<T, D>> for Tensor {
    fn from(array: ndarray::Array<T, D>) -> Self {
        Tensor::from_ndarray(&array)
    }
}

impl Tensor {
    /// Whether both have the same dtype and shape and every pair of elements
    /// satisfies `|a - b| <= atol + rtol * |b|` (NaNs never match; exact for
    /// integers when the tolerances are 0).
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64) -> bool {
        self.dtype == other.dtype
            && self.shape == other.shape
            && self
                .to_f64_vec()
                .iter()
                .zip(other.to_f64_vec())
                .all(|(a, b)| (a - b).abs() <= atol + rtol * b.abs())
    }

    /// The largest `|a - b|` over the elements, if dtype and shape agree.
    pub fn max_abs_diff(&self, other: &Tensor) -> Option<f64> {
        if self.dtype != other.dtype || self.shape != other.shape {
            return None;
        }
        Some(
            self.to_f64_vec()
                .iter()
                .zip(other.to_f64_vec())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max),
        )
    }
}

impl PartialEq for Tensor {
    /// Equal dtype, shape and bytes.
    fn eq(&self, other: &Self) -> bool {
        self.dtype == other.dtype
            && self.shape == other.shape
            && self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor({}, {}, {self})",
            fmt_shape(&self.shape),
            self.dtype
        )
    }
}

impl fmt::Display for Tensor {
    /// Nested lists of the elements, as numpy prints them (`[[1.0, 2.0], [3.0, 4.0]]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = self.to_f64_vec();
        let fmt_elem = |v: f64| -> String {
            if self.dtype.is_bool() {
                if v != 0.0 {
                    "True".into()
                } else {
                    "False".into()
                }
            } else if self.dtype.is_float() {
                format_float(v, self.dtype.bits())
            } else {
                format!("{}", v as i128)
            }
        };
        fn rec(
            f: &mut fmt::Formatter<'_>,
            shape: &[i64],
            vals: &[f64],
            fmt_elem: &dyn Fn(f64) -> String,
        ) -> fmt::Result {
            match shape.split_first() {
                None => f.write_str(&fmt_elem(vals[0])),
                Some((&d, rest)) => {
                    let stride: usize = rest.iter().map(|&x| x as usize).product();
                    f.write_str("[")?;
                    for i in 0..d as usize {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        rec(f, rest, &vals[i * stride..(i + 1) * stride], fmt_elem)?;
                    }
                    f.write_str("]")
                }
            }
        }
        rec(f, &self.shape, &values, &fmt_elem)
    }
}

/// Formats a float so that parsing the text gives back the same value of the
/// given width (shortest round-trip form, always with a `.` or exponent).
pub fn format_float(v: f64, bits: u16) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = if bits == 32 {
        let short = format!("{:?}", v as f32);
        // The shortest text of f32::MAX (3.4028235e38) reads back as a
        // double beyond f32's range, which TVM rejects: such values print
        // with the digits of the exact double instead.
        match short.parse::<f64>() {
            Ok(d) if d.abs() > f64::from(f32::MAX) => format!("{:?}", f64::from(v as f32)),
            _ => short,
        }
    } else {
        format!("{v:?}")
    };
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_text_stays_in_range() {
        assert_eq!(format_float(1.5, 32), "1.5");
        let max = format_float(f64::from(f32::MAX), 32);
        assert!(max.parse::<f64>().unwrap() <= f64::from(f32::MAX), "{max}");
        assert_eq!(max.parse::<f64>().unwrap() as f32, f32::MAX);
        let min = format_float(f64::from(f32::MIN), 32);
        assert_eq!(min.parse::<f64>().unwrap() as f32, f32::MIN);
    }

    #[test]
    fn build_and_read_back() {
        let t = Tensor::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(t.dtype(), DataType::f32());
        assert_eq!(t.as_slice::<f32>().unwrap()[4], 5.0);
        assert_eq!(t.as_bytes().as_ptr() as usize % 64, 0);
        assert_eq!(t.to_string(), "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]");
        assert!(matches!(
            t.as_slice::<f64>(),
            Err(TensorError::DTypeMismatch { .. })
        ));
    }

    #[test]
    fn an_empty_tensor_with_huge_dims_is_not_viewable_and_does_not_panic() {
        let t = Tensor::zeros(DataType::f32(), &[0, 1 << 62, 1 << 62]).unwrap();
        assert_eq!(t.numel(), 0);
        assert!(t.view::<f32>().is_err());
        assert!(t.to_ndarray::<f32>().is_err());
    }

    #[test]
    fn an_external_tensor_reads_its_owners_bytes_in_place_and_is_never_written() {
        let words: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut owner = vec![0u8; 4];
        owner.extend(words);
        let owner = Arc::new(owner);
        // SAFETY: the Vec stays in its Arc, unchanged.
        let mut t =
            unsafe { Tensor::from_external(DataType::f32(), &[2, 2], owner.clone(), 8..24) }
                .unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
        assert_eq!(t.as_bytes().as_ptr(), owner[8..].as_ptr());
        assert!(!t.is_unique());
        assert!(t.bytes_mut().is_none());
        // A copy of the buffer (copy-on-write) is owned and writable.
        let mut owned = Tensor {
            data: Arc::new((*t.data).clone()),
            ..t.clone()
        };
        assert!(owned.bytes_mut().is_some());
        assert_eq!(owned, t);
        // The owner lives as long as the tensor does.
        drop(owned);
        assert_eq!(Arc::strong_count(&owner), 2);
        drop(t);
        assert_eq!(Arc::strong_count(&owner), 1);
        // Out of range, the wrong length, or misaligned: an Err naming it.
        for range in [20..36, 8..20, 6..22] {
            // SAFETY: as above.
            let e = unsafe {
                Tensor::from_external(DataType::f32(), &[2, 2], owner.clone(), range.clone())
            }
            .unwrap_err();
            assert!(
                e.to_string().starts_with(&format!(
                    "bytes {}..{} of 24 cannot hold a float32 tensor of shape (2, 2)",
                    range.start, range.end
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn a_view_reads_a_prefix_of_the_buffer_in_place() {
        let t = Tensor::from_vec(&[3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let v = t.create_view(&[2, 2]).unwrap();
        assert_eq!(v.as_bytes().as_ptr(), t.as_bytes().as_ptr());
        assert_eq!(v.as_bytes().len(), 16);
        assert_eq!(v.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            v,
            Tensor::from_vec(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap()
        );
        assert!(!t.is_unique() && !v.is_unique());
        // A view of a view, and an empty one.
        let row = v.create_view(&[2]).unwrap();
        assert_eq!(row.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
        assert_eq!(t.create_view(&[0, 2]).unwrap().numel(), 0);
        // Its writable bytes, once unique, are its own length.
        drop((t, row));
        let mut v = v;
        assert_eq!(v.bytes_mut().map(|b| b.len()), Some(16));
        // More bytes than the tensor has is an error naming the shape.
        let e = v.create_view(&[3, 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shape (3, 2) needs 6 elements, but 4 were given"
        );
        assert!(v.create_view(&[-1]).is_err());
    }

    #[test]
    fn shape_errors_are_errors() {
        let e = Tensor::from_vec(&[2, 2], vec![1i64, 2, 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shape (2, 2) needs 4 elements, but 3 were given"
        );
        assert!(Tensor::from_vec::<i32>(&[-1], vec![]).is_err());
        assert!(Tensor::zeros(DataType::void(), &[1]).is_err());
    }

    #[test]
    fn scalars_ints_and_bools_print() {
        assert_eq!(Tensor::scalar(-3i8).to_string(), "-3");
        assert_eq!(Tensor::scalar(true).to_string(), "True");
        assert_eq!(
            Tensor::from_vec(&[0], Vec::<f32>::new())
                .unwrap()
                .to_string(),
            "[]"
        );
        assert_eq!(Tensor::scalar(0.1f32).to_string(), "0.1");
    }

    #[test]
    fn ndarray_round_trip_any_layout() {
        let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as f32);
        let t = Tensor::from(&a);
        assert_eq!(t.shape(), &[3, 4]);
        assert_eq!(t.view::<f32>().unwrap(), a.view().into_dyn());
        // A transposed (non-contiguous) view is copied in logical order.
        let tt = Tensor::from(&a.t());
        assert_eq!(tt.shape(), &[4, 3]);
        assert_eq!(tt.to_ndarray::<f32>().unwrap(), a.t().to_owned().into_dyn());
        assert!(tt.view::<i32>().is_err());
        let b = ndarray::arr0(true);
        assert_eq!(Tensor::from(b).to_string(), "True");
    }

    #[test]
    fn allclose_compares_within_tolerance() {
        let a = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        let b = Tensor::from_vec(&[2], vec![1.0f32, 2.000_001]).unwrap();
        assert!(a.allclose(&b, 1e-5, 0.0));
        assert!(!a.allclose(&b, 0.0, 0.0));
        assert_eq!(a.max_abs_diff(&a), Some(0.0));
        let c = Tensor::from_vec(&[1, 2], vec![1.0f32, 2.0]).unwrap();
        assert!(!a.allclose(&c, 1.0, 1.0), "shapes differ");
        assert_eq!(a.max_abs_diff(&c), None);
        let nan = Tensor::from_vec(&[1], vec![f32::NAN]).unwrap();
        assert!(!nan.allclose(&nan, 1.0, 1.0));
    }

    #[test]
    fn half_elements_through_ndarray_and_astype() {
        use half::{bf16, f16};
        let a = ndarray::arr2(&[
            [f16::from_f32(1.5), f16::NEG_INFINITY],
            [f16::NAN, f16::MAX],
        ]);
        let t = Tensor::from_ndarray(&a.t());
        assert_eq!(t.dtype(), DataType::f16());
        let back = t.to_ndarray::<f16>().unwrap();
        assert_eq!(back[[0, 0]], f16::from_f32(1.5));
        // Transposed: the NaN and the infinity changed places.
        assert!(back[[0, 1]].is_nan() && back[[1, 0]] == f16::NEG_INFINITY);
        assert!(t.to_ndarray::<bf16>().is_err());
        let b = t.astype(DataType::bf16()).unwrap();
        assert_eq!(b.dtype(), DataType::bf16());
        // 65504 is 65536 in bfloat16; NaN and infinity stay.
        let v = b.to_f64_vec();
        assert_eq!((v[0], v[2], v[3]), (1.5, f64::NEG_INFINITY, 65536.0));
        assert!(v[1].is_nan());
        let view = b.view::<bf16>().unwrap();
        assert_eq!(view.shape(), &[2, 2]);
        let f = Tensor::from_vec(&[2], vec![1.0f64 / 3.0, -0.0]).unwrap();
        let h = f.astype(DataType::f16()).unwrap();
        assert_eq!(h.to_vec::<f16>().unwrap()[0], f16::from_f64(1.0 / 3.0));
        assert_eq!(h.to_vec::<f16>().unwrap()[1].to_bits(), 0x8000);
        assert!(f.astype(DataType::void()).is_err());
        assert!(format!("{h:?}").contains("float16"), "{h:?}");
    }

    #[test]
    fn bytes_round_trip() {
        let t = Tensor::from_vec(&[3], vec![1u16, 2, 65535]).unwrap();
        let u = Tensor::from_bytes(t.dtype(), t.shape(), t.as_bytes()).unwrap();
        assert_eq!(t, u);
        assert_eq!(u.to_f64_vec(), vec![1.0, 2.0, 65535.0]);
    }
}
