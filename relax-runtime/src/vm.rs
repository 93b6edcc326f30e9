//! The virtual machine. INTERFACE STUB, replaced by the VM helper.
use crate::error::Error;
use crate::executable::Executable;
use crate::value::Value;

/// Runs the functions of an executable.
pub struct VirtualMachine {
    exec: std::sync::Arc<Executable>,
}

impl VirtualMachine {
    /// A VM for `exec`.
    pub fn new(exec: &Executable) -> Self {
        VirtualMachine {
            exec: std::sync::Arc::new(exec.clone()),
        }
    }
    /// Calls the function `name` with `args`.
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Value, Error> {
        let _ = (args, &self.exec);
        Err(Error::UnknownFunction(name.into()))
    }
}
