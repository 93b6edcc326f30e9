//! Tests of the TE layer: lowering and `call_te`.
