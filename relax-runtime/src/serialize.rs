//! Executable serialization. INTERFACE STUB, replaced by the VM helper.
use crate::error::Error;
use crate::executable::Executable;

impl Executable {
    /// The executable as bytes (with a version header).
    pub fn to_bytes(&self) -> Vec<u8> {
        vec![]
    }
    /// An executable from bytes written by [`Executable::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Executable, Error> {
        let _ = bytes;
        Err(Error::Deserialize("not implemented".into()))
    }
}
