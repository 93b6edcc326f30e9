//! TVMScript parser. INTERFACE STUB, replaced by the helper.
