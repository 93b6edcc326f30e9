//! Basic-block normal form. INTERFACE STUB, replaced by the helper.
