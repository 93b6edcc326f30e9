//! Tests of the loop-level parser: round trips through the printer and the interpreter on parsed text.
