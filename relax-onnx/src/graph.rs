//! The importer: a `ModelProto`'s graph to the function `main` (see the
//! crate docs for what becomes what).

use crate::error;
use crate::external::ExternalData;
use crate::node::Node;
use crate::ops;
use crate::proto::{tensor_shape_proto::dimension, type_proto, GraphProto, ModelProto, NodeProto};
use crate::tensor::{dtype_of, elem_type_name, to_tensor_in};
use relax_core::ir::{Expr, ExprKind, IRModule, PrimExpr, StructInfo, TirVar, Var};
use relax_core::BlockBuilder;
use relax_runtime::{DataType, Error, Tensor};
use std::collections::{HashMap, HashSet};

/// The newest default-domain opset the converters know (ONNX 1.23's).
pub const MAX_OPSET: i64 = 28;

/// How to import (`ImportOptions { keep_params_in_input: true,
/// ..Default::default() }`).
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Float initializers become parameters of `main` after the inputs,
    /// instead of constants (TVM's `keep_params_in_input`).
    pub keep_params_in_input: bool,
    /// Shapes for graph inputs, by their ONNX names, replacing the shapes
    /// the graph declares (TVM's `shape_dict`): to fix a batch size, or to
    /// name a dim the exporter left anonymous. Each given shape must have
    /// the declared rank (any rank when the graph declares none); a
    /// [`Dim::Symbolic`] dim is the same variable as every other dim of
    /// that name, given here or in the graph. Naming a value that is not
    /// an input of the graph (an initializer, a typo) is an error.
    pub shape_dict: HashMap<String, Vec<Dim>>,
    /// Lengths for sequence graph inputs, by their ONNX names. A sequence
    /// is imported as a Relax tuple, whose arity is static: a sequence
    /// input named here is specialized to a tuple of this many tensors
    /// (each of the declared element type, with its own symbolic dims
    /// where the element shape is not fixed), which the sequence ops can
    /// take apart. A sequence input not named here is an opaque object
    /// that can only be passed on. Naming a value that is not a sequence
    /// input of the graph is an error.
    pub sequence_lens: HashMap<String, usize>,
}

/// One dim of a shape in [`ImportOptions::shape_dict`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A known extent (at least 0).
    Fixed(i64),
    /// A symbolic variable of this name (`"N"`), shared by every dim that
    /// names it.
    Symbolic(String),
}

impl From<i64> for Dim {
    fn from(v: i64) -> Self {
        Dim::Fixed(v)
    }
}

impl From<&str> for Dim {
    fn from(name: &str) -> Self {
        Dim::Symbolic(name.to_string())
    }
}

/// An imported model.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The module: `main`.
    pub module: IRModule,
    /// With `keep_params_in_input`, the weights, in the order of `main`'s
    /// parameters after the inputs (named as `main`'s parameters are).
    pub params: Vec<(String, Tensor)>,
    /// The ONNX name each parameter of `main` stands for, in order: the
    /// graph inputs' names, then (with `keep_params_in_input`) the weights'
    /// initializer names. A parameter's own name is this name made an
    /// identifier (`gpu_0_data_0` for the input `gpu_0/data_0`).
    pub input_names: Vec<String>,
    /// The ONNX name of each of `main`'s outputs, in order (the graph
    /// outputs' names; `main` returns a tuple when there are several).
    pub output_names: Vec<String>,
    /// The default domain's opset version the model imports (0 when it
    /// imports only `ai.onnx.ml`).
    pub opset: i64,
}

// Names of inputs, weights and symbolic dims become variables that print
// in TVMScript and Rust alike.
use relax_core::printer::dsl::identifier;

/// The ONNX-ML domain, whose converters are [`ops::ml`]'s.
const ML_DOMAIN: &str = "ai.onnx.ml";

