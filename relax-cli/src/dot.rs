//! A function's dataflow graph in Graphviz's DOT language.
//!
//! Each parameter is an input node, each binding a node labelled with what
//! it computes (the op, the PrimFunc of a `call_tir`, the function called)
//! and its StructInfo; an edge runs from each variable to the bindings
//! that read it. A call of a fused primitive function (`Primitive`, what
//! FuseOps makes) is drawn as a cluster holding the function's own
//! bindings, wired to the producers of its arguments, or, `collapsed`, as
//! one node named after the fused function.
//!
//! [`svg`] lays the DOT text out and draws it as SVG in-process, through
//! the pure-Rust `layout-rs` crate (no Graphviz needed). It draws no
//! clusters, so `relax dot --svg` collapses fused calls.

use relax_core::analysis::vars::free_vars;
use relax_core::ir::{Binding, Expr, ExprKind, Function, IRModule, Var};
use relax_core::transform::fuse_ops::PRIMITIVE;
use std::collections::HashMap;
use std::fmt::Write;

/// The DOT text of `module`'s function `name`; `collapsed` draws each call
/// of a fused function as one node instead of a cluster of its bindings.
pub fn render(module: &IRModule, name: &str, collapsed: bool) -> Result<String, String> {
    let f = module
        .get_relax(name)
        .ok_or_else(|| format!("the module has no Relax function `{name}`"))?;
    let mut g = Graph {
        module,
        out: String::new(),
        next: 0,
        clusters: 0,
        collapsed,
    };
    g.out
        .push_str(&format!("digraph \"{}\" {{\n", escape(name)));
    g.out
        .push_str("  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    let mut nodes: HashMap<Var, String> = HashMap::new();
    for p in &f.params {
        let id = g.node(&format!("{}\\n{}", p.name_hint(), sinfo(p)), "ellipse", 1);
        nodes.insert(p.clone(), id);
    }
    g.body(f, &mut nodes, 1)?;
    g.out.push_str("}\n");
    Ok(g.out)
}

struct Graph<'a> {
    module: &'a IRModule,
    out: String,
    next: usize,
    clusters: usize,
    collapsed: bool,
}

