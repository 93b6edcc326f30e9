//! Host functions for `call_packed` and `call_dps_packed`.
//!
//! 1. A host ("packed") function is a Rust closure from argument values to a
//!    result value or an error message. It is registered by name in one
//!    process-wide registry, so an executable refers to host functions by
//!    name only and stays plain, serializable data.
//! 2. The registry is a `RwLock<HashMap>`: lookups (every call) take the read
//!    lock, registration the write lock. A lookup clones the function's `Arc`
//!    and releases the lock before the function runs, so a host function may
//!    itself register functions or run a VM without deadlocking.
//! 3. A name is resolved when it is called, not when an executable is loaded:
//!    registering a function after building a VM is fine, and a missing one is
//!    an [`Error::Packed`] naming it at the call.

use crate::error::Error;
use crate::value::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

/// A host function.
pub type PackedFunc = Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// The process-wide registry. Poisoning is ignored: the map is never left
/// half-updated (every write is a single `insert` or `remove`).
static REGISTRY: LazyLock<RwLock<HashMap<String, PackedFunc>>> = LazyLock::new(|| {
    let mut builtins: HashMap<String, PackedFunc> = HashMap::new();
    builtins.insert(MAKE_CLOSURE.to_string(), Arc::new(make_closure));
    use crate::kv_cache as kv;
    builtins.insert(kv::CREATE.to_string(), Arc::new(kv::create));
    builtins.insert(kv::APPEND.to_string(), Arc::new(kv::append));
    builtins.insert(kv::UPDATE.to_string(), Arc::new(kv::update));
    builtins.insert(kv::VIEW.to_string(), Arc::new(kv::view));
    builtins.insert(kv::ARRAY_POPN.to_string(), Arc::new(kv::array_popn));
    builtins.insert(kv::ARRAY_CLEAR.to_string(), Arc::new(kv::array_clear));
    RwLock::new(builtins)
});

/// The builtin that `R.make_closure(cls.f, (captured…))` compiles to, as in
/// TVM's VM: `f` (a function value) and the captured values in, a
/// [`Value::Closure`] out.
pub const MAKE_CLOSURE: &str = "vm.builtin.make_closure";

fn make_closure(args: &[Value]) -> Result<Value, String> {
    match args.split_first() {
        Some((Value::Func(func), captured)) => {
            Ok(Value::Closure(Arc::new(crate::value::Closure {
                func: *func,
                captured: captured.to_vec(),
            })))
        }
        Some((other, _)) => Err(format!(
            "expected a function of the executable to close over, found {}",
            other.describe()
        )),
        None => Err("expected a function and the captured values, found no arguments".into()),
    }
}

/// Registers `f` under `name` process-wide (replacing any earlier one).
pub fn register_packed(
    name: &str,
    f: impl Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
) {
    REGISTRY
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_string(), Arc::new(f));
}

/// Removes the host function `name`; whether there was one.
pub fn unregister_packed(name: &str) -> bool {
    REGISTRY
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(name)
        .is_some()
}

/// The host function named `name`.
pub fn lookup_packed(name: &str) -> Option<PackedFunc> {
    REGISTRY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned()
}

/// Calls the host function `name`; a missing function or its error message
/// becomes an [`Error::Packed`] naming it.
pub fn call_packed(name: &str, args: &[Value]) -> Result<Value, Error> {
    let f = lookup_packed(name).ok_or_else(|| Error::Packed {
        name: name.into(),
        message: "no host function of this name is registered".into(),
    })?;
    // A host function that panics is an error naming it; the registry and
    // the caller stay usable.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(args))) {
        Ok(result) => result.map_err(|message| Error::Packed {
            name: name.into(),
            message,
        }),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(Error::Packed {
                name: name.into(),
                message: format!("the host function panicked: {why}"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_host_function_is_an_error_and_the_registry_stays_usable() {
        let name = "packed.tests.panics";
        register_packed(name, |args| {
            if args.is_empty() {
                panic!("no arguments");
            }
            Ok(Value::Int(1))
        });
        let e = call_packed(name, &[]).unwrap_err();
        assert_eq!(
            e,
            Error::Packed {
                name: name.into(),
                message: "the host function panicked: no arguments".into()
            }
        );
        assert_eq!(call_packed(name, &[Value::Int(0)]), Ok(Value::Int(1)));
        // From another thread too.
        let e = std::thread::spawn(move || call_packed(name, &[]))
            .join()
            .expect("the thread does not die");
        assert!(e.is_err());
    }

    #[test]
    fn register_call_replace_unregister() {
        let name = "packed.tests.register_call_replace_unregister";
        register_packed(name, |args| Ok(Value::Int(args.len() as i64)));
        assert_eq!(
            call_packed(name, &[Value::Int(1), Value::Int(2)]),
            Ok(Value::Int(2))
        );
        register_packed(name, |_| Err("bad input".into()));
        assert_eq!(
            call_packed(name, &[]),
            Err(Error::Packed {
                name: name.into(),
                message: "bad input".into()
            })
        );
        assert!(unregister_packed(name));
        assert!(!unregister_packed(name));
        assert!(lookup_packed(name).is_none());
        match call_packed(name, &[]) {
            Err(Error::Packed { name: n, message }) => {
                assert_eq!(n, name);
                assert!(message.contains("no host function"), "{message}");
            }
            other => panic!("expected a Packed error, got {other:?}"),
        }
    }

    #[test]
    fn a_host_function_may_use_the_registry() {
        let outer = "packed.tests.reentrant.outer";
        let inner = "packed.tests.reentrant.inner";
        register_packed(inner, |_| Ok(Value::Int(7)));
        register_packed(outer, move |args| {
            // Registration inside a call must not deadlock.
            register_packed("packed.tests.reentrant.late", |_| Ok(Value::Bool(true)));
            call_packed(inner, args).map_err(|e| e.to_string())
        });
        assert_eq!(call_packed(outer, &[]), Ok(Value::Int(7)));
        assert_eq!(
            call_packed("packed.tests.reentrant.late", &[]),
            Ok(Value::Bool(true))
        );
    }
}