/// The default domain's opset version `model` imports (0 for a model that
/// imports only `ai.onnx.ml`).
fn default_opset(model: &ModelProto) -> Result<i64, Error> {
    let version = model
        .opset_import
        .iter()
        .filter(|o| matches!(o.domain(), "" | "ai.onnx"))
        .map(|o| o.version())
        .max();
    let Some(version) = version else {
        // A model of `ai.onnx.ml` ops only: no default-domain node may
        // follow (each is an error naming it).
        if model.opset_import.iter().any(|o| o.domain() == ML_DOMAIN) {
            return Ok(0);
        }
        return Err(error(
            "the model imports no version of the default ONNX opset".into(),
        ));
    };
    if !(1..=MAX_OPSET).contains(&version) {
        return Err(error(format!(
            "the model uses opset {version} of the default domain; this importer knows 1 to {MAX_OPSET}"
        )));
    }
    Ok(version)
}

/// The symbolic variable named `name`, shared by every dim that names it.
fn sym_dim(name: &str, dims: &mut HashMap<String, TirVar>) -> PrimExpr {
    dims.entry(name.to_string())
        .or_insert_with(|| TirVar::new(identifier(name)))
        .to_expr()
}

/// The StructInfo of a graph input's type, with its shape replaced by
/// `given` (from [`ImportOptions::shape_dict`]) when given; a sequence's
/// a tuple of `seq_len` elements (from [`ImportOptions::sequence_lens`])
/// when given.
fn value_sinfo(
    name: &str,
    ty: Option<&crate::proto::TypeProto>,
    given: Option<&[Dim]>,
    seq_len: Option<usize>,
    dims: &mut HashMap<String, TirVar>,
    fresh: &mut usize,
) -> Result<StructInfo, Error> {
    let tensor = match ty.and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => t,
        // A sequence of a length given in `sequence_lens`: a tuple of
        // that many tensors of the element type, each with its own dims.
        Some(type_proto::Value::SequenceType(seq)) if seq_len.is_some() => {
            let elem = seq.elem_type.as_deref().and_then(|t| t.value.as_ref());
            let Some(type_proto::Value::TensorType(_)) = elem else {
                return Err(error(format!(
                    "sequence_lens gives graph input `{name}` a length, but its elements \
                     are not tensors"
                )));
            };
            // Elements may differ in shape: a named dim of the element
            // type is element `k`'s own (`N_k`), shared within it only.
            let mut fields = Vec::new();
            for k in 0..seq_len.unwrap_or(0) {
                let mut elem = seq.elem_type.as_deref().cloned();
                if let Some(type_proto::Value::TensorType(t)) =
                    elem.as_mut().and_then(|t| t.value.as_mut())
                {
                    for d in t.shape.iter_mut().flat_map(|s| s.dim.iter_mut()) {
                        if let Some(dimension::Value::DimParam(p)) = &mut d.value {
                            *p = format!("{p}_{k}");
                        }
                    }
                }
                fields.push(value_sinfo(name, elem.as_ref(), None, None, dims, fresh)?);
            }
            return Ok(StructInfo::tuple(fields));
        }
        // A sequence or an optional whose length (whether it has a
        // value) is only known at run time: an object the graph can pass
        // on (`Identity`, an output), which the sequence ops, needing a
        // tuple of known length, reject.
        Some(type_proto::Value::SequenceType(_) | type_proto::Value::OptionalType(_)) => {
            return Ok(StructInfo::object())
        }
        Some(_) => {
            return Err(error(format!(
            "graph input `{name}` is not a tensor, a sequence or an optional (maps and sparse tensors are not imported)"
        )))
        }
        None => return Err(error(format!("graph input `{name}` has no type"))),
    };
    let dtype = dtype_of(tensor.elem_type()).ok_or_else(|| {
        error(format!(
            "graph input `{name}` has element type {}, which has no dtype here",
            elem_type_name(tensor.elem_type())
        ))
    })?;
    if let Some(given) = given {
        if let Some(shape) = &tensor.shape {
            if shape.dim.len() != given.len() {
                return Err(error(format!(
                    "shape_dict gives graph input `{name}` {} dim(s), but the graph declares \
                     rank {}",
                    given.len(),
                    shape.dim.len()
                )));
            }
        }
        let mut out = Vec::new();
        for d in given {
            out.push(match d {
                Dim::Fixed(v) if *v >= 0 => PrimExpr::int(*v),
                Dim::Fixed(v) => {
                    return Err(error(format!(
                        "shape_dict gives graph input `{name}` the dim {v}; a dim is at least 0"
                    )))
                }
                Dim::Symbolic(p) if !p.is_empty() => sym_dim(p, dims),
                Dim::Symbolic(_) => {
                    return Err(error(format!(
                        "shape_dict gives graph input `{name}` a symbolic dim with an empty name"
                    )))
                }
            });
        }
        return Ok(StructInfo::tensor(out, dtype));
    }
    let Some(shape) = &tensor.shape else {
        return Ok(StructInfo::tensor_ndim(-1, dtype));
    };
    let mut out = Vec::new();
    for d in &shape.dim {
        out.push(match &d.value {
            Some(dimension::Value::DimValue(v)) if *v >= 0 => PrimExpr::int(*v),
            Some(dimension::Value::DimParam(p)) if !p.is_empty() => sym_dim(p, dims),
            _ => {
                *fresh += 1;
                TirVar::new(format!("d{fresh}")).to_expr()
            }
        });
    }
    Ok(StructInfo::tensor(out, dtype))
}

