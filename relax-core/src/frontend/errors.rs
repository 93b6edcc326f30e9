//! The frontend's message catalog and helpers.
//!
//! Every DSL error is a [`FrontendError`] on the culprit tokens. The helpers
//! here build the messages shared by several checks (unsupported syntax,
//! undefined names with the nearest known one, syn's parse errors) so the
//! proc macro and build.rs print one vocabulary.

use super::{FrontendError, SpanRange};
use proc_macro2::Span;
use quote::ToTokens;

/// Marks a lowering step that failed; its errors are already recorded (or
/// deliberately suppressed because an input was already in error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Failed;

/// The result of a lowering step whose errors were recorded.
pub(super) type Lowering<T> = Result<T, Failed>;

/// "unsupported syntax in a relax function: expected …, found …" on the
/// tokens of `node`.
pub(super) fn unsupported(
    node: &(impl ToTokens + ?Sized),
    expected: &str,
    found: &str,
) -> FrontendError {
    unsupported_at(SpanRange::of(node), expected, found)
}

/// [`unsupported`] on a range that is not one syntax node.
pub(super) fn unsupported_at(range: SpanRange, expected: &str, found: &str) -> FrontendError {
    FrontendError::new(
        range,
        format!("unsupported syntax in a relax function: expected {expected}, found {found}"),
    )
}

/// The tokens of `node` quoted for a message, shortened to one line.
pub(super) fn quoted(node: &impl ToTokens) -> String {
    let text = tidy(&node.to_token_stream().to_string());
    let short: String = text.chars().take(48).collect();
    if short.len() < text.len() {
        format!("`{short}…`")
    } else {
        format!("`{short}`")
    }
}

/// Token text with the spaces `to_string` puts around punctuation removed
/// where Rust code would not have them (`x . exp ()` → `x.exp()`).
fn tidy(text: &str) -> String {
    let mut t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [
        (" . ", "."),
        (" ,", ","),
        (" ;", ";"),
        (" :: ", "::"),
        (" ! ", "!"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("& ", "&"),
    ] {
        t = t.replace(from, to);
    }
    // A call's or a macro's opening bracket follows its name directly.
    let mut out = String::with_capacity(t.len());
    let chars: Vec<char> = t.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let glue = c == ' '
            && matches!(next, Some('(' | '['))
            && prev.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '!');
        if !glue {
            out.push(c);
        }
    }
    out
}

/// What kind of expression `e` is, for "found …" in messages.
pub(super) fn describe_expr(e: &syn::Expr) -> String {
    use syn::Expr as E;
    let kind = match e {
        E::Array(_) => "an array",
        E::Assign(_) => "an assignment",
        E::Async(_) => "an async block",
        E::Await(_) => "an `.await`",
        E::Binary(_) => "a binary operation",
        E::Block(_) => "a block",
        E::Break(_) => "a `break`",
        E::Closure(_) => "a closure",
        E::Continue(_) => "a `continue`",
        E::ForLoop(_) => "a `for` loop",
        E::Index(_) => "an index expression",
        E::Loop(_) => "a `loop`",
        E::Match(_) => "a `match`",
        E::MethodCall(_) => "a method call",
        E::Range(_) => "a range",
        E::Reference(_) => "a reference",
        E::Return(_) => "a `return`",
        E::Struct(_) => "a struct literal",
        E::Try(_) => "a `?` expression",
        E::Unsafe(_) => "an unsafe block",
        E::While(_) => "a `while` loop",
        E::Macro(_) => "a macro call",
        E::Unary(_) => "a unary operation",
        E::Cast(_) => "a cast",
        E::Let(_) => "a `let` expression",
        _ => return quoted(e),
    };
    format!("{kind} {}", quoted(e))
}

/// syn's parse errors (possibly several combined) as frontend errors.
///
/// `syn::Error::span` is only the first token on stable Rust, but the error
/// keeps its whole range: its `compile_error!` carries the start on the
/// leading `::` and the end on the braces, so the range is read from there.
pub(super) fn from_syn(err: syn::Error) -> Vec<FrontendError> {
    err.into_iter()
        .map(|e| {
            let mut tokens = e.to_compile_error().into_iter();
            let range = match (tokens.next(), tokens.last()) {
                (Some(first), Some(last)) => SpanRange::new(first.span(), last.span()),
                _ => SpanRange::from(e.span()),
            };
            FrontendError::new(range, e.to_string())
        })
        .collect()
}

/// The Levenshtein distance between two names.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `want`, if one is close enough to be a typo.
pub(super) fn nearest<'a>(
    want: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = want.chars().count().max(3) / 2 + 1;
    candidates
        .into_iter()
        .filter(|c| *c != want)
        .map(|c| (edit_distance(want, c), c))
        .filter(|(d, _)| *d <= limit && *d < want.chars().count())
        .min()
        .map(|(_, c)| c)
}

/// `line:column` of a span (1-based column), when locations are available.
pub(super) fn line_col(span: Span) -> Option<(usize, usize)> {
    let start = span.start();
    (start.line > 0).then_some((start.line, start.column + 1))
}

/// " at 12:5", or "" when the span has no location.
pub(super) fn at(span: Span) -> String {
    line_col(span).map_or_else(String::new, |(l, c)| format!(" at {l}:{c}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_finds_typos_only() {
        assert_eq!(nearest("lv1", ["lv0", "x", "w0"]), Some("lv0"));
        assert_eq!(nearest("weights", ["x", "y"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
