//! The syntax tree: the Python subset TVMScript is written in, and its
//! recursive-descent parser.
//!
//! 1. The tree knows nothing of Relax: `R.add(x, y)` is a `Call` of an
//!    `Attr` chain. Giving it meaning is the lowering's job
//!    (`parser/lower.rs`), so syntax errors and meaning errors are
//!    reported separately and precisely.
//! 2. Every node carries the byte span of its text.
//! 3. Expressions follow Python's precedence (`or` < `and` < `not` <
//!    comparisons < `<< >>` < `+ -` < `* / // %` < unary `-` < `**` <
//!    postfix).
//! 4. Loop-level statements (`for i in range(n):` and item assignment
//!    `C[i, j] = v`, which only `@T.prim_func` bodies have) are parsed into
//!    [`StmtKind::Unsupported`], so the Relax lowering reports them as
//!    statements it does not support while the loop-level lowering reads
//!    them. A slice `lo:hi` in a subscript (`T.reads(A[i, 0:4])`) becomes the
//!    call `slice(lo, hi)`, as in Python, with `None` for a missing bound.
//! 5. The parser stops at the first syntax error (its recovery would only
//!    produce noise), but never panics: nesting deeper than
//!    [`MAX_DEPTH`] is reported instead of overflowing the stack.

use super::lexer::{Tok, Token};
use relax_runtime::{Diagnostic, Span};

/// The deepest expression or block nesting accepted.
pub const MAX_DEPTH: usize = 128;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Mod,
    /// `**`
    Pow,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `and`
    And,
    /// `or`
    Or,
    /// `<<`: TIR's `shift_left`, of integers.
    Shl,
    /// `>>`: TIR's `shift_right`, of integers.
    Shr,
}