/// Imports `model` (see the crate docs), reading external data through
/// `external`.
pub fn import(
    model: &ModelProto,
    options: &ImportOptions,
    external: &mut ExternalData,
) -> Result<Imported, Error> {
    let opset = default_opset(model)?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| error("the model has no graph".into()))?;
    import_graph(graph, opset, options, external)
}

fn import_graph(
    graph: &GraphProto,
    opset: i64,
    options: &ImportOptions,
    external: &mut ExternalData,
) -> Result<Imported, Error> {
    let initializer_names: HashSet<&str> = graph.initializer.iter().map(|t| t.name()).collect();
    let mut names: Vec<&str> = options.shape_dict.keys().map(String::as_str).collect();
    names.sort_unstable();
    for name in names {
        let is_input = graph
            .input
            .iter()
            .any(|i| i.name() == name && !initializer_names.contains(name));
        if !is_input {
            let inputs: Vec<&str> = graph
                .input
                .iter()
                .map(|i| i.name())
                .filter(|n| !initializer_names.contains(n))
                .collect();
            return Err(error(format!(
                "shape_dict names `{name}`, which is not an input of the graph (its inputs: {})",
                if inputs.is_empty() {
                    "none".to_string()
                } else {
                    inputs.join(", ")
                }
            )));
        }
    }
    let mut names: Vec<&str> = options.sequence_lens.keys().map(String::as_str).collect();
    names.sort_unstable();
    for name in names {
        let is_sequence_input = graph.input.iter().any(|i| {
            i.name() == name
                && !initializer_names.contains(name)
                && matches!(
                    i.r#type.as_ref().and_then(|t| t.value.as_ref()),
                    Some(type_proto::Value::SequenceType(_))
                )
        });
        if !is_sequence_input {
            return Err(error(format!(
                "sequence_lens names `{name}`, which is not a sequence input of the graph"
            )));
        }
    }
    if let Some(s) = graph.sparse_initializer.first() {
        return Err(error(format!(
            "sparse initializer `{}` is not supported",
            s.values.as_ref().map_or("", |v| v.name())
        )));
    }
    let mut values: HashMap<String, Expr> = HashMap::new();
    let mut params = Vec::new();
    let mut used_names: HashSet<String> = HashSet::new();
    let mut unique = |name: &str| {
        let base = identifier(name);
        let mut n = base.clone();
        let mut k = 1;
        while !used_names.insert(n.clone()) {
            n = format!("{base}_{k}");
            k += 1;
        }
        n
    };
    // The inputs.
    let mut sym_dims = HashMap::new();
    let mut fresh = 0;
    let mut num_input = 0;
    let mut input_names = Vec::new();
    for input in &graph.input {
        if initializer_names.contains(input.name()) {
            continue;
        }
        let sinfo = value_sinfo(
            input.name(),
            input.r#type.as_ref(),
            options.shape_dict.get(input.name()).map(Vec::as_slice),
            options.sequence_lens.get(input.name()).copied(),
            &mut sym_dims,
            &mut fresh,
        )?;
        let var = Var::new(unique(input.name()), Some(sinfo));
        values.insert(input.name().to_string(), Expr::var(&var));
        params.push(var);
        input_names.push(input.name().to_string());
        num_input += 1;
    }
    // The initializers. Only these read external data: a `Constant`
    // node's tensor with its data outside the model is an error.
    let mut weights = Vec::new();
    for init in &graph.initializer {
        let t = to_tensor_in(init, external)?;
        if options.keep_params_in_input && t.dtype().is_float() {
            let dims = t.shape().iter().map(|&d| PrimExpr::int(d)).collect();
            let var = Var::new(
                unique(init.name()),
                Some(StructInfo::tensor(dims, t.dtype())),
            );
            values.insert(init.name().to_string(), Expr::var(&var));
            weights.push((var.name_hint().to_string(), t));
            input_names.push(init.name().to_string());
            params.push(var);
        } else {
            values.insert(init.name().to_string(), Expr::constant(t));
        }
    }

    let mut bb = BlockBuilder::new();
    bb.begin_function("main", params);
    if options.keep_params_in_input {
        bb.set_func_attr("num_input", num_input as i64)?;
    }
    // Control flow (`If`, loops) binds its result outside any dataflow
    // block, and values computed in a dataflow block are not visible
    // outside it: a graph with control flow is one plain binding block.
    let dataflow = !has_subgraphs(graph);
    if dataflow {
        bb.begin_dataflow()?;
    }
    convert_nodes(&mut bb, &mut values, &graph.node, opset)?;
    // The outputs.
    let mut results = Vec::new();
    for out in &graph.output {
        let e = values
            .get(out.name())
            .ok_or_else(|| error(format!("graph output `{}` is never computed", out.name())))?;
        // A shape value the graph returns is returned as a tensor.
        results.push(ops::as_tensor(&mut bb, e.clone())?);
    }
    let result = match results.len() {
        0 => return Err(error("the graph has no outputs".into())),
        1 => results.remove(0),
        _ => Expr::tuple(results),
    };
    let name = match graph.output.as_slice() {
        [one] => unique(one.name()),
        _ => "gv".to_string(),
    };
    let out = if dataflow {
        let out = bb.emit_output_named(result, &name)?;
        bb.end_dataflow()?;
        out
    } else {
        bb.emit_named(result, &name)?
    };
    bb.emit_func_output(Expr::var(&out))?;
    let mut module = bb.finalize()?;
    // With control flow, main (and every loop function) was built as plain
    // bindings: runs of pure bindings become dataflow blocks again, so the
    // build fuses them as it fuses any graph's.
    if !dataflow || module.len() > 1 {
        use relax_core::transform::Pass;
        module = relax_core::transform::ConvertToDataflow::default().run(module)?;
    }
    Ok(Imported {
        module,
        params: weights,
        input_names,
        output_names: graph.output.iter().map(|o| o.name().to_string()).collect(),
        opset,
    })
}

