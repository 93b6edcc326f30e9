//! The tokenizer: TVMScript text to a flat list of tokens.
//!
//! TVMScript is Python, so this follows Python's lexical rules for the subset
//! the printer emits:
//!
//! 1. Indentation is significant: a line indented deeper than the previous
//!    one starts with an `Indent` token, a shallower one with one `Dedent`
//!    per closed level. Blank and comment-only lines do not count.
//! 2. Inside brackets newlines and indentation are ignored (implicit line
//!    joining), as is a newline after a backslash.
//! 3. Every token carries the byte span of its text; spans always fall on
//!    character boundaries, so diagnostics can slice the source.
//! 4. Lexing never stops at the first error: a bad character becomes an
//!    error diagnostic and is skipped.

use relax_runtime::{Diagnostic, Span};

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or keyword (`def`, `R`, `float32`).
    Name(String),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal, escapes resolved.
    Str(String),
    /// An operator or punctuation (`(`, `->`, `//`, `==`).
    Punct(&'static str),
    /// The end of a logical line.
    Newline,
    /// One more level of indentation.
    Indent,
    /// One less level of indentation.
    Dedent,
    /// The end of the input.
    Eof,
}

impl Tok {
    /// How the token is named in "expected …, found …" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Int(v) => format!("integer `{v}`"),
            Tok::Float(v) => format!("number `{v}`"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Newline => "end of line".into(),
            Tok::Indent => "an indented block".into(),
            Tok::Dedent => "the end of an indented block".into(),
            Tok::Eof => "end of input".into(),
        }
    }
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Its text's byte range.
    pub span: Span,
}

/// Operators, longest first so that `//` wins over `/`.
const PUNCTS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "->", "//", "**", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=",
    "*=", "/=", "%=", ":=", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "@", "=", "+", "-",
    "*", "/", "%", "<", ">", "~", "&", "|", "^",
];

