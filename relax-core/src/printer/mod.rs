//! TVMScript printer. INTERFACE STUB, replaced by the helper.