/// Whether a node of `graph` has a subgraph (`If`, `Loop`, `Scan`,
/// `SequenceMap`).
fn has_subgraphs(graph: &GraphProto) -> bool {
    use crate::proto::attribute_proto::AttributeType;
    graph.node.iter().any(|n| {
        n.attribute
            .iter()
            .any(|a| matches!(a.r#type(), AttributeType::Graph | AttributeType::Graphs))
    })
}

/// Converts `nodes` in order into the open scope of `bb`, each output
/// added to `values` by its ONNX name.
pub(crate) fn convert_nodes(
    bb: &mut BlockBuilder,
    values: &mut HashMap<String, Expr>,
    nodes: &[NodeProto],
    opset: i64,
) -> Result<(), Error> {
    for proto in nodes {
        let node = Node { proto };
        let convert = match proto.domain() {
            "" | "ai.onnx" if opset == 0 => {
                return Err(node.error("the model imports no version of the default ONNX opset"))
            }
            "" | "ai.onnx" => ops::lookup(node.op()),
            ML_DOMAIN => ops::ml::lookup(node.op()),
            other => {
                return Err(node.error(format!(
                "domain `{other}` is not supported (only the default ONNX domain and {ML_DOMAIN})"
            )))
            }
        };
        let convert = convert.ok_or_else(|| {
            node.error(format!(
                "op type `{}` is not supported by the importer",
                node.op()
            ))
        })?;
        let outputs = {
            let mut ctx = ops::Ctx {
                bb: &mut *bb,
                values: &*values,
                opset,
                node: &node,
            };
            ops::run(&mut ctx, convert)?
        };
        for (i, name) in proto.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let Some(e) = outputs.get(i) else {
                return Err(node.error(format!(
                    "output {i} (`{name}`) is not produced by this importer"
                )));
            };
            values.insert(name.clone(), e.clone());
        }
    }
    Ok(())
}

/// A subgraph (an `If` branch, a loop body) converted into the open scope
/// of `bb`: its inputs are `inputs`, in order, the names of `outer` (the
/// enclosing graphs' values) are visible unless the subgraph rebinds them,
/// and its initializers are constants. Returns its outputs, shape values
/// as tensors.
pub(crate) fn convert_subgraph(
    bb: &mut BlockBuilder,
    outer: &HashMap<String, Expr>,
    graph: &GraphProto,
    inputs: Vec<Expr>,
    opset: i64,
) -> Result<Vec<Expr>, Error> {
    if graph.input.len() != inputs.len() {
        return Err(error(format!(
            "subgraph `{}` has {} input(s), expected {}",
            graph.name(),
            graph.input.len(),
            inputs.len()
        )));
    }
    let mut values = outer.clone();
    for (input, e) in graph.input.iter().zip(inputs) {
        values.insert(input.name().to_string(), e);
    }
    for init in &graph.initializer {
        values.insert(
            init.name().to_string(),
            Expr::constant(crate::tensor::to_tensor(init)?),
        );
    }
    convert_nodes(bb, &mut values, &graph.node, opset)?;
    let mut out = Vec::new();
    for o in &graph.output {
        let e = values.get(o.name()).ok_or_else(|| {
            error(format!(
                "output `{}` of subgraph `{}` is never computed",
                o.name(),
                graph.name()
            ))
        })?;
        out.push(ops::as_tensor(bb, e.clone())?);
    }
    Ok(out)
}

/// Whether `e` is a constant (or a tuple of constants).
pub fn is_constant(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Constant(_) => true,
        ExprKind::Tuple(fields) => fields.iter().all(is_constant),
        _ => false,
    }
}

/// A scalar constant of `dtype` holding `v`.
pub fn scalar(v: f64, dtype: DataType) -> Option<Expr> {
    let t = if dtype == DataType::f32() {
        Tensor::scalar(v as f32)
    } else if dtype == DataType::f64() {
        Tensor::scalar(v)
    } else if dtype == DataType::i64() {
        Tensor::scalar(v as i64)
    } else if dtype == DataType::i32() {
        Tensor::scalar(v as i32)
    } else if dtype.is_half() {
        // `float16`, `bfloat16`: rounded once, to nearest even.
        Tensor::scalar(v).astype(dtype).ok()?
    } else {
        return None;
    };
    Some(Expr::constant(t))
}