/// Splits `src` into tokens. Errors are collected; the token list is always
/// usable (it ends with `Newline`, closing `Dedent`s and `Eof`).
pub fn tokenize(src: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lx = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
        errors: Vec::new(),
        indents: vec![0],
        depth: 0,
        open: Vec::new(),
        at_line_start: true,
    };
    lx.run();
    (lx.tokens, lx.errors)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    errors: Vec<Diagnostic>,
    /// The indentation widths of the open blocks, outermost first.
    indents: Vec<usize>,
    /// Bracket nesting depth; newlines inside brackets are not tokens.
    depth: usize,
    /// The open brackets and where they are, innermost last.
    open: Vec<(char, usize)>,
    at_line_start: bool,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }
    fn push(&mut self, tok: Tok, lo: usize) {
        self.tokens.push(Token {
            tok,
            span: Span::new(lo, self.pos),
        });
    }
    fn error(&mut self, lo: usize, hi: usize, message: String) {
        self.errors
            .push(Diagnostic::new("syntax-error", message).with_span(Span::new(lo, hi)));
    }
    fn last_is_newline(&self) -> bool {
        matches!(
            self.tokens.last().map(|t| &t.tok),
            None | Some(Tok::Newline) | Some(Tok::Indent) | Some(Tok::Dedent)
        )
    }

    fn run(&mut self) {
        while self.pos < self.src.len() {
            if self.at_line_start && self.depth == 0 {
                self.line_start();
                continue;
            }
            let lo = self.pos;
            let Some(c) = self.peek() else { break };
            match c {
                ' ' | '\t' | '\x0c' | '\r' => {
                    self.bump();
                }
                '#' => self.skip_comment(),
                '\n' => {
                    self.bump();
                    if self.depth == 0 {
                        if !self.last_is_newline() {
                            self.push(Tok::Newline, lo);
                        }
                        self.at_line_start = true;
                    }
                }
                '\\' if matches!(self.peek_at(1), Some('\n')) => {
                    self.bump();
                    self.bump();
                }
                '\\' if self.peek_at(1) == Some('\r') && self.peek_at(2) == Some('\n') => {
                    self.pos += 3;
                }
                '"' | '\'' => self.string(),
                c if c.is_ascii_digit() => self.number(),
                '.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
                c if c == '_' || c.is_alphabetic() => {
                    while self.peek().is_some_and(|c| c == '_' || c.is_alphanumeric()) {
                        self.bump();
                    }
                    let name = self.src[lo..self.pos].to_string();
                    self.push(Tok::Name(name), lo);
                }
                _ => self.punct(),
            }
        }
        let end = self.src.len();
        if let Some(&(c, at)) = self.open.first() {
            self.error(
                at,
                at + 1,
                format!(
                    "expected `{}` to close this `{c}`, found end of input",
                    closer(c)
                ),
            );
        }
        if !self.last_is_newline() {
            self.tokens.push(Token {
                tok: Tok::Newline,
                span: Span::new(end, end),
            });
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.tokens.push(Token {
                tok: Tok::Dedent,
                span: Span::new(end, end),
            });
        }
        self.tokens.push(Token {
            tok: Tok::Eof,
            span: Span::new(end, end),
        });
    }

    /// Measures the indentation of a new line and emits `Indent`/`Dedent`;
    /// blank and comment-only lines are skipped whole.
    fn line_start(&mut self) {
        let lo = self.pos;
        let mut width = 0usize;
        while let Some(c) = self.peek() {
            match c {
                ' ' => width += 1,
                '\t' => width = (width / 8 + 1) * 8,
                '\x0c' | '\r' => {}
                _ => break,
            }
            self.bump();
        }
        match self.peek() {
            None => return,
            Some('\n') => {
                self.bump();
                return;
            }
            Some('#') => {
                self.skip_comment();
                return;
            }
            _ => {}
        }
        self.at_line_start = false;
        let current = self.indents.last().copied().unwrap_or(0);
        if width > current {
            self.indents.push(width);
            self.tokens.push(Token {
                tok: Tok::Indent,
                span: Span::new(lo, self.pos),
            });
        } else if width < current {
            while self.indents.last().is_some_and(|&w| w > width) {
                self.indents.pop();
                self.tokens.push(Token {
                    tok: Tok::Dedent,
                    span: Span::new(self.pos, self.pos),
                });
            }
            if self.indents.last().copied().unwrap_or(0) != width {
                self.error(
                    lo,
                    self.pos,
                    "unindent does not match any outer indentation level".into(),
                );
                self.indents.push(width);
            }
        }
    }

    fn skip_comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    fn number(&mut self) {
        let lo = self.pos;
        let mut is_float = false;
        if self.peek() == Some('0')
            && matches!(self.peek_at(1), Some('x' | 'X' | 'b' | 'B' | 'o' | 'O'))
        {
            let radix = match self.peek_at(1) {
                Some('x' | 'X') => 16,
                Some('b' | 'B') => 2,
                _ => 8,
            };
            self.bump();
            self.bump();
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.bump();
            }
            let digits: String = self.src[lo + 2..self.pos]
                .chars()
                .filter(|&c| c != '_')
                .collect();
            match i64::from_str_radix(&digits, radix) {
                Ok(v) => self.push(Tok::Int(v), lo),
                Err(_) => {
                    let text = self.src[lo..self.pos].to_string();
                    self.error(
                        lo,
                        self.pos,
                        format!("expected an integer literal that fits in int64, found `{text}`"),
                    );
                    self.push(Tok::Int(0), lo);
                }
            }
            return;
        }
        let digits = |lx: &mut Self| {
            while lx.peek().is_some_and(|c| c.is_ascii_digit() || c == '_') {
                lx.bump();
            }
        };
        digits(self);
        if self.peek() == Some('.') {
            is_float = true;
            self.bump();
            digits(self);
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = matches!(self.peek_at(1), Some('+' | '-'));
            let after = if sign {
                self.peek_at(2)
            } else {
                self.peek_at(1)
            };
            if after.is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                self.bump();
                if sign {
                    self.bump();
                }
                digits(self);
            }
        }
        let text: String = self.src[lo..self.pos]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        if is_float {
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => self.push(Tok::Float(v), lo),
                // Found by the fuzzer: `9e99999` read as `inf` printed as a
                // bare `inf`, which is no literal.
                Ok(_) => {
                    self.error(
                        lo,
                        self.pos,
                        format!("the number `{text}` is out of the range of float64 (write `T.float64(\"inf\")` for infinity)"),
                    );
                    self.push(Tok::Float(0.0), lo);
                }
                Err(_) => {
                    self.error(lo, self.pos, format!("expected a number, found `{text}`"));
                    self.push(Tok::Float(0.0), lo);
                }
            }
        } else {
            match text.parse::<i64>() {
                Ok(v) => self.push(Tok::Int(v), lo),
                Err(_) => {
                    self.error(
                        lo,
                        self.pos,
                        format!("expected an integer literal that fits in int64, found `{text}`"),
                    );
                    self.push(Tok::Int(0), lo);
                }
            }
        }
    }

    fn string(&mut self) {
        let lo = self.pos;
        let Some(quote) = self.bump() else { return };
        let triple = self.peek() == Some(quote) && self.peek_at(1) == Some(quote);
        if triple {
            self.bump();
            self.bump();
        }
        let mut value = String::new();
        loop {
            let Some(c) = self.peek() else {
                self.error(
                    lo,
                    self.pos,
                    "expected the end of the string, found end of input".into(),
                );
                break;
            };
            if c == quote {
                if !triple {
                    self.bump();
                    break;
                }
                if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                    self.pos += 3;
                    break;
                }
            }
            if c == '\n' && !triple {
                self.error(
                    lo,
                    self.pos,
                    "expected the end of the string, found end of line".into(),
                );
                break;
            }
            self.bump();
            if c != '\\' {
                value.push(c);
                continue;
            }
            let esc_lo = self.pos - 1;
            let Some(e) = self.bump() else { continue };
            match e {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                '0' => value.push('\0'),
                '\\' => value.push('\\'),
                '\'' => value.push('\''),
                '"' => value.push('"'),
                '\n' => {}
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let start = self.pos;
                    for _ in 0..n {
                        if self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                            self.bump();
                        }
                    }
                    let hex = &self.src[start..self.pos];
                    match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) if hex.len() == n => value.push(ch),
                        _ => self.error(
                            esc_lo,
                            self.pos,
                            format!("expected {n} hex digits after `\\{e}`, found `{hex}`"),
                        ),
                    }
                }
                other => {
                    // Python keeps unknown escapes as written.
                    value.push('\\');
                    value.push(other);
                }
            }
        }
        self.push(Tok::Str(value), lo);
    }

    fn punct(&mut self) {
        let lo = self.pos;
        let rest = &self.src[self.pos..];
        let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) else {
            let c = self.bump().unwrap_or(' ');
            self.error(lo, self.pos, format!("unexpected character `{c}`"));
            return;
        };
        self.pos += p.len();
        match *p {
            "(" | "[" | "{" => {
                self.depth += 1;
                self.open.push((p.chars().next().unwrap_or('('), lo));
            }
            ")" | "]" | "}" => {
                self.depth = self.depth.saturating_sub(1);
                let c = p.chars().next().unwrap_or(')');
                match self.open.pop() {
                    Some((o, _)) if closer(o) == c => {}
                    Some((o, at)) => {
                        let (line, col) = Span::new(at, at).line_col(self.src);
                        self.error(
                            lo,
                            self.pos,
                            format!(
                                "expected `{}` to close the `{o}` at {line}:{col}, found `{c}`",
                                closer(o)
                            ),
                        );
                    }
                    None => self.error(
                        lo,
                        self.pos,
                        format!("unexpected `{c}` with no open bracket"),
                    ),
                }
            }
            _ => {}
        }
        self.push(Tok::Punct(p), lo);
    }
}

