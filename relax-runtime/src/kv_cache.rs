//! `AttentionKvCache`: the growing key/value cache of a decoder, as a VM
//! object, and TVM's `vm.builtin.attention_kv_cache_*` host functions.
//!
//! 1. A cache owns one storage tensor of the *reserved* shape
//!    `(capacity, d1, …)`, allocated once at creation, and a fill count: rows
//!    `0..fill_count` hold data. Rows are the leading axis (a token each).
//! 2. It is a Relax object (`R.Object` in StructInfo), held by
//!    [`Value::KvCache`] behind an `Arc`: clones of the value are the same
//!    cache, and the builtins mutate it in place (behind a mutex), as TVM's
//!    `AttentionKVCacheLegacy` is mutated by its builtins.
//! 3. Unlike TVM, appending past the reserved capacity does not reallocate:
//!    it is an error naming the capacity and the requested length, so the
//!    memory a model uses is fixed when its caches are created.
//! 4. A view is the filled rows in place: a [`Tensor::create_view`] of the
//!    storage's first `fill_count` rows, sharing its buffer (no copy; TVM's
//!    `CreateView`). Tensors are immutable, so a write into rows a live
//!    view could see never happens in place: while a view of the storage
//!    is alive, appending or updating first moves the cache to a copy of
//!    its storage (copy on write) and the view keeps the old rows. A model
//!    drops its views before the next token's append (they live in the
//!    registers of one call), so in steady state nothing is copied but the
//!    appended rows.
//!
//! The builtins (names and argument order as TVM's `lm_support.cc`):
//! - `vm.builtin.attention_kv_cache_create(init_data, reserve_shape,
//!   init_fill_count)`: a cache of `reserve_shape` with `init_data`'s dtype,
//!   whose first rows are `init_data`; a non-negative `init_fill_count` then
//!   sets the fill count (TVM's behaviour; `-1` keeps `init_data`'s rows).
//! - `vm.builtin.attention_kv_cache_append(cache, value)`: copies `value`'s
//!   rows after the filled ones; returns the cache.
//! - `vm.builtin.attention_kv_cache_update(cache, value)`: overwrites from
//!   row 0 with `value`; the fill count becomes its row count.
//! - `vm.builtin.attention_kv_cache_view(cache, shape)`: the filled rows as a
//!   tensor of `shape`, whose leading dim must be the fill count and whose
//!   other dims must be the row shape.
//! - `vm.builtin.attention_kv_cache_array_popn(caches, n)`: drops the last
//!   `n` rows of each cache of a tuple.
//! - `vm.builtin.attention_kv_cache_array_clear(caches)`: resets each cache
//!   of a tuple to empty (the storage is kept).

use crate::data_type::DataType;
use crate::tensor::{fmt_shape, Tensor};
use crate::value::Value;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// `vm.builtin.attention_kv_cache_create`.
pub const CREATE: &str = "vm.builtin.attention_kv_cache_create";
/// `vm.builtin.attention_kv_cache_append`.
pub const APPEND: &str = "vm.builtin.attention_kv_cache_append";
/// `vm.builtin.attention_kv_cache_update`.
pub const UPDATE: &str = "vm.builtin.attention_kv_cache_update";
/// `vm.builtin.attention_kv_cache_view`.
pub const VIEW: &str = "vm.builtin.attention_kv_cache_view";
/// `vm.builtin.attention_kv_cache_array_popn`.
pub const ARRAY_POPN: &str = "vm.builtin.attention_kv_cache_array_popn";
/// `vm.builtin.attention_kv_cache_array_clear`.
pub const ARRAY_CLEAR: &str = "vm.builtin.attention_kv_cache_array_clear";

/// A key/value cache: storage reserved once, rows filled in order.
pub struct AttentionKvCache {
    state: Mutex<State>,
}

struct State {
    /// The reserved storage, `(capacity, row…)`; never shared, so writable.
    storage: Tensor,
    /// How many leading rows hold data.
    fill_count: i64,
}

