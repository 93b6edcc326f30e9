//! Frontend errors rendered for a build script: `file:line:column`.
//!
//! The proc macro hands its errors to rustc as `compile_error!`s over the
//! culprit's tokens; build.rs has no compiler to render them, so a
//! [`SourceError`] does, from the same [`FrontendError`] (one message
//! catalog for both): the location of the culprit's first token (1-based
//! line and column, columns counted in characters as rustc does), the
//! message, the source line with the culprit underlined, and the notes.
//!
//! ```text
//! src/model.rs:9:23: error: matmul: inner dimensions differ: x has (n, 64), w0 has (128, 32)
//!   |
//! 9 |             let lv0 = R::matmul(x, w0);
//!   |                       ^^^^^^^^^^^^^^^^
//!   = note: …
//! ```
//!
//! Spans come from proc-macro2's own parser (its "span-locations"
//! feature), which numbers the lines of the string it parsed: the whole
//! file. A span without a location (line 0, from tokens the frontend made
//! up) is reported at the DSL item it came from.

use crate::frontend::{FrontendError, SpanRange};
use std::fmt;
use std::path::{Path, PathBuf};

/// One error in a source file. `Display` renders it (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// The file, as given to the Builder.
    pub file: PathBuf,
    /// The 1-based line of the culprit's first token (0 if unknown).
    pub line: usize,
    /// The 1-based column, in characters (0 if unknown).
    pub column: usize,
    /// The message: a lower-case sentence.
    pub message: String,
    /// Further context, one sentence each.
    pub notes: Vec<String>,
    /// The culprit's source line and the columns to underline.
    snippet: Option<Snippet>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Snippet {
    text: String,
    /// 0-based character columns, `start < end`.
    start: usize,
    end: usize,
}

impl SourceError {
    /// The error `message` on `range` of `source`, the text of `file`.
    pub fn new(file: &Path, source: &str, range: SpanRange, message: impl Into<String>) -> Self {
        let start = range.start.start();
        let end = range.end.end();
        let line = start.line;
        let snippet = (line > 0)
            .then(|| source.lines().nth(line - 1))
            .flatten()
            .map(|text| {
                let len = text.chars().count();
                let first = start.column.min(len);
                let last = if end.line == line {
                    end.column.clamp(first + 1, len.max(first + 1))
                } else {
                    len.max(first + 1)
                };
                Snippet {
                    text: text.to_string(),
                    start: first,
                    end: last,
                }
            });
        SourceError {
            file: file.to_path_buf(),
            line,
            column: if line > 0 { start.column + 1 } else { 0 },
            message: message.into(),
            notes: vec![],
            snippet,
        }
    }

    /// A frontend error in `source`; a span without a location is reported
    /// at `item`, the DSL item being compiled.
    pub fn from_frontend(file: &Path, source: &str, e: &FrontendError, item: SpanRange) -> Self {
        let range = if e.range.start.start().line > 0 {
            e.range
        } else {
            item
        };
        let mut out = SourceError::new(file, source, range, e.message.clone());
        out.notes = e.notes.clone();
        out
    }

    /// This error with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match self.line {
            0 => write!(f, "{file}: error: {}", self.message)?,
            line => write!(f, "{file}:{line}:{}: error: {}", self.column, self.message)?,
        }
        let gutter = " ".repeat(self.line.to_string().len());
        if let Some(s) = &self.snippet {
            let pad: String = s
                .text
                .chars()
                .take(s.start)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let marks = "^".repeat(s.end - s.start);
            write!(f, "\n{gutter} |\n{} | {}", self.line, s.text)?;
            write!(f, "\n{gutter} | {pad}{marks}")?;
        }
        for n in &self.notes {
            write!(f, "\n{gutter} = note: {n}")?;
        }
        Ok(())
    }
}
