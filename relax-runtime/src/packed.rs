//! Host functions for `call_packed`. INTERFACE STUB, replaced by the VM helper.
use crate::error::Error;
use crate::value::Value;

/// A host function.
pub type PackedFunc = std::sync::Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// Registers `f` under `name` process-wide (replacing any earlier one).
pub fn register_packed(
    name: &str,
    f: impl Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
) {
    let _ = (name, f);
}

/// The host function named `name`.
pub fn lookup_packed(name: &str) -> Option<PackedFunc> {
    let _ = name;
    None
}

/// Calls the host function `name`.
pub fn call_packed(name: &str, args: &[Value]) -> Result<Value, Error> {
    let f = lookup_packed(name).ok_or_else(|| Error::Packed {
        name: name.into(),
        message: "no host function of this name is registered".into(),
    })?;
    f(args).map_err(|message| Error::Packed {
        name: name.into(),
        message,
    })
}