impl AttentionKvCache {
    /// An empty cache of `reserve_shape` (capacity first) and `dtype`.
    pub fn new(dtype: DataType, reserve_shape: &[i64]) -> Result<AttentionKvCache, String> {
        if reserve_shape.is_empty() {
            return Err(
                "expected a reserve shape of rank at least 1 (capacity first), found ()".into(),
            );
        }
        let storage = Tensor::zeros(dtype, reserve_shape).map_err(|e| e.to_string())?;
        Ok(AttentionKvCache {
            state: Mutex::new(State {
                storage,
                fill_count: 0,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many rows the storage holds.
    pub fn capacity(&self) -> i64 {
        self.lock().storage.shape()[0]
    }
    /// How many rows hold data.
    pub fn fill_count(&self) -> i64 {
        self.lock().fill_count
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.lock().storage.dtype()
    }
    /// The shape of one row (the reserve shape without its capacity).
    pub fn row_shape(&self) -> Vec<i64> {
        self.lock().storage.shape()[1..].to_vec()
    }
    /// The address of the storage's bytes (stays the same for the cache's
    /// life, unless a write happens while a view is alive: see the module
    /// docs).
    pub fn storage_ptr(&self) -> *const u8 {
        self.lock().storage.as_bytes().as_ptr()
    }

    /// Copies `value`'s rows after the filled ones.
    pub fn append(&self, value: &Tensor) -> Result<(), String> {
        let mut s = self.lock();
        let at = s.fill_count;
        s.write_rows(at, value, "append")
    }

    /// Overwrites from row 0 with `value`; the fill count becomes its rows.
    pub fn update(&self, value: &Tensor) -> Result<(), String> {
        self.lock().write_rows(0, value, "update")
    }

    /// The filled rows as a tensor of `shape`, sharing the storage (no
    /// copy; see the module docs).
    pub fn view(&self, shape: &[i64]) -> Result<Tensor, String> {
        let s = self.lock();
        let reserved = s.storage.shape();
        let expected: Vec<i64> = std::iter::once(s.fill_count)
            .chain(reserved[1..].iter().copied())
            .collect();
        if shape != expected.as_slice() {
            return Err(format!(
                "expected a view shape of {} (the fill count, then the row shape), found {}",
                fmt_shape(&expected),
                fmt_shape(shape)
            ));
        }
        s.storage.create_view(shape).map_err(|e| e.to_string())
    }

    /// Whether a view (or any other tensor) shares the storage: the next
    /// append or update then copies it first (see the module docs).
    pub fn storage_is_shared(&self) -> bool {
        !self.lock().storage.is_unique()
    }

    /// Drops the last `n` rows.
    pub fn pop(&self, n: i64) -> Result<(), String> {
        let mut s = self.lock();
        if n < 0 || n > s.fill_count {
            return Err(format!(
                "expected to pop between 0 and {} rows (the fill count), found {n}",
                s.fill_count
            ));
        }
        s.fill_count -= n;
        Ok(())
    }

    /// Empties the cache (its storage is kept).
    pub fn clear(&self) {
        self.lock().fill_count = 0;
    }

    /// The reserved storage and the fill count (for serialization).
    pub fn snapshot(&self) -> (Tensor, i64) {
        let s = self.lock();
        let copy = Tensor::from_bytes(s.storage.dtype(), s.storage.shape(), s.storage.as_bytes())
            .unwrap_or_else(|_| s.storage.clone());
        (copy, s.fill_count)
    }

    /// A cache with `storage` (reserved shape) and `fill_count` rows filled.
    pub fn from_parts(storage: Tensor, fill_count: i64) -> Result<AttentionKvCache, String> {
        let capacity = storage.shape().first().copied().unwrap_or(0);
        if storage.ndim() == 0 || !(0..=capacity).contains(&fill_count) {
            return Err(format!(
                "expected a storage of rank at least 1 and a fill count in 0..={capacity}, found {} and {fill_count}",
                fmt_shape(storage.shape())
            ));
        }
        // Own the storage exclusively (it is written in place).
        let storage = Tensor::from_bytes(storage.dtype(), storage.shape(), storage.as_bytes())
            .map_err(|e| e.to_string())?;
        Ok(AttentionKvCache {
            state: Mutex::new(State {
                storage,
                fill_count,
            }),
        })
    }
}

impl State {
    fn row_bytes(&self) -> usize {
        let shape = self.storage.shape();
        if shape[0] == 0 {
            return 0;
        }
        self.storage.as_bytes().len() / shape[0] as usize
    }

    /// Writes `value`'s rows at row `at`; the fill count becomes the end.
    fn write_rows(&mut self, at: i64, value: &Tensor, what: &str) -> Result<(), String> {
        let dtype = self.storage.dtype();
        if value.dtype() != dtype {
            return Err(format!(
                "expected a {dtype} value to {what}, found {}",
                Value::Tensor(value.clone()).describe()
            ));
        }
        let reserved = self.storage.shape();
        if value.ndim() != reserved.len() || value.shape()[1..] != reserved[1..] {
            return Err(format!(
                "expected rows of shape {} (a value of shape (n, {})) to {what}, found shape {}",
                fmt_shape(&reserved[1..]),
                reserved[1..]
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                fmt_shape(value.shape())
            ));
        }
        let capacity = reserved[0];
        let end = at + value.shape()[0];
        if end > capacity {
            return Err(format!(
                "the cache's capacity is {capacity} rows; {what} of {} rows after {at} needs {end}",
                value.shape()[0]
            ));
        }
        let row_bytes = self.row_bytes();
        let src = value.as_bytes();
        let start = at as usize * row_bytes;
        if !self.storage.is_unique() {
            // A live view shares the storage: write into a copy instead.
            let s = &self.storage;
            self.storage = Tensor::from_bytes(s.dtype(), s.shape(), s.as_bytes())
                .map_err(|e| e.to_string())?;
        }
        let storage = self
            .storage
            .bytes_mut()
            .ok_or("the cache's storage is shared after copying it")?;
        storage[start..start + src.len()].copy_from_slice(src);
        self.fill_count = end;
        Ok(())
    }
}

impl fmt::Debug for AttentionKvCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("AttentionKvCache")
            .field("dtype", &s.storage.dtype())
            .field("reserve_shape", &s.storage.shape())
            .field("fill_count", &s.fill_count)
            .finish()
    }
}

/// The same cache (identity, as objects compare in TVM).
impl PartialEq for AttentionKvCache {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

fn tensor_arg<'a>(args: &'a [Value], i: usize, what: &str) -> Result<&'a Tensor, String> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(v) => Err(format!(
            "expected a tensor as {what}, found {}",
            v.describe()
        )),
        None => Err(format!("expected a tensor as {what}, found no argument")),
    }
}