impl BinOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-a`
    Neg,
    /// `+a`
    Pos,
    /// `not a`
    Not,
}

/// An expression node.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `x`
    Name(String),
    /// `1`
    Int(i64),
    /// `1.5`
    Float(f64),
    /// `"s"`
    Str(String),
    /// `True`, `False`
    Bool(bool),
    /// `None`
    None,
    /// `value.attr`
    Attr(Box<Expr>, Ident),
    /// `func(args, key=value)`
    Call {
        /// The callee.
        func: Box<Expr>,
        /// Positional arguments.
        args: Vec<Expr>,
        /// Keyword arguments in written order.
        kwargs: Vec<(Ident, Expr)>,
    },
    /// `(a, b)`, `(a,)`, `()`
    Tuple(Vec<Expr>),
    /// `[a, b]`
    List(Vec<Expr>),
    /// `{k: v}`
    Dict(Vec<(Expr, Expr)>),
    /// `value[index]`
    Subscript(Box<Expr>, Box<Expr>),
    /// `a op b` (comparisons chain as `and`s, as in Python)
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `op a`
    Unary(UnOp, Box<Expr>),
}

/// Names TVM 0.27 renamed (`tir` became `tirx` and its schedulable blocks
/// `sblock`s), as (new, old): the parser reads the new as the old.
pub const TVM_RENAMES: &[(&str, &str)] = &[
    ("T.sblock", "T.block"),
    ("T.sblock_alloc_buffer", "T.alloc_buffer"),
    ("T.sblock_attr", "T.block_attr"),
];

/// An expression and its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

impl Expr {
    /// The dotted path of a `Name`/`Attr` chain (`R.nn.relu` → `["R", "nn", "relu"]`).
    pub fn dotted_path(&self) -> Option<Vec<&str>> {
        match &self.kind {
            ExprKind::Name(n) => Some(vec![n.as_str()]),
            ExprKind::Attr(base, attr) => {
                let mut p = base.dotted_path()?;
                p.push(&attr.name);
                Some(p)
            }
            _ => None,
        }
    }
    /// The dotted path joined with `.`, with TVM 0.27's new spellings read
    /// as the names they replace ([`TVM_RENAMES`]), so both dialects parse.
    pub fn dotted(&self) -> Option<String> {
        let path = self.dotted_path()?.join(".");
        Some(match TVM_RENAMES.iter().find(|(new, _)| *new == path) {
            Some((_, old)) => old.to_string(),
            None => path,
        })
    }
    /// The callee path, positional and keyword arguments, if this is a call
    /// of a dotted name.
    pub fn as_call(&self) -> Option<CallParts<'_>> {
        match &self.kind {
            ExprKind::Call { func, args, kwargs } => Some((func.dotted()?, args, kwargs)),
            _ => None,
        }
    }
    /// The name, if this is a bare name.
    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }
    /// A short description for "found …" in messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            ExprKind::Name(n) => format!("`{n}`"),
            ExprKind::Int(v) => format!("integer `{v}`"),
            ExprKind::Float(v) => format!("number `{v}`"),
            ExprKind::Str(s) => format!("string {s:?}"),
            ExprKind::Bool(b) => format!("`{}`", if *b { "True" } else { "False" }),
            ExprKind::None => "`None`".into(),
            ExprKind::Attr(..) => match self.dotted() {
                Some(d) => format!("`{d}`"),
                None => "an attribute".into(),
            },
            ExprKind::Call { func, .. } => match func.dotted() {
                Some(d) => format!("a call of `{d}`"),
                None => "a call".into(),
            },
            ExprKind::Tuple(_) => "a tuple".into(),
            ExprKind::List(_) => "a list".into(),
            ExprKind::Dict(_) => "a dict".into(),
            ExprKind::Subscript(..) => "a subscript".into(),
            ExprKind::Binary(op, ..) => format!("a `{}` expression", op.text()),
            ExprKind::Unary(UnOp::Not, _) => "a `not` expression".into(),
            ExprKind::Unary(..) => "a unary expression".into(),
        }
    }
}

/// A call's dotted callee path, positional and keyword arguments.
pub type CallParts<'a> = (String, &'a [Expr], &'a [(Ident, Expr)]);

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: Ident,
    /// Its annotation, if written.
    pub annotation: Option<Expr>,
    /// Its default value, if written (TVMScript has none; reported later).
    pub default: Option<Expr>,
}

/// A `def`.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDef {
    /// The decorators, outermost first.
    pub decorators: Vec<Expr>,
    /// The name.
    pub name: Ident,
    /// The parameters.
    pub params: Vec<Param>,
    /// The return annotation.
    pub ret: Option<Expr>,
    /// The body.
    pub body: Vec<Stmt>,
    /// The span of the whole `def` line.
    pub header_span: Span,
}

/// A `class`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    /// The decorators.
    pub decorators: Vec<Expr>,
    /// The name.
    pub name: Ident,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A statement node.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// An expression evaluated for its effect (`R.output(x)`).
    Expr(Expr),
    /// `targets = value` or `target: annotation = value`. Several targets
    /// come from `a, b = …`.
    Assign {
        /// The names assigned (more than one for tuple unpacking).
        targets: Vec<Ident>,
        /// Whether the targets were written as a tuple.
        unpack: bool,
        /// The annotation, if any.
        annotation: Option<Expr>,
        /// The value.
        value: Expr,
    },
    /// `return value`
    Return(Option<Expr>),
    /// `pass`
    Pass,
    /// `with item: body`
    With {
        /// The context expression.
        item: Expr,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `if cond: then else: orelse` (`elif` nests)
    If {
        /// The condition.
        cond: Expr,
        /// The true branch.
        then: Vec<Stmt>,
        /// The false branch, if written.
        orelse: Option<Vec<Stmt>>,
    },
    /// `def`
    FuncDef(FuncDef),
    /// `class`
    ClassDef(ClassDef),
    /// `import …` / `from … import …` (ignored)
    Import,
    /// A statement Relax has no use for, kept so the Relax lowering can say
    /// so at the right place: the loop-level statements (`for` loops and
    /// item assignments, which `@T.prim_func` bodies read from here) and
    /// those TVMScript has no use for at all (`while`, `try`, …).
    Unsupported(OtherStmt),
}

/// A statement outside the Relax subset; `Display` prints its keyword.
#[derive(Clone, Debug, PartialEq)]
pub struct OtherStmt {
    /// `for`, `while`, … or `item assignment`.
    pub keyword: String,
    /// The parsed statement, for the loop-level ones.
    pub loop_level: Option<LoopLevelStmt>,
}

impl std::fmt::Display for OtherStmt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.keyword)
    }
}

/// The statements only loop-level (`@T.prim_func`) bodies have.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopLevelStmt {
    /// `for i, j in T.grid(a, b): body`
    For {
        /// The loop variables.
        targets: Vec<Ident>,
        /// What they range over.
        iter: Expr,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `C[vi, vj] = value`
    ItemAssign {
        /// The subscript assigned to.
        target: Expr,
        /// The value.
        value: Expr,
    },
}

/// A statement and its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where it is.
    pub span: Span,
}

/// Parses a whole file.
pub fn parse_file(tokens: &[Token]) -> Result<Vec<Stmt>, Diagnostic> {
    let mut p = Parser::new(tokens);
    let mut stmts = Vec::new();
    loop {
        p.skip_newlines();
        if p.at(&Tok::Eof) {
            break;
        }
        if p.at(&Tok::Indent) {
            return Err(p.error_here("expected a statement, found an unexpected indent"));
        }
        if p.at(&Tok::Dedent) {
            p.advance();
            continue;
        }
        stmts.extend(p.statement()?);
    }
    Ok(stmts)
}

/// Parses one expression that must span all the tokens.
pub fn parse_expression(tokens: &[Token]) -> Result<Expr, Diagnostic> {
    let mut p = Parser::new(tokens);
    p.skip_newlines();
    let e = p.expr()?;
    p.skip_newlines();
    while p.at(&Tok::Dedent) {
        p.advance();
    }
    if !p.at(&Tok::Eof) {
        return Err(p.expected("the end of the expression"));
    }
    Ok(e)
}

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
    depth: usize,
}

const STATEMENT_KEYWORDS: &[&str] = &[
    "while", "try", "except", "finally", "raise", "del", "global", "nonlocal", "assert", "lambda",
    "yield", "async", "await", "break", "continue",
];

impl<'t> Parser<'t> {
    fn new(tokens: &'t [Token]) -> Self {
        Parser {
            tokens,
            pos: 0,
            depth: 0,
        }
    }

    fn tok(&self) -> &Tok {
        self.tokens.get(self.pos).map_or(&Tok::Eof, |t| &t.tok)
    }
    fn nth(&self, n: usize) -> &Tok {
        self.tokens.get(self.pos + n).map_or(&Tok::Eof, |t| &t.tok)
    }
    fn span(&self) -> Span {
        match self.tokens.get(self.pos) {
            Some(t) => t.span,
            None => self
                .tokens
                .last()
                .map_or(Span::default(), |t| Span::new(t.span.hi, t.span.hi)),
        }
    }
    fn prev_hi(&self) -> usize {
        match self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)) {
            Some(t) => t.span.hi,
            None => self.span().lo,
        }
    }
    fn advance(&mut self) {
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
    }
    fn at(&self, t: &Tok) -> bool {
        self.tok() == t
    }
    fn at_punct(&self, p: &str) -> bool {
        matches!(self.tok(), Tok::Punct(q) if *q == p)
    }
    fn at_name(&self, n: &str) -> bool {
        matches!(self.tok(), Tok::Name(m) if m == n)
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.at_punct(p) {
            self.advance();
            true
        } else {
            false
        }
    }
    fn eat_name(&mut self, n: &str) -> bool {
        if self.at_name(n) {
            self.advance();
            true
        } else {
            false
        }
    }
    fn error_here(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new("syntax-error", message).with_span(self.span())
    }
    fn expected(&self, what: &str) -> Diagnostic {
        self.error_here(format!("expected {what}, found {}", self.tok().describe()))
    }
    fn expect_punct(&mut self, p: &str) -> Result<Span, Diagnostic> {
        let sp = self.span();
        if self.eat_punct(p) {
            Ok(sp)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }
    fn ident(&mut self, what: &str) -> Result<Ident, Diagnostic> {
        match self.tok().clone() {
            Tok::Name(name) if !is_keyword(&name) => {
                let span = self.span();
                self.advance();
                Ok(Ident { name, span })
            }
            _ => Err(self.expected(what)),
        }
    }
    fn skip_newlines(&mut self) {
        while self.at(&Tok::Newline) {
            self.advance();
        }
    }
    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_here(format!(
                "expected at most {MAX_DEPTH} levels of nesting, found more"
            )));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn leave_n(&mut self, n: usize) {
        self.depth = self.depth.saturating_sub(n);
    }

    /// One statement line (possibly several `;`-separated simple statements)
    /// or one compound statement.
    fn statement(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        let lo = self.span().lo;
        if self.at_punct("@") {
            let mut decorators = Vec::new();
            while self.eat_punct("@") {
                decorators.push(self.expr()?);
                if !self.at(&Tok::Newline) {
                    return Err(self.expected("end of line after the decorator"));
                }
                self.skip_newlines();
            }
            if self.at_name("def") {
                let mut f = self.func_def()?;
                f.decorators = decorators;
                return Ok(vec![self.finish(StmtKind::FuncDef(f), lo)]);
            }
            if self.at_name("class") {
                let mut c = self.class_def()?;
                c.decorators = decorators;
                return Ok(vec![self.finish(StmtKind::ClassDef(c), lo)]);
            }
            return Err(self.expected("`def` or `class` after decorators"));
        }
        match self.tok() {
            Tok::Name(n) if n == "def" => {
                let f = self.func_def()?;
                return Ok(vec![self.finish(StmtKind::FuncDef(f), lo)]);
            }
            Tok::Name(n) if n == "class" => {
                let c = self.class_def()?;
                return Ok(vec![self.finish(StmtKind::ClassDef(c), lo)]);
            }
            Tok::Name(n) if n == "if" => {
                self.advance();
                return Ok(vec![self.if_rest(lo)?]);
            }
            Tok::Name(n) if n == "with" => {
                self.advance();
                let item = self.expr()?;
                if self.at_name("as") {
                    return Err(
                        self.error_here("expected `:`, found `as` (`with … as` is not TVMScript)")
                    );
                }
                self.expect_punct(":")?;
                let body = self.block()?;
                return Ok(vec![self.finish(StmtKind::With { item, body }, lo)]);
            }
            Tok::Name(n) if n == "for" => {
                self.advance();
                return Ok(vec![self.for_rest(lo)?]);
            }
            Tok::Name(n) if STATEMENT_KEYWORDS.contains(&n.as_str()) => {
                let n = n.clone();
                // Skip the statement's header and body so the lowering can
                // report it as unsupported at its keyword.
                let span = self.span();
                self.skip_statement()?;
                return Ok(vec![Stmt {
                    kind: StmtKind::Unsupported(OtherStmt {
                        keyword: n,
                        loop_level: None,
                    }),
                    span,
                }]);
            }
            _ => {}
        }
        self.simple_statements()
    }

    /// `a; b; c` up to the end of the line.
    fn simple_statements(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        let mut out = vec![self.simple_statement()?];
        while self.eat_punct(";") {
            if self.at(&Tok::Newline) {
                break;
            }
            out.push(self.simple_statement()?);
        }
        if !self.at(&Tok::Newline) && !self.at(&Tok::Eof) {
            return Err(self.expected("end of line"));
        }
        self.skip_newlines();
        Ok(out)
    }

    fn finish(&self, kind: StmtKind, lo: usize) -> Stmt {
        Stmt {
            kind,
            span: Span::new(lo, self.prev_hi().max(lo)),
        }
    }

    /// Skips an unsupported statement: its line and any indented block.
    fn skip_statement(&mut self) -> Result<(), Diagnostic> {
        while !self.at(&Tok::Newline) && !self.at(&Tok::Eof) {
            self.advance();
        }
        self.skip_newlines();
        if self.at(&Tok::Indent) {
            let mut level = 0usize;
            loop {
                match self.tok() {
                    Tok::Indent => level += 1,
                    Tok::Dedent => {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            self.advance();
                            break;
                        }
                    }
                    Tok::Eof => break,
                    _ => {}
                }
                self.advance();
            }
        }
        Ok(())
    }

    fn simple_statement(&mut self) -> Result<Stmt, Diagnostic> {
        let lo = self.span().lo;
        if self.eat_name("pass") {
            return Ok(self.finish(StmtKind::Pass, lo));
        }
        if self.eat_name("return") {
            let value = if self.at(&Tok::Newline) || self.at_punct(";") || self.at(&Tok::Eof) {
                None
            } else {
                Some(self.expr_list()?)
            };
            return Ok(self.finish(StmtKind::Return(value), lo));
        }
        if self.at_name("import") || self.at_name("from") {
            while !self.at(&Tok::Newline) && !self.at(&Tok::Eof) && !self.at_punct(";") {
                self.advance();
            }
            return Ok(self.finish(StmtKind::Import, lo));
        }
        let first = self.expr_list()?;
        if self.eat_punct(":") {
            let target = self.assign_target(&first)?;
            let annotation = self.expr()?;
            self.expect_punct("=")?;
            let value = self.expr_list()?;
            return Ok(self.finish(
                StmtKind::Assign {
                    targets: target.0,
                    unpack: target.1,
                    annotation: Some(annotation),
                    value,
                },
                lo,
            ));
        }
        if self.at_punct("=") && matches!(first.kind, ExprKind::Subscript(..)) {
            self.advance();
            let value = self.expr_list()?;
            if self.at_punct("=") {
                return Err(self.error_here(
                    "expected end of line, found `=` (chained assignment is not TVMScript)",
                ));
            }
            let kind = StmtKind::Unsupported(OtherStmt {
                keyword: "item assignment".into(),
                loop_level: Some(LoopLevelStmt::ItemAssign {
                    target: first,
                    value,
                }),
            });
            return Ok(self.finish(kind, lo));
        }
        if self.at_punct("=") {
            self.advance();
            let target = self.assign_target(&first)?;
            let value = self.expr_list()?;
            if self.at_punct("=") {
                return Err(self.error_here(
                    "expected end of line, found `=` (chained assignment is not TVMScript)",
                ));
            }
            return Ok(self.finish(
                StmtKind::Assign {
                    targets: target.0,
                    unpack: target.1,
                    annotation: None,
                    value,
                },
                lo,
            ));
        }
        if let Tok::Punct(p) = self.tok() {
            if p.ends_with('=') && !matches!(*p, "==" | "!=" | "<=" | ">=") {
                return Err(self.error_here(format!(
                    "expected `=`, found `{p}` (augmented assignment is not TVMScript)"
                )));
            }
        }
        Ok(self.finish(StmtKind::Expr(first), lo))
    }

    fn assign_target(&self, e: &Expr) -> Result<(Vec<Ident>, bool), Diagnostic> {
        let one = |e: &Expr| match &e.kind {
            ExprKind::Name(n) if !is_keyword(n) => Ok(Ident {
                name: n.clone(),
                span: e.span,
            }),
            _ => Err(Diagnostic::new(
                "syntax-error",
                format!("expected a name to assign to, found {}", e.describe()),
            )
            .with_span(e.span)),
        };
        match &e.kind {
            ExprKind::Tuple(items) if !items.is_empty() => {
                Ok((items.iter().map(one).collect::<Result<_, _>>()?, true))
            }
            _ => Ok((vec![one(e)?], false)),
        }
    }

    /// An indented block after `:`, or simple statements on the same line.
    fn block(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        self.enter()?;
        let r = self.block_inner();
        self.leave();
        r
    }

    fn block_inner(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        if !self.at(&Tok::Newline) {
            return self.simple_statements();
        }
        self.skip_newlines();
        if !self.at(&Tok::Indent) {
            return Err(self.expected("an indented block"));
        }
        self.advance();
        let mut stmts = Vec::new();
        loop {
            self.skip_newlines();
            match self.tok() {
                Tok::Dedent => {
                    self.advance();
                    break;
                }
                Tok::Eof => break,
                Tok::Indent => {
                    return Err(self.error_here("expected a statement, found an unexpected indent"))
                }
                _ => stmts.extend(self.statement()?),
            }
        }
        Ok(stmts)
    }

    fn if_rest(&mut self, lo: usize) -> Result<Stmt, Diagnostic> {
        let cond = self.expr()?;
        self.expect_punct(":")?;
        let then = self.block()?;
        let orelse = if self.at_name("elif") {
            let elif_lo = self.span().lo;
            self.advance();
            self.enter()?;
            let nested = self.if_rest(elif_lo);
            self.leave();
            Some(vec![nested?])
        } else if self.eat_name("else") {
            self.expect_punct(":")?;
            Some(self.block()?)
        } else {
            None
        };
        Ok(self.finish(StmtKind::If { cond, then, orelse }, lo))
    }

    /// `for a, b in iter: body`, after `for`.
    fn for_rest(&mut self, lo: usize) -> Result<Stmt, Diagnostic> {
        let mut targets = Vec::new();
        let paren = self.eat_punct("(");
        loop {
            targets.push(self.ident("a loop variable name")?);
            if !self.eat_punct(",") || self.at_name("in") || self.at_punct(")") {
                break;
            }
        }
        if paren {
            self.expect_punct(")")?;
        }
        if !self.eat_name("in") {
            return Err(self.expected("`in`"));
        }
        let iter = self.expr()?;
        self.expect_punct(":")?;
        let body = self.block()?;
        let kind = StmtKind::Unsupported(OtherStmt {
            keyword: "for".into(),
            loop_level: Some(LoopLevelStmt::For {
                targets,
                iter,
                body,
            }),
        });
        Ok(self.finish(kind, lo))
    }

    fn func_def(&mut self) -> Result<FuncDef, Diagnostic> {
        let lo = self.span().lo;
        self.advance(); // `def`
        let name = self.ident("a function name")?;
        self.expect_punct("(")?;
        let mut params = Vec::new();
        while !self.at_punct(")") {
            if self.at_punct("*") || self.at_punct("**") || self.at_punct("/") {
                return Err(self.expected("a parameter name"));
            }
            let pname = self.ident("a parameter name")?;
            let annotation = if self.eat_punct(":") {
                Some(self.expr()?)
            } else {
                None
            };
            let default = if self.eat_punct("=") {
                Some(self.expr()?)
            } else {
                None
            };
            params.push(Param {
                name: pname,
                annotation,
                default,
            });
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(")")?;
        let ret = if self.eat_punct("->") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_punct(":")?;
        let header_span = Span::new(lo, self.prev_hi());
        let body = self.block()?;
        Ok(FuncDef {
            decorators: Vec::new(),
            name,
            params,
            ret,
            body,
            header_span,
        })
    }

    fn class_def(&mut self) -> Result<ClassDef, Diagnostic> {
        self.advance(); // `class`
        let name = self.ident("a class name")?;
        if self.eat_punct("(") {
            while !self.at_punct(")") && !self.at(&Tok::Eof) {
                self.expr()?;
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        self.expect_punct(":")?;
        let body = self.block()?;
        Ok(ClassDef {
            decorators: Vec::new(),
            name,
            body,
        })
    }

    /// The index of a subscript: like [`Self::expr_list`], but items may
    /// be slices `lo:hi`.
    fn subscript_list(&mut self) -> Result<Expr, Diagnostic> {
        let lo = self.span().lo;
        let mut items = Vec::new();
        let mut trailing = false;
        while !self.at_punct("]") {
            items.push(self.subscript_item()?);
            trailing = self.eat_punct(",");
            if !trailing {
                break;
            }
        }
        if items.len() == 1 && !trailing {
            if let Some(e) = items.pop() {
                return Ok(e);
            }
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: Span::new(lo, self.prev_hi()),
        })
    }

    /// `e`, or a slice `lo:hi` (also `lo:`, `:hi`, `:`), which becomes
    /// `slice(lo, hi)` with `None` for a missing bound, as in Python.
    fn subscript_item(&mut self) -> Result<Expr, Diagnostic> {
        let lo = self.span().lo;
        let start = if self.at_punct(":") {
            None
        } else {
            Some(self.expr()?)
        };
        let colon = self.span();
        if !self.eat_punct(":") {
            return start.ok_or_else(|| self.expected("an index"));
        }
        let end = if self.at_punct(",") || self.at_punct("]") {
            None
        } else {
            Some(self.expr()?)
        };
        let none = |at: Span| Expr {
            kind: ExprKind::None,
            span: Span::new(at.hi, at.hi),
        };
        let start = start.unwrap_or_else(|| none(Span::new(lo, lo)));
        let end = end.unwrap_or_else(|| none(colon));
        Ok(Expr {
            kind: ExprKind::Call {
                func: Box::new(Expr {
                    kind: ExprKind::Name("slice".into()),
                    span: colon,
                }),
                args: vec![start, end],
                kwargs: vec![],
            },
            span: Span::new(lo, self.prev_hi()),
        })
    }

    /// `a, b` (an unparenthesized tuple) or a single expression.
    fn expr_list(&mut self) -> Result<Expr, Diagnostic> {
        let lo = self.span().lo;
        let first = self.expr()?;
        if !self.at_punct(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_punct(",") {
            if self.at(&Tok::Newline)
                || self.at_punct("=")
                || self.at_punct(":")
                || self.at(&Tok::Eof)
            {
                break;
            }
            items.push(self.expr()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span: Span::new(lo, self.prev_hi()),
        })
    }

    /// A full expression (the `or` level).
    pub fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let r = self.or_expr();
        self.leave();
        r
    }

    fn binary(&self, op: BinOp, l: Expr, r: Expr) -> Expr {
        let span = Span::new(l.span.lo, r.span.hi);
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            span,
        }
    }

    /// `operand (op operand)*`, grouped to the left; `op_of` names this
    /// level's operators.
    fn left_assoc(
        &mut self,
        operand: fn(&mut Self) -> Result<Expr, Diagnostic>,
        op_of: fn(&Tok) -> Option<BinOp>,
    ) -> Result<Expr, Diagnostic> {
        let mut l = operand(self)?;
        let mut n = 0;
        while let Some(op) = op_of(self.tok()) {
            self.advance();
            self.enter()?;
            n += 1;
            let r = operand(self)?;
            l = self.binary(op, l, r);
        }
        self.leave_n(n);
        Ok(l)
    }

    fn or_expr(&mut self) -> Result<Expr, Diagnostic> {
        self.left_assoc(Self::and_expr, |t| match t {
            Tok::Name(n) if n == "or" => Some(BinOp::Or),
            _ => None,
        })
    }

    fn and_expr(&mut self) -> Result<Expr, Diagnostic> {
        self.left_assoc(Self::not_expr, |t| match t {
            Tok::Name(n) if n == "and" => Some(BinOp::And),
            _ => None,
        })
    }

    fn not_expr(&mut self) -> Result<Expr, Diagnostic> {
        let lo = self.span().lo;
        if self.eat_name("not") {
            self.enter()?;
            let e = self.not_expr();
            self.leave();
            let e = e?;
            let span = Span::new(lo, e.span.hi);
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(e)),
                span,
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, Diagnostic> {
        let first = self.shift()?;
        let mut result: Option<Expr> = None;
        let mut left = first.clone();
        let mut n = 0;
        loop {
            let op = match self.tok() {
                Tok::Punct("==") => BinOp::Eq,
                Tok::Punct("!=") => BinOp::Ne,
                Tok::Punct("<") => BinOp::Lt,
                Tok::Punct("<=") => BinOp::Le,
                Tok::Punct(">") => BinOp::Gt,
                Tok::Punct(">=") => BinOp::Ge,
                Tok::Name(n) if n == "in" || n == "is" => {
                    return Err(self.error_here(format!(
                        "expected an expression, found `{n}` (not TVMScript)"
                    )))
                }
                _ => break,
            };
            self.advance();
            self.enter()?;
            n += 1;
            let right = self.shift()?;
            let cmp = self.binary(op, left, right.clone());
            // `a < b < c` means `a < b and b < c`.
            result = Some(match result {
                None => cmp,
                Some(prev) => self.binary(BinOp::And, prev, cmp),
            });
            left = right;
        }
        self.leave_n(n);
        Ok(result.unwrap_or(first))
    }

    /// `a << b`, `a >> b`: below `+` and above comparisons, as in Python.
    fn shift(&mut self) -> Result<Expr, Diagnostic> {
        self.left_assoc(Self::arith, |t| match t {
            Tok::Punct("<<") => Some(BinOp::Shl),
            Tok::Punct(">>") => Some(BinOp::Shr),
            _ => None,
        })
    }

    fn arith(&mut self) -> Result<Expr, Diagnostic> {
        self.left_assoc(Self::term, |t| match t {
            Tok::Punct("+") => Some(BinOp::Add),
            Tok::Punct("-") => Some(BinOp::Sub),
            _ => None,
        })
    }

    fn term(&mut self) -> Result<Expr, Diagnostic> {
        self.left_assoc(Self::unary, |t| match t {
            Tok::Punct("*") => Some(BinOp::Mul),
            Tok::Punct("/") => Some(BinOp::Div),
            Tok::Punct("//") => Some(BinOp::FloorDiv),
            Tok::Punct("%") => Some(BinOp::Mod),
            _ => None,
        })
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        let lo = self.span().lo;
        let op = match self.tok() {
            Tok::Punct("-") => UnOp::Neg,
            Tok::Punct("+") => UnOp::Pos,
            _ => return self.power(),
        };
        self.advance();
        self.enter()?;
        let e = self.unary();
        self.leave();
        let e = e?;
        let span = Span::new(lo, e.span.hi);
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(e)),
            span,
        })
    }

    fn power(&mut self) -> Result<Expr, Diagnostic> {
        let base = self.postfix()?;
        if self.eat_punct("**") {
            self.enter()?;
            let exp = self.unary();
            self.leave();
            return Ok(self.binary(BinOp::Pow, base, exp?));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, Diagnostic> {
        let mut e = self.atom()?;
        let mut n = 0;
        loop {
            if self.at_punct(".") || self.at_punct("(") || self.at_punct("[") {
                self.enter()?;
                n += 1;
            }
            if self.eat_punct(".") {
                let attr = self.ident("an attribute name")?;
                let span = Span::new(e.span.lo, attr.span.hi);
                e = Expr {
                    kind: ExprKind::Attr(Box::new(e), attr),
                    span,
                };
            } else if self.at_punct("(") {
                self.advance();
                self.enter()?;
                let r = self.call_args();
                self.leave();
                let (args, kwargs) = r?;
                self.expect_punct(")")?;
                let span = Span::new(e.span.lo, self.prev_hi());
                e = Expr {
                    kind: ExprKind::Call {
                        func: Box::new(e),
                        args,
                        kwargs,
                    },
                    span,
                };
            } else if self.at_punct("[") {
                self.advance();
                let index = self.subscript_list()?;
                self.expect_punct("]")?;
                let span = Span::new(e.span.lo, self.prev_hi());
                e = Expr {
                    kind: ExprKind::Subscript(Box::new(e), Box::new(index)),
                    span,
                };
            } else {
                self.leave_n(n);
                return Ok(e);
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn call_args(&mut self) -> Result<(Vec<Expr>, Vec<(Ident, Expr)>), Diagnostic> {
        let mut args = Vec::new();
        let mut kwargs: Vec<(Ident, Expr)> = Vec::new();
        while !self.at_punct(")") {
            if matches!(self.tok(), Tok::Name(_)) && matches!(self.nth(1), Tok::Punct("=")) {
                let key = self.ident("a keyword argument name")?;
                self.advance(); // `=`
                if kwargs.iter().any(|(k, _)| k.name == key.name) {
                    return Err(Diagnostic::new(
                        "syntax-error",
                        format!(
                            "expected each keyword argument once, found `{}` again",
                            key.name
                        ),
                    )
                    .with_span(key.span));
                }
                let value = self.expr()?;
                kwargs.push((key, value));
            } else {
                if self.at_punct("*") || self.at_punct("**") {
                    return Err(self.expected("an argument"));
                }
                let e = self.expr()?;
                if !kwargs.is_empty() {
                    return Err(Diagnostic::new(
                        "syntax-error",
                        "expected a keyword argument, found a positional argument after keyword arguments",
                    )
                    .with_span(e.span));
                }
                args.push(e);
            }
            if !self.eat_punct(",") {
                break;
            }
        }
        Ok((args, kwargs))
    }

    fn atom(&mut self) -> Result<Expr, Diagnostic> {
        let span = self.span();
        let kind = match self.tok().clone() {
            Tok::Name(n) => match n.as_str() {
                "True" => ExprKind::Bool(true),
                "False" => ExprKind::Bool(false),
                "None" => ExprKind::None,
                _ if is_keyword(&n) => return Err(self.expected("an expression")),
                _ => ExprKind::Name(n),
            },
            Tok::Int(v) => ExprKind::Int(v),
            Tok::Float(v) => ExprKind::Float(v),
            Tok::Str(s) => {
                // Adjacent string literals concatenate, as in Python.
                let mut s = s;
                self.advance();
                while let Tok::Str(more) = self.tok() {
                    s.push_str(more);
                    self.advance();
                }
                return Ok(Expr {
                    kind: ExprKind::Str(s),
                    span: Span::new(span.lo, self.prev_hi()),
                });
            }
            Tok::Punct("(") => {
                self.advance();
                self.enter()?;
                let r = self.paren_rest(span.lo);
                self.leave();
                return r;
            }
            Tok::Punct("[") => {
                self.advance();
                self.enter()?;
                let r = self.seq_items("]");
                self.leave();
                let (items, _) = r?;
                self.expect_punct("]")?;
                return Ok(Expr {
                    kind: ExprKind::List(items),
                    span: Span::new(span.lo, self.prev_hi()),
                });
            }
            Tok::Punct("{") => {
                self.advance();
                self.enter()?;
                let r = self.dict_rest();
                self.leave();
                let items = r?;
                return Ok(Expr {
                    kind: ExprKind::Dict(items),
                    span: Span::new(span.lo, self.prev_hi()),
                });
            }
            _ => return Err(self.expected("an expression")),
        };
        self.advance();
        Ok(Expr { kind, span })
    }

    /// Comma-separated expressions up to `close` (not consumed); also says
    /// whether a trailing comma was seen.
    fn seq_items(&mut self, close: &str) -> Result<(Vec<Expr>, bool), Diagnostic> {
        let mut items = Vec::new();
        let mut trailing = false;
        while !self.at_punct(close) {
            items.push(self.expr()?);
            trailing = self.eat_punct(",");
            if !trailing {
                break;
            }
        }
        Ok((items, trailing))
    }

    fn paren_rest(&mut self, lo: usize) -> Result<Expr, Diagnostic> {
        let (items, trailing) = self.seq_items(")")?;
        self.expect_punct(")")?;
        let span = Span::new(lo, self.prev_hi());
        let mut items = items;
        if items.len() == 1 && !trailing {
            // A parenthesized expression, not a tuple.
            if let Some(e) = items.pop() {
                return Ok(e);
            }
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span,
        })
    }

    fn dict_rest(&mut self) -> Result<Vec<(Expr, Expr)>, Diagnostic> {
        let mut items = Vec::new();
        while !self.at_punct("}") {
            let k = self.expr()?;
            self.expect_punct(":")?;
            let v = self.expr()?;
            items.push((k, v));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct("}")?;
        Ok(items)
    }
}

/// Python keywords that cannot be names.
pub fn is_keyword(n: &str) -> bool {
    matches!(
        n,
        "def"
            | "class"
            | "if"
            | "elif"
            | "else"
            | "with"
            | "return"
            | "pass"
            | "and"
            | "or"
            | "not"
            | "in"
            | "is"
            | "import"
            | "from"
            | "as"
            | "for"
            | "while"
            | "try"
            | "except"
            | "finally"
            | "raise"
            | "del"
            | "global"
            | "nonlocal"
            | "assert"
            | "lambda"
            | "yield"
            | "async"
            | "await"
            | "break"
            | "continue"
    )
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn parse(src: &str) -> Result<Vec<Stmt>, Diagnostic> {
        let (t, e) = tokenize(src);
        assert!(e.is_empty(), "{e:?}");
        parse_file(&t)
    }

    fn expr(src: &str) -> Expr {
        let (t, _) = tokenize(src);
        parse_expression(&t).unwrap()
    }

    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Name(n) => n.clone(),
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.text(), show(b)),
            ExprKind::Unary(UnOp::Neg, a) => format!("(-{})", show(a)),
            ExprKind::Unary(UnOp::Not, a) => format!("(not {})", show(a)),
            ExprKind::Tuple(items) => format!(
                "T[{}]",
                items.iter().map(show).collect::<Vec<_>>().join(",")
            ),
            ExprKind::Call { func, args, kwargs } => format!(
                "{}({};{})",
                show(func),
                args.iter().map(show).collect::<Vec<_>>().join(","),
                kwargs
                    .iter()
                    .map(|(k, v)| format!("{}={}", k.name, show(v)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            ExprKind::Attr(b, a) => format!("{}.{}", show(b), a.name),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn python_precedence() {
        assert_eq!(
            show(&expr("a + b * c // d - e")),
            "((a + ((b * c) // d)) - e)"
        );
        assert_eq!(
            show(&expr("not a < b and c or d")),
            "(((not (a < b)) and c) or d)"
        );
        assert_eq!(show(&expr("-a * -2")), "((-a) * (-2))");
        assert_eq!(show(&expr("a < b <= c")), "((a < b) and (b <= c))");
        assert_eq!(show(&expr("(a,)")), "T[a]");
        assert_eq!(show(&expr("(a)")), "a");
        assert_eq!(show(&expr("()")), "T[]");
        assert_eq!(show(&expr("R.nn.relu(x, axis=1)")), "R.nn.relu(x;axis=1)");
    }

    #[test]
    fn statements_and_blocks() {
        let s = parse("@R.function\ndef f(x: R.Tensor) -> R.Tensor:\n    with R.dataflow():\n        y = x; R.output(y)\n    return y\n").unwrap();
        assert_eq!(s.len(), 1);
        let StmtKind::FuncDef(f) = &s[0].kind else {
            panic!("not a def")
        };
        assert_eq!(f.decorators.len(), 1);
        assert_eq!(f.params.len(), 1);
        assert_eq!(f.body.len(), 2);
        let StmtKind::With { body, .. } = &f.body[0].kind else {
            panic!("not a with")
        };
        assert_eq!(body.len(), 2);
    }

    #[test]
    fn syntax_errors_name_expected_and_found() {
        let (t, _) = tokenize("def f(x:\n");
        let e = parse_file(&t).unwrap_err();
        assert!(
            e.message.starts_with("expected an expression, found"),
            "{}",
            e.message
        );
        let (t, _) = tokenize("x = (1, 2\ny = 3\n");
        let e = parse_file(&t).unwrap_err();
        assert!(e.message.contains("expected"), "{}", e.message);
        let e = parse("x = = 3\n").unwrap_err();
        assert_eq!(e.message, "expected an expression, found `=`");
        assert_eq!(e.span, Some(Span::new(4, 5)));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        let e = parse(&src).unwrap_err();
        assert!(e.message.contains("levels of nesting"), "{}", e.message);
        let src = format!("x = {}1\n", "-".repeat(5000));
        assert!(parse(&src).is_err());
        let src = format!("x = {}1\n", "not ".repeat(5000));
        assert!(parse(&src).is_err());
        let src = format!("x = 1{}\n", " + 1".repeat(5000));
        assert!(parse(&src).is_err());
        let src = format!("x = a{}\n", "[0]".repeat(5000));
        assert!(parse(&src).is_err());
        let src = format!("x = 1{}\n", " < 1".repeat(5000));
        assert!(parse(&src).is_err());
    }
}
