//! The debugging ops: `print` writes its values to standard output, and
//! `assert_op` is an error when its condition is false (TVM's
//! `relax.run.print` and `relax.run.assert_op`).
//!
//! Both format their values with a Python-style format string: `{}` is the
//! next value, `{0}` the value at that position, `{{` and `}}` are braces.
//! An empty format lists the values separated by commas. A malformed
//! format (an unclosed `{`, a position past the values) is an error naming
//! it, never a panic.

use super::{Kernel, KernelAttrs};
use crate::value::Value;
use std::io::Write;

/// The debugging kernels.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.print", print), ("relax.assert_op", assert_op)];

/// `format` with its fields replaced by `values` (module docs).
pub fn format_values(format: &str, values: &[Value]) -> Result<String, String> {
    if format.is_empty() {
        let parts: Vec<String> = values.iter().map(Value::to_string).collect();
        return Ok(parts.join(", "));
    }
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => field.push(c),
                        None => return Err(format!("format {format:?}: `{{` is not closed")),
                    }
                }
                let index = match field.trim() {
                    "" => {
                        next += 1;
                        next - 1
                    }
                    n => n.parse::<usize>().map_err(|_| {
                        format!(
                            "format {format:?}: expected `{{}}` or `{{N}}`, found `{{{field}}}`"
                        )
                    })?,
                };
                let value = values.get(index).ok_or_else(|| {
                    format!(
                        "format {format:?}: field {index} of {} value{}",
                        values.len(),
                        if values.len() == 1 { "" } else { "s" }
                    )
                })?;
                out.push_str(&value.to_string());
            }
            '}' => return Err(format!("format {format:?}: a lone `}}`")),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// The format string argument at `i`.
fn format_arg(args: &[Value], i: usize, op: &str) -> Result<String, String> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(other) => Err(format!("{op}: the format must be a string, found {other}")),
        None => Err(format!("{op}: the format is missing")),
    }
}

/// `relax.print(format, *values)`.
fn print(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let text = format_values(&format_arg(args, 0, "print")?, &args[1..])?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(|e| format!("print: {e}"))?;
    Ok(Value::Tuple(Vec::new().into()))
}

/// The truth of an assertion's condition: a boolean scalar tensor or
/// prim value.
fn condition(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Tensor(t) if t.numel() == 1 && t.dtype().is_bool() => t
            .to_vec::<bool>()
            .map(|v| v[0])
            .map_err(|e| format!("assert_op: {e}")),
        other => Err(format!(
            "assert_op: the condition must be a boolean scalar, found {other}"
        )),
    }
}

/// `relax.assert_op(condition, format, *values)`.
fn assert_op(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let cond = condition(args.first().ok_or("assert_op: the condition is missing")?)?;
    if cond {
        return Ok(Value::Tuple(Vec::new().into()));
    }
    let format = format_arg(args, 1, "assert_op")?;
    let values = &args[2..];
    let message = match (format.is_empty(), values.is_empty()) {
        (true, true) => "assertion failed".to_string(),
        (true, false) => format!("assertion failed: {}", format_values("", values)?),
        (false, _) => format_values(&format, values)?,
    };
    Err(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    fn no() -> KernelAttrs {
        KernelAttrs::default()
    }

    #[test]
    fn format_fills_fields_in_order_by_position_and_escapes_braces() {
        let vals = [Value::Int(3), Value::shape(&[2, 4])];
        assert_eq!(format_values("a={} b={}", &vals).unwrap(), "a=3 b=(2, 4)");
        assert_eq!(
            format_values("{1} then {0}", &vals).unwrap(),
            "(2, 4) then 3"
        );
        assert_eq!(format_values("{{{}}}", &vals).unwrap(), "{3}");
        assert_eq!(format_values("", &vals).unwrap(), "3, (2, 4)");
        assert_eq!(format_values("plain", &[]).unwrap(), "plain");
    }

    #[test]
    fn a_malformed_format_is_an_error_naming_it() {
        let vals = [Value::Int(3)];
        assert!(format_values("{", &vals)
            .unwrap_err()
            .contains("not closed"));
        assert!(format_values("{} {}", &vals)
            .unwrap_err()
            .contains("field 1 of 1 value"));
        assert!(format_values("{x}", &vals).unwrap_err().contains("`{x}`"));
        assert!(format_values("}", &vals).unwrap_err().contains("lone"));
    }

    #[test]
    fn print_returns_the_empty_tuple() {
        let out = print(&[Value::Str("x = {}".into()), Value::Int(1)], &no()).unwrap();
        assert_eq!(out, Value::Tuple(Vec::new().into()));
        assert!(print(&[Value::Int(1)], &no()).is_err());
    }

    #[test]
    fn assert_op_fails_with_the_formatted_message_only_when_false() {
        let yes = Tensor::from_vec(&[], vec![true]).unwrap();
        let no_t = Tensor::from_vec(&[], vec![false]).unwrap();
        let fmt = Value::Str("x is {}".into());
        let ok = assert_op(&[Value::Tensor(yes), fmt.clone(), Value::Int(5)], &no());
        assert_eq!(ok.unwrap(), Value::Tuple(Vec::new().into()));
        let err = assert_op(&[Value::Tensor(no_t), fmt, Value::Int(5)], &no()).unwrap_err();
        assert_eq!(err, "x is 5");
        let err = assert_op(&[Value::Bool(false), Value::Str("".into())], &no()).unwrap_err();
        assert_eq!(err, "assertion failed");
        let err = assert_op(&[Value::Int(0), Value::Str("".into())], &no()).unwrap_err();
        assert!(err.contains("boolean scalar"), "{err}");
    }
}
