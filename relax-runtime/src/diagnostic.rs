//! Diagnostics: what the compiler reports about a program.
//!
//! One type serves the parser, the analyses and (later) the DSL macros and
//! build.rs, which render the same diagnostics as spanned compile errors or as
//! `file:line:column` messages.
//!
//! 1. `code` is a short stable identifier of the kind of problem (for tests
//!    and for the catalog); `message` is a lower-case sentence without a
//!    trailing dot that names what was expected and what was found.
//! 2. `span`, when known, is a byte range into the source text the program
//!    came from (TVMScript text or DSL tokens).

use std::fmt;

/// A byte range `lo..hi` in a source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub lo: usize,
    /// One past the last byte.
    pub hi: usize,
}

impl Span {
    /// The range `lo..hi`.
    pub fn new(lo: usize, hi: usize) -> Self {
        Span { lo, hi }
    }
    /// 1-based line and column of `lo` in `source`.
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        let upto = &source[..self.lo.min(source.len())];
        let line = upto.matches('\n').count() + 1;
        let col = upto.rfind('\n').map_or(upto.len(), |i| upto.len() - i - 1) + 1;
        (line, col)
    }
}

/// One reported problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The kind of problem, e.g. `"dataflow-var-escapes"`.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// Where, if known.
    pub span: Option<Span>,
    /// Further context, one sentence each.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic without a location.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            span: None,
            notes: vec![],
        }
    }
    /// This diagnostic located at `span`.
    pub fn with_span(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }
    /// This diagnostic with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// Renders as `line:col: error: message` against `source`.
    pub fn render(&self, file: &str, source: &str) -> String {
        let mut s = match self.span {
            Some(sp) => {
                let (l, c) = sp.line_col(source);
                format!("{file}:{l}:{c}: error: {}", self.message)
            }
            None => format!("{file}: error: {}", self.message),
        };
        for n in &self.notes {
            s.push_str("\n  note: ");
            s.push_str(n);
        }
        s
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let src = "ab\ncde\nf";
        assert_eq!(Span::new(0, 1).line_col(src), (1, 1));
        assert_eq!(Span::new(4, 5).line_col(src), (2, 2));
        let d = Diagnostic::new("x", "bad thing")
            .with_span(Span::new(7, 8))
            .with_note("why");
        assert_eq!(
            d.render("m.py", src),
            "m.py:3:1: error: bad thing\n  note: why"
        );
    }
}