/// The bracket that closes `open`.
fn closer(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let (t, e) = tokenize(src);
        assert!(e.is_empty(), "{e:?}");
        t.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn indentation_becomes_indent_and_dedent() {
        let t = toks("a:\n    b\n\n    # c\n  \nd\n");
        use Tok::*;
        assert_eq!(
            t,
            vec![
                Name("a".into()),
                Punct(":"),
                Newline,
                Indent,
                Name("b".into()),
                Newline,
                Dedent,
                Name("d".into()),
                Newline,
                Eof
            ]
        );
    }

    #[test]
    fn brackets_join_lines_and_numbers_lex() {
        let t = toks("f(1,\n   2.5e-3, 'x\\n', 0x10) // 3");
        use Tok::*;
        assert_eq!(
            t,
            vec![
                Name("f".into()),
                Punct("("),
                Int(1),
                Punct(","),
                Float(2.5e-3),
                Punct(","),
                Str("x\n".into()),
                Punct(","),
                Int(16),
                Punct(")"),
                Punct("//"),
                Int(3),
                Newline,
                Eof
            ]
        );
    }

    #[test]
    fn errors_carry_spans() {
        let (_, e) = tokenize("a = $\nb = \"open\n");
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].span, Some(Span::new(4, 5)));
        assert!(e[1].message.contains("expected the end of the string"));
        let (_, e) = tokenize("x = 99999999999999999999");
        assert!(e[0].message.contains("fits in int64"), "{}", e[0].message);
        // Found by the fuzzer: a float literal that overflows is an error,
        // not an `inf` that prints as no literal.
        let (_, e) = tokenize("x = 9223372036854e7758071");
        assert!(
            e[0].message.contains("out of the range of float64"),
            "{}",
            e[0].message
        );
        let (_, e) = tokenize("f(a, [b)\n");
        assert_eq!(
            e[0].message,
            "expected `]` to close the `[` at 1:6, found `)`"
        );
        assert_eq!(e[0].span, Some(Span::new(7, 8)));
        let (_, e) = tokenize("f(a,\n  b\n");
        assert_eq!(
            e[0].message,
            "expected `)` to close this `(`, found end of input"
        );
        assert_eq!(e[0].span, Some(Span::new(1, 2)));
    }
}