fn cache_arg(args: &[Value], i: usize) -> Result<&Arc<AttentionKvCache>, String> {
    match args.get(i) {
        Some(Value::KvCache(c)) => Ok(c),
        Some(v) => Err(format!("expected a KV cache, found {}", v.describe())),
        None => Err("expected a KV cache, found no argument".into()),
    }
}

fn arity(args: &[Value], n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!("expected {n} arguments, found {}", args.len()));
    }
    Ok(())
}

fn caches_arg(args: &[Value]) -> Result<Vec<Arc<AttentionKvCache>>, String> {
    match args.first() {
        Some(Value::Tuple(items)) => items
            .iter()
            .map(|v| match v {
                Value::KvCache(c) => Ok(c.clone()),
                v => Err(format!(
                    "expected a tuple of KV caches, found {}",
                    v.describe()
                )),
            })
            .collect(),
        Some(Value::KvCache(c)) => Ok(vec![c.clone()]),
        Some(v) => Err(format!(
            "expected a tuple of KV caches, found {}",
            v.describe()
        )),
        None => Err("expected a tuple of KV caches, found no argument".into()),
    }
}

pub(crate) fn create(args: &[Value]) -> Result<Value, String> {
    arity(args, 3)?;
    let init = tensor_arg(args, 0, "the initial data")?;
    let reserve = args[1]
        .as_shape()
        .ok_or_else(|| format!("expected a reserve shape, found {}", args[1].describe()))?;
    let fill = args[2].as_int().ok_or_else(|| {
        format!(
            "expected an integer fill count, found {}",
            args[2].describe()
        )
    })?;
    let cache = AttentionKvCache::new(init.dtype(), reserve)?;
    cache.append(init)?;
    if fill >= 0 {
        if fill > reserve[0] {
            return Err(format!(
                "the cache's capacity is {} rows; the initial fill count is {fill}",
                reserve[0]
            ));
        }
        cache.lock().fill_count = fill;
    }
    Ok(Value::KvCache(Arc::new(cache)))
}

pub(crate) fn append(args: &[Value]) -> Result<Value, String> {
    arity(args, 2)?;
    let cache = cache_arg(args, 0)?;
    cache.append(tensor_arg(args, 1, "the rows to append")?)?;
    Ok(Value::KvCache(cache.clone()))
}

pub(crate) fn update(args: &[Value]) -> Result<Value, String> {
    arity(args, 2)?;
    let cache = cache_arg(args, 0)?;
    cache.update(tensor_arg(args, 1, "the new rows")?)?;
    Ok(Value::KvCache(cache.clone()))
}

pub(crate) fn view(args: &[Value]) -> Result<Value, String> {
    arity(args, 2)?;
    let cache = cache_arg(args, 0)?;
    let shape = args[1]
        .as_shape()
        .ok_or_else(|| format!("expected a view shape, found {}", args[1].describe()))?;
    Ok(Value::Tensor(cache.view(shape)?))
}

pub(crate) fn array_popn(args: &[Value]) -> Result<Value, String> {
    arity(args, 2)?;
    let n = args[1]
        .as_int()
        .ok_or_else(|| format!("expected an integer count, found {}", args[1].describe()))?;
    let caches = caches_arg(args)?;
    // Check every cache first so that an error leaves them all unchanged.
    for c in &caches {
        let fill = c.fill_count();
        if n < 0 || n > fill {
            return Err(format!(
                "expected to pop between 0 and {fill} rows (the fill count), found {n}"
            ));
        }
    }
    for c in &caches {
        c.pop(n)?;
    }
    Ok(Value::tuple(vec![]))
}

pub(crate) fn array_clear(args: &[Value]) -> Result<Value, String> {
    arity(args, 1)?;
    for c in caches_arg(args)? {
        c.clear();
    }
    Ok(Value::tuple(vec![]))
}

#[cfg(test)]
mod tests;
