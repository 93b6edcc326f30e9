//! The name table: which text each variable prints as.
//!
//! 1. Relax `Var`s, `DataflowVar`s and symbolic `TirVar`s share one table
//!    (their ids come from one counter, so an id names one variable).
//! 2. A variable prints with its name hint, made a valid Python identifier
//!    that is not a keyword nor one of the names the text itself uses
//!    (`R`, `T`, `I`, `cls`, `metadata`).
//! 3. Names are unique within the table: a hint that is taken gets the first
//!    free suffix `_1`, `_2`, … in the order variables are defined.

use std::collections::{HashMap, HashSet};

/// Python keywords and the module aliases of the text: a variable with one of
/// these names would change the meaning of the printed program.
const RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "R", "T", "I", "cls", "metadata",
];

/// Unique printable names for variables, keyed by variable id.
#[derive(Debug)]
pub(crate) struct Names {
    by_id: HashMap<u64, String>,
    used: HashSet<String>,
    /// The next suffix to try for a base name, so that many vars hinted `lv`
    /// do not rescan `lv_1`, `lv_2`, … each time.
    next_suffix: HashMap<String, usize>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            by_id: HashMap::new(),
            used: RESERVED.iter().map(|s| s.to_string()).collect(),
            next_suffix: HashMap::new(),
        }
    }
}

impl Names {
    /// The name of variable `id`, defining it from `hint` on first sight.
    pub(crate) fn get(&mut self, id: u64, hint: &str) -> String {
        if let Some(name) = self.by_id.get(&id) {
            return name.clone();
        }
        let name = self.fresh(hint);
        self.by_id.insert(id, name.clone());
        name
    }

    /// A new name derived from `hint` that no variable uses, reserved from now on.
    pub(crate) fn fresh(&mut self, hint: &str) -> String {
        let base = sanitize(hint);
        if self.used.insert(base.clone()) {
            return base;
        }
        let mut i = self.next_suffix.get(&base).copied().unwrap_or(1);
        loop {
            let candidate = format!("{base}_{i}");
            i += 1;
            if self.used.insert(candidate.clone()) {
                self.next_suffix.insert(base, i);
                return candidate;
            }
        }
    }
}

/// `hint` as a Python identifier: characters other than ASCII letters, digits
/// and `_` become `_`, a leading digit gets a `_` before it, and an empty hint
/// becomes `v`.
pub(crate) fn sanitize(hint: &str) -> String {
    let mut s: String = hint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s.push('v');
    } else if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_hints_get_suffixes_in_definition_order() {
        let mut n = Names::default();
        assert_eq!(n.get(1, "x"), "x");
        assert_eq!(n.get(2, "x"), "x_1");
        assert_eq!(n.get(1, "ignored"), "x");
        assert_eq!(n.get(3, "x_1"), "x_1_1");
        assert_eq!(n.get(4, "x"), "x_2");
    }

    #[test]
    fn invalid_and_reserved_names_are_rewritten() {
        let mut n = Names::default();
        assert_eq!(n.get(1, "a.b-c"), "a_b_c");
        assert_eq!(n.get(2, "0x"), "_0x");
        assert_eq!(n.get(3, ""), "v");
        assert_eq!(n.get(4, "if"), "if_1");
        assert_eq!(n.get(5, "R"), "R_1");
        assert_eq!(n.get(6, "π"), "_");
    }
}