/// DOT text laid out and drawn as an SVG document.
pub fn svg(dot: &str) -> Result<String, String> {
    use layout::backends::svg::SVGWriter;
    use layout::gv::{DotParser, GraphBuilder};
    let graph = DotParser::new(dot)
        .process()
        .map_err(|e| format!("the DOT text does not parse for layout: {e}"))?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    let mut writer = SVGWriter::new();
    visual.do_it(false, false, false, &mut writer);
    Ok(writer.finalize())
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn sinfo(v: &Var) -> String {
    v.struct_info()
        .map(|s| {
            s.to_string()
                .replace("R.Tensor", "")
                .replace(", dtype=", ", ")
                .replace('"', "")
        })
        .unwrap_or_default()
}

/// What a binding's value computes, in a few words.
fn what(value: &Expr) -> String {
    match value.kind() {
        ExprKind::Call(call) => match call.op.kind() {
            ExprKind::Op(op) => {
                let name = op.name().trim_start_matches("relax.");
                if name == "call_tir" {
                    match call.args.first().map(Expr::kind) {
                        Some(ExprKind::GlobalVar(gv)) => format!("call_tir {}", gv.name_hint()),
                        _ => "call_tir".into(),
                    }
                } else {
                    name.to_string()
                }
            }
            ExprKind::GlobalVar(gv) => gv.name_hint().to_string(),
            _ => "call".into(),
        },
        ExprKind::Tuple(_) => "tuple".into(),
        ExprKind::TupleGetItem(_, i) => format!("[{i}]"),
        ExprKind::Var(_) => "alias".into(),
        ExprKind::Constant(_) => "constant".into(),
        _ => "value".into(),
    }
}

impl Graph<'_> {
    fn node(&mut self, label: &str, shape: &str, indent: usize) -> String {
        let id = format!("n{}", self.next);
        self.next += 1;
        let pad = "  ".repeat(indent);
        let _ = writeln!(
            self.out,
            "{pad}{id} [label=\"{}\", shape={shape}];",
            escape(label).replace("\\\\n", "\\n")
        );
        id
    }

    fn edge(&mut self, from: &str, to: &str) {
        let _ = writeln!(self.out, "  {from} -> {to};");
    }

    /// The fused primitive function a value calls, if any.
    fn primitive(&self, value: &Expr) -> Option<(String, Function)> {
        let call = value.as_call()?;
        let ExprKind::GlobalVar(gv) = call.op.kind() else {
            return None;
        };
        let f = self.module.get_relax(gv.name_hint())?;
        f.attrs
            .get(PRIMITIVE)
            .map(|_| (gv.name_hint().to_string(), f.clone()))
    }

    /// The bindings of `f`'s body, with `nodes` giving the node of every
    /// variable in scope; returns the node of the body's result.
    fn body(
        &mut self,
        f: &Function,
        nodes: &mut HashMap<Var, String>,
        indent: usize,
    ) -> Result<Option<String>, String> {
        let seq = f
            .body
            .as_seq()
            .ok_or_else(|| "a function body is not a SeqExpr".to_string())?;
        for binding in seq.blocks.iter().flat_map(|b| &b.bindings) {
            let (var, value) = (binding.var(), binding.value());
            let reads = free_vars(value);
            let id = match self.primitive(value) {
                Some((name, _)) if self.collapsed => {
                    let id = self.node(&format!("{name}\\n{}", sinfo(var)), "box", indent);
                    for r in &reads {
                        if let Some(from) = nodes.get(r).cloned() {
                            self.edge(&from, &id);
                        }
                    }
                    id
                }
                Some((name, prim)) => self.cluster(&name, &prim, value, nodes)?,
                None => {
                    let mut label = format!("{}\\n{}", what(value), sinfo(var));
                    if matches!(binding, Binding::MatchCast(_)) {
                        label.insert_str(0, "match_cast ");
                    }
                    let id = self.node(&label, "box", indent);
                    for r in &reads {
                        if let Some(from) = nodes.get(r).cloned() {
                            self.edge(&from, &id);
                        }
                    }
                    id
                }
            };
            nodes.insert(var.clone(), id);
        }
        Ok(seq.body.as_var().and_then(|v| nodes.get(v).cloned()))
    }

    /// A call of the primitive function `prim` as a cluster; returns the
    /// node of its result.
    fn cluster(
        &mut self,
        name: &str,
        prim: &Function,
        value: &Expr,
        outer: &HashMap<Var, String>,
    ) -> Result<String, String> {
        let call = value.as_call().ok_or("not a call")?;
        self.clusters += 1;
        let _ = writeln!(
            self.out,
            "  subgraph cluster_{} {{\n    label=\"{}\"; style=rounded; color=blue;",
            self.clusters,
            escape(name)
        );
        // The primitive function's parameters stand for the producers of
        // the call's arguments.
        let mut inner: HashMap<Var, String> = HashMap::new();
        let mut pending_edges = Vec::new();
        for (p, arg) in prim.params.iter().zip(&call.args) {
            let producers: Vec<String> = free_vars(arg)
                .iter()
                .filter_map(|v| outer.get(v).cloned())
                .collect();
            inner.insert(p.clone(), format!("param:{}", producers.join(",")));
        }
        let result = self.body_in_cluster(prim, &mut inner, &mut pending_edges)?;
        self.out.push_str("  }\n");
        for (from, to) in pending_edges {
            self.edge(&from, &to);
        }
        result.ok_or_else(|| format!("`{name}` returns no binding"))
    }

    fn body_in_cluster(
        &mut self,
        f: &Function,
        nodes: &mut HashMap<Var, String>,
        edges: &mut Vec<(String, String)>,
    ) -> Result<Option<String>, String> {
        let seq = f.body.as_seq().ok_or("a function body is not a SeqExpr")?;
        for binding in seq.blocks.iter().flat_map(|b| &b.bindings) {
            let (var, value) = (binding.var(), binding.value());
            let label = format!("{}\\n{}", what(value), sinfo(var));
            let id = self.node(&label, "box", 2);
            for r in free_vars(value) {
                match nodes.get(&r) {
                    Some(from) if from.starts_with("param:") => {
                        for p in from["param:".len()..].split(',').filter(|s| !s.is_empty()) {
                            edges.push((p.to_string(), id.clone()));
                        }
                    }
                    Some(from) => edges.push((from.clone(), id.clone())),
                    None => {}
                }
            }
            nodes.insert(var.clone(), id);
        }
        Ok(seq.body.as_var().and_then(|v| nodes.get(v).cloned()))
    }
}
