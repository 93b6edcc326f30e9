//! The recurrent layers `RNN`, `GRU` and `LSTM`: unrolled over the
//! sequence length when it is known at import time, else a scan (a
//! recursive function, see `loops.rs`) over a symbolic length, at most
//! 998 steps under the VM's default call depth. The batch may be symbolic.
//!
//! Per direction, the input projection `X·Wᵀ + Wb` of every step is one
//! matmul; each step then adds `H·Rᵀ + Rb`, applies the cell's gates (the
//! ONNX formulas, with `clip` on every gate's pre-activation and the
//! `activations` attribute's functions), and with `sequence_lens` keeps
//! the state of a batch row past its length (its `Y` rows there are
//! zero). The reverse direction runs from the last step to the first, so
//! a row's first step is its last valid one. `Y` stacks every step's
//! state by input position (`[seq, dirs, batch, hidden]`, or `[batch,
//! seq, dirs, hidden]` with `layout` 1), `Y_h` (and `LSTM`'s `Y_c`) the
//! final states.

use super::elementwise::{clamped_line, exp_minus_one, positive_or, softplus_of};
use super::loops::{native_scan, NativeArgs};
use super::{ints, slice_axis, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    /// Gates per direction (the row blocks of `W` and `R`).
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
    /// Activation functions per direction, and their defaults.
    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// One activation function with its parameters.
#[derive(Clone, Debug)]
struct Activation {
    name: String,
    alpha: f64,
    beta: f64,
}

/// The `activations` of every direction, with their `activation_alpha`
/// and `activation_beta` values taken in order by the functions that have
/// them.
fn activations(cx: &Ctx, cell: Cell, dirs: usize) -> Result<Vec<Vec<Activation>>, Error> {
    let per = cell.default_activations().len();
    let names = match cx.node.strings("activations")? {
        Some(n) => n,
        None => (0..dirs)
            .flat_map(|_| cell.default_activations().iter().map(|s| s.to_string()))
            .collect(),
    };
    if names.len() != per * dirs {
        return Err(cx.error(format!(
            "`activations` lists {} function(s); {} direction(s) of this cell need {}",
            names.len(),
            dirs,
            per * dirs
        )));
    }
    let alphas = cx.node.floats("activation_alpha")?.unwrap_or_default();
    let betas = cx.node.floats("activation_beta")?.unwrap_or_default();
    let (mut a, mut b) = (alphas.iter(), betas.iter());
    let mut out = Vec::new();
    for name in names {
        // (takes alpha, default alpha, takes beta, default beta)
        let (ta, da, tb, db) = match name.as_str() {
            "Relu" | "Tanh" | "Sigmoid" | "Softsign" | "Softplus" => (false, 0.0, false, 0.0),
            "Affine" => (true, 1.0, true, 0.0),
            "LeakyRelu" => (true, 0.01, false, 0.0),
            "ThresholdedRelu" => (true, 1.0, false, 0.0),
            "ScaledTanh" => (true, 1.0, true, 1.0),
            "HardSigmoid" => (true, 0.2, true, 0.5),
            "Elu" => (true, 1.0, false, 0.0),
            other => {
                return Err(cx.error(format!("activation `{other}` is not supported")));
            }
        };
        let alpha = if ta {
            a.next().map_or(da, |&v| f64::from(v))
        } else {
            da
        };
        let beta = if tb {
            b.next().map_or(db, |&v| f64::from(v))
        } else {
            db
        };
        out.push(Activation { name, alpha, beta });
    }
    Ok(out.chunks(per).map(<[Activation]>::to_vec).collect())
}

/// `f(x)` for the activation `f`.
fn activate(cx: &mut Ctx, f: &Activation, x: Expr, dtype: DataType) -> Result<Expr, Error> {
    match f.name.as_str() {
        "Relu" => cx.op1("relax.nn.relu", x),
        "Tanh" => cx.op1("relax.tanh", x),
        "Sigmoid" => cx.op1("relax.sigmoid", x),
        "Softsign" => {
            let a = cx.op1("relax.abs", x.clone())?;
            let one = cx.scalar(1.0, dtype)?;
            let d = cx.op2("relax.add", a, one)?;
            cx.op2("relax.divide", x, d)
        }
        "Softplus" => softplus_of(cx, x, dtype),
        "Affine" => {
            let alpha = cx.scalar(f.alpha, dtype)?;
            let beta = cx.scalar(f.beta, dtype)?;
            let ax = cx.op2("relax.multiply", x, alpha)?;
            cx.op2("relax.add", ax, beta)
        }
        "LeakyRelu" => {
            let alpha = cx.scalar(f.alpha, dtype)?;
            let neg = cx.op2("relax.multiply", x.clone(), alpha)?;
            positive_or(cx, x, neg, dtype)
        }
        "ThresholdedRelu" => {
            let alpha = cx.scalar(f.alpha, dtype)?;
            let above = cx.op2("relax.greater", x.clone(), alpha)?;
            let zero = cx.scalar(0.0, dtype)?;
            cx.call("relax.where", vec![above, x, zero], Attrs::new())
        }
        "ScaledTanh" => {
            let alpha = cx.scalar(f.alpha, dtype)?;
            let beta = cx.scalar(f.beta, dtype)?;
            let bx = cx.op2("relax.multiply", x, beta)?;
            let t = cx.op1("relax.tanh", bx)?;
            cx.op2("relax.multiply", t, alpha)
        }
        "HardSigmoid" => clamped_line(cx, x, f.alpha, f.beta, dtype),
        "Elu" => {
            let neg = exp_minus_one(cx, x.clone(), f.alpha, dtype)?;
            positive_or(cx, x, neg, dtype)
        }
        other => Err(cx.error(format!("activation `{other}` is not supported"))),
    }
}

/// What every step of one direction uses.
#[derive(Clone)]
struct Layer {
    cell: Cell,
    dtype: DataType,
    hidden: i64,
    clip: Option<f64>,
    acts: Vec<Activation>,
    linear_before_reset: bool,
    input_forget: bool,
    /// `Rᵀ` of every gate, `[hidden, gates·hidden]`.
    rt: Expr,
    /// `Rb`, `[gates·hidden]`, if given.
    rb: Option<Expr>,
    /// `LSTM`'s peepholes `Pi`, `Po`, `Pf`, each `[hidden]`.
    peepholes: Option<[Expr; 3]>,
}

/// Row `i` of `x` along axis 0, the axis removed.
fn row(cx: &mut Ctx, x: Expr, i: i64) -> Result<Expr, Error> {
    let idx = Expr::constant(Tensor::scalar(i));
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
    cx.call("relax.take", vec![x, idx], attrs)
}

impl Layer {
    /// `clip` then `f` (activation `k`) on a gate's pre-activation.
    fn gate(&self, cx: &mut Ctx, k: usize, x: Expr) -> Result<Expr, Error> {
        let x = match self.clip {
            Some(c) => {
                let lo = cx.scalar(-c, self.dtype)?;
                let hi = cx.scalar(c, self.dtype)?;
                let x = cx.op2("relax.maximum", x, lo)?;
                cx.op2("relax.minimum", x, hi)?
            }
            None => x,
        };
        activate(cx, &self.acts[k], x, self.dtype)
    }

    /// Gate block `k` (`[batch, hidden]`) of `[batch, gates·hidden]`.
    fn block(&self, cx: &mut Ctx, x: &Expr, k: i64) -> Result<Expr, Error> {
        slice_axis(cx, x.clone(), 1, k * self.hidden, (k + 1) * self.hidden)
    }

    /// One step: `xw` is `Xt·Wᵀ + Wb` (`[batch, gates·hidden]`), `h` and
    /// `c` the state; the new `h` and `c`.
    fn step(
        &self,
        cx: &mut Ctx,
        xw: Expr,
        h: Expr,
        c: Option<Expr>,
    ) -> Result<(Expr, Option<Expr>), Error> {
        let hr = cx.op2("relax.matmul", h.clone(), self.rt.clone())?;
        let hr = match &self.rb {
            Some(rb) => cx.op2("relax.add", hr, rb.clone())?,
            None => hr,
        };
        match self.cell {
            Cell::Rnn => {
                let pre = cx.op2("relax.add", xw, hr)?;
                Ok((self.gate(cx, 0, pre)?, None))
            }
            Cell::Gru => {
                // Gate blocks z, r, h.
                let (xz, xr, xh) = (
                    self.block(cx, &xw, 0)?,
                    self.block(cx, &xw, 1)?,
                    self.block(cx, &xw, 2)?,
                );
                let (hz, hrr) = (self.block(cx, &hr, 0)?, self.block(cx, &hr, 1)?);
                let z = cx.op2("relax.add", xz, hz)?;
                let z = self.gate(cx, 0, z)?;
                let r = cx.op2("relax.add", xr, hrr)?;
                let r = self.gate(cx, 0, r)?;
                let candidate = if self.linear_before_reset {
                    // r ⊙ (H·Rhᵀ + Rbh)
                    let hh = self.block(cx, &hr, 2)?;
                    cx.op2("relax.multiply", r, hh)?
                } else {
                    // (r ⊙ H)·Rhᵀ + Rbh
                    let rh = cx.op2("relax.multiply", r, h.clone())?;
                    let rt_h =
                        slice_axis(cx, self.rt.clone(), 1, 2 * self.hidden, 3 * self.hidden)?;
                    let m = cx.op2("relax.matmul", rh, rt_h)?;
                    match &self.rb {
                        Some(rb) => {
                            let rbh =
                                slice_axis(cx, rb.clone(), 0, 2 * self.hidden, 3 * self.hidden)?;
                            cx.op2("relax.add", m, rbh)?
                        }
                        None => m,
                    }
                };
                let pre = cx.op2("relax.add", xh, candidate)?;
                let n = self.gate(cx, 1, pre)?;
                // (1 - z) ⊙ n + z ⊙ H = n + z ⊙ (H - n)
                let d = cx.op2("relax.subtract", h, n.clone())?;
                let zd = cx.op2("relax.multiply", z, d)?;
                Ok((cx.op2("relax.add", n, zd)?, None))
            }
            Cell::Lstm => {
                let c = c.ok_or_else(|| cx.error("an LSTM step needs its cell state"))?;
                let pre = cx.op2("relax.add", xw, hr)?;
                // Gate blocks i, o, f, c.
                let (pi, po, pf, pc) = (
                    self.block(cx, &pre, 0)?,
                    self.block(cx, &pre, 1)?,
                    self.block(cx, &pre, 2)?,
                    self.block(cx, &pre, 3)?,
                );
                let peep = |cx: &mut Ctx, x: Expr, k: usize, state: &Expr| match &self.peepholes {
                    Some(p) => {
                        let m = cx.op2("relax.multiply", p[k].clone(), state.clone())?;
                        cx.op2("relax.add", x, m)
                    }
                    None => Ok(x),
                };
                let pi = peep(cx, pi, 0, &c)?;
                let i = self.gate(cx, 0, pi)?;
                let f = if self.input_forget {
                    let one = cx.scalar(1.0, self.dtype)?;
                    cx.op2("relax.subtract", one, i.clone())?
                } else {
                    let pf = peep(cx, pf, 2, &c)?;
                    self.gate(cx, 0, pf)?
                };
                let g = self.gate(cx, 1, pc)?;
                let fc = cx.op2("relax.multiply", f, c)?;
                let ig = cx.op2("relax.multiply", i, g)?;
                let c_new = cx.op2("relax.add", fc, ig)?;
                let po = peep(cx, po, 1, &c_new)?;
                let o = self.gate(cx, 0, po)?;
                let hc = activate(cx, &self.acts[2], c_new.clone(), self.dtype)?;
                Ok((cx.op2("relax.multiply", o, hc)?, Some(c_new)))
            }
        }
    }
}

/// One step of `layer` at position `t` (an `int64` scalar): `Y`'s row
/// and the new states; with `lens` (`[batch, 1]`), rows past their length
/// keep their state and have a zero `Y` row.
fn masked_step(
    cx: &mut Ctx,
    layer: &Layer,
    lens: Option<&Expr>,
    t: Expr,
    xw_t: Expr,
    h: Expr,
    c: Option<Expr>,
) -> Result<(Expr, Expr, Option<Expr>), Error> {
    let (h_new, c_new) = layer.step(cx, xw_t, h.clone(), c.clone())?;
    let Some(lens) = lens else {
        return Ok((h_new.clone(), h_new, c_new));
    };
    let valid = cx.op2("relax.less", t, lens.clone())?;
    let keep = |cx: &mut Ctx, new: Expr, old: Expr| {
        cx.call("relax.where", vec![valid.clone(), new, old], Attrs::new())
    };
    let zero = cx.scalar(0.0, layer.dtype)?;
    let y = keep(cx, h_new.clone(), zero)?;
    let h = keep(cx, h_new, h)?;
    let c = match (c_new, c) {
        (Some(n), Some(o)) => Some(keep(cx, n, o)?),
        _ => None,
    };
    Ok((y, h, c))
}

/// One direction unrolled over `seq` steps: `Y` (`[seq, batch,
/// hidden]`) and the final states.
#[allow(clippy::too_many_arguments)]
fn unrolled(
    cx: &mut Ctx,
    layer: &Layer,
    lens: Option<&Expr>,
    xw: &Expr,
    seq: i64,
    reverse: bool,
    mut h: Expr,
    mut c: Option<Expr>,
) -> Result<(Expr, Expr, Option<Expr>), Error> {
    let mut y: Vec<Option<Expr>> = vec![None; seq as usize];
    let steps: Vec<i64> = if reverse {
        (0..seq).rev().collect()
    } else {
        (0..seq).collect()
    };
    for t in steps {
        let xw_t = row(cx, xw.clone(), t)?;
        let tt = Expr::constant(Tensor::scalar(t));
        let (y_t, h_new, c_new) = masked_step(cx, layer, lens, tt, xw_t, h, c)?;
        y[t as usize] = Some(y_t);
        h = h_new;
        c = c_new;
    }
    let rows: Vec<Expr> = y
        .into_iter()
        .flatten()
        .map(|e| unsqueeze(cx, e, 0))
        .collect::<Result<_, _>>()?;
    Ok((concat(cx, rows, 0)?, h, c))
}

/// One direction over a sequence length known only at run time, as a
/// scan (a recursive function, see `loops.rs`) whose step is
/// [`masked_step`]: `Y` (`[seq, batch, hidden]`) and the final states.
fn looped(
    cx: &mut Ctx,
    layer: &Layer,
    lens: Option<&Expr>,
    xw: &Expr,
    reverse: bool,
    h: Expr,
    c: Option<Expr>,
) -> Result<(Expr, Expr, Option<Expr>), Error> {
    let mut captured = vec![("rt".to_string(), layer.rt.clone())];
    if let Some(rb) = &layer.rb {
        captured.push(("rb".into(), rb.clone()));
    }
    if let Some(p) = &layer.peepholes {
        for (k, e) in p.iter().enumerate() {
            captured.push((format!("p{k}"), e.clone()));
        }
    }
    if let Some(l) = lens {
        captured.push(("lens".into(), l.clone()));
    }
    let step = |f: &mut Ctx, a: &NativeArgs| -> Result<Vec<Expr>, Error> {
        let get = |n: &str| a.captured.get(n).cloned();
        let rt = get("rt").ok_or_else(|| f.error("the step lost its weights"))?;
        let peepholes = match (get("p0"), get("p1"), get("p2")) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            _ => None,
        };
        let inner = Layer {
            rt,
            rb: get("rb"),
            peepholes,
            ..layer.clone()
        };
        let (y, h, c) = masked_step(
            f,
            &inner,
            get("lens").as_ref(),
            a.positions[0].clone(),
            a.steps[0].clone(),
            a.states[0].clone(),
            a.states.get(1).cloned(),
        )?;
        let mut out = vec![h];
        out.extend(c);
        out.push(y);
        Ok(out)
    };
    let mut states = vec![h];
    states.extend(c);
    let (fin, scans) = native_scan(
        cx,
        &step,
        captured,
        states,
        vec![(xw.clone(), 0, reverse)],
        1,
    )?;
    let y = scans
        .into_iter()
        .next()
        .ok_or_else(|| cx.error("the scan lost Y"))?;
    // Iterations run backwards in reverse: Y by input position.
    let y = if reverse {
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
        cx.call("relax.flip", vec![y], attrs)?
    } else {
        y
    };
    let mut fin = fin.into_iter();
    let h = fin.next().ok_or_else(|| cx.error("the scan lost H"))?;
    Ok((y, h, fin.next()))
}

/// Input `i` as a tensor, if given.
fn opt(cx: &mut Ctx, i: usize) -> Result<Option<Expr>, Error> {
    cx.opt_input(i)
}

/// `x` with a new axis of length 1 at `axis`.
fn unsqueeze(cx: &mut Ctx, x: Expr, axis: i64) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axis", ints([axis]))]);
    cx.call("relax.expand_dims", vec![x], attrs)
}

/// `parts` concatenated along `axis`.
fn concat(cx: &mut Ctx, parts: Vec<Expr>, axis: i64) -> Result<Expr, Error> {
    if parts.len() == 1 {
        return Ok(parts.into_iter().next().expect("one part"));
    }
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis))]);
    cx.call("relax.concat", vec![Expr::tuple(parts)], attrs)
}

fn permute(cx: &mut Ctx, x: Expr, axes: &[i64]) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axes", ints(axes.iter().copied()))]);
    cx.call("relax.permute_dims", vec![x], attrs)
}

fn recurrent(cx: &mut Ctx, cell: Cell) -> Result<Vec<Expr>, Error> {
    let mut known = vec![
        "activation_alpha",
        "activation_beta",
        "activations",
        "clip",
        "direction",
        "hidden_size",
        "layout",
    ];
    match cell {
        Cell::Gru => known.push("linear_before_reset"),
        Cell::Lstm => known.push("input_forget"),
        Cell::Rnn => {}
    }
    cx.node.only_attrs(&known)?;
    let direction = cx
        .node
        .string("direction")?
        .unwrap_or_else(|| "forward".into());
    let directions: &[bool] = match direction.as_str() {
        "forward" => &[false],
        "reverse" => &[true],
        "bidirectional" => &[false, true],
        other => {
            return Err(cx.error(format!(
                "direction `{other}` is not one of forward, reverse, bidirectional"
            )))
        }
    };
    let dirs = directions.len();
    let layout = cx.node.int_or("layout", 0)?;
    if !(0..=1).contains(&layout) {
        return Err(cx.error(format!("layout {layout} is not 0 or 1")));
    }
    let clip = cx
        .node
        .has("clip")
        .then_some(f64::from(cx.node.float_or("clip", 0.0)?));
    if clip.is_some_and(|c| c.is_nan() || c < 0.0) {
        return Err(cx.error("`clip` must be a non-negative number"));
    }
    let linear_before_reset = cx.node.int_or("linear_before_reset", 0)? != 0;
    let input_forget = cx.node.int_or("input_forget", 0)? != 0;
    let acts = activations(cx, cell, dirs)?;
    let gates = cell.gates() as i64;

    let x = cx.input(0)?;
    let (xdims, dtype) = cx.tensor(&x)?;
    if !dtype.is_float() {
        return Err(cx.error(format!("X must be a float tensor, not {dtype}")));
    }
    if xdims.len() != 3 {
        return Err(cx.error(format!("X must be 3-d, and it has rank {}", xdims.len())));
    }
    // To [seq, batch, input].
    let x = if layout == 1 {
        permute(cx, x, &[1, 0, 2])?
    } else {
        x
    };
    let (xdims, _) = cx.tensor(&x)?;
    // Unrolled when the sequence length is known, else a loop.
    let seq = xdims[0].as_int();
    if seq == Some(0) {
        return Err(cx.error("the sequence is empty"));
    }
    let batch = xdims[1].clone();
    let w = cx.input(1)?;
    let r = cx.input(2)?;
    let wdims = cx.static_dims(&w)?;
    if wdims.len() != 3 || wdims[0] != dirs as i64 || wdims[1] % gates != 0 {
        return Err(cx.error(format!(
            "W must be [{dirs}, {gates}·hidden, input], and it is {wdims:?}"
        )));
    }
    let hidden = wdims[1] / gates;
    if let Some(h) = cx.node.int("hidden_size")? {
        if h != hidden {
            return Err(cx.error(format!("hidden_size {h} does not match W's {hidden}")));
        }
    }
    let rdims = cx.static_dims(&r)?;
    if rdims != [dirs as i64, gates * hidden, hidden] {
        return Err(cx.error(format!(
            "R must be [{dirs}, {}, {hidden}], and it is {rdims:?}",
            gates * hidden
        )));
    }
    let b = opt(cx, 3)?;
    let seq_lens = opt(cx, 4)?;
    let initial_h = opt(cx, 5)?;
    let (initial_c, p) = if cell == Cell::Lstm {
        (opt(cx, 6)?, opt(cx, 7)?)
    } else {
        (None, None)
    };
    // States in [dirs, batch, hidden].
    let state_in = |cx: &mut Ctx, s: Option<Expr>| -> Result<Option<Expr>, Error> {
        match s {
            Some(s) if layout == 1 => Ok(Some(permute(cx, s, &[1, 0, 2])?)),
            s => Ok(s),
        }
    };
    let initial_h = state_in(cx, initial_h)?;
    let initial_c = state_in(cx, initial_c)?;
    // A [batch, 1] mask per step: step < sequence_lens.
    let lens = match seq_lens {
        Some(l) => {
            let l = cx.astype(l, DataType::i64())?;
            Some(cx.call(
                "relax.reshape",
                vec![l, super::shape(vec![batch.clone(), PrimExpr::int(1)])],
                Attrs::new(),
            )?)
        }
        None => None,
    };
    let zeros = {
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
        cx.call(
            "relax.zeros",
            vec![super::shape(vec![batch.clone(), PrimExpr::int(hidden)])],
            attrs,
        )?
    };

    let mut ys = Vec::new();
    let mut hs = Vec::new();
    let mut cs = Vec::new();
    for (d, &reverse) in directions.iter().enumerate() {
        let d = d as i64;
        let wd = row(cx, w.clone(), d)?;
        let wt = permute(cx, wd, &[1, 0])?;
        let xw = cx.op2("relax.matmul", x.clone(), wt)?;
        let (wb, rb) = match &b {
            Some(b) => {
                let bd = row(cx, b.clone(), d)?;
                let n = gates * hidden;
                (
                    Some(slice_axis(cx, bd.clone(), 0, 0, n)?),
                    Some(slice_axis(cx, bd, 0, n, 2 * n)?),
                )
            }
            None => (None, None),
        };
        let xw = match wb {
            Some(wb) => cx.op2("relax.add", xw, wb)?,
            None => xw,
        };
        let rd = row(cx, r.clone(), d)?;
        let rt = permute(cx, rd, &[1, 0])?;
        let peepholes = match &p {
            Some(p) => {
                let pd = row(cx, p.clone(), d)?;
                Some([
                    slice_axis(cx, pd.clone(), 0, 0, hidden)?,
                    slice_axis(cx, pd.clone(), 0, hidden, 2 * hidden)?,
                    slice_axis(cx, pd, 0, 2 * hidden, 3 * hidden)?,
                ])
            }
            None => None,
        };
        let layer = Layer {
            cell,
            dtype,
            hidden,
            clip,
            acts: acts[d as usize].clone(),
            linear_before_reset,
            input_forget,
            rt,
            rb,
            peepholes,
        };
        let h0 = match &initial_h {
            Some(s) => row(cx, s.clone(), d)?,
            None => zeros.clone(),
        };
        let c0 = match (cell, &initial_c) {
            (Cell::Lstm, Some(s)) => Some(row(cx, s.clone(), d)?),
            (Cell::Lstm, None) => Some(zeros.clone()),
            _ => None,
        };
        let (yd, h, c) = match seq {
            Some(seq) => unrolled(cx, &layer, lens.as_ref(), &xw, seq, reverse, h0, c0)?,
            None => looped(cx, &layer, lens.as_ref(), &xw, reverse, h0, c0)?,
        };
        // [seq, batch, hidden] → [seq, 1, batch, hidden]
        ys.push(unsqueeze(cx, yd, 1)?);
        hs.push(unsqueeze(cx, h, 0)?);
        if let Some(c) = c {
            cs.push(unsqueeze(cx, c, 0)?);
        }
    }
    let y = concat(cx, ys, 1)?;
    let y_h = concat(cx, hs, 0)?;
    let mut out = if layout == 1 {
        vec![
            permute(cx, y, &[2, 0, 1, 3])?,
            permute(cx, y_h, &[1, 0, 2])?,
        ]
    } else {
        vec![y, y_h]
    };
    if cell == Cell::Lstm {
        let y_c = concat(cx, cs, 0)?;
        out.push(if layout == 1 {
            permute(cx, y_c, &[1, 0, 2])?
        } else {
            y_c
        });
    }
    Ok(out)
}

/// `RNN`.
pub fn rnn(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    recurrent(cx, Cell::Rnn)
}

/// `GRU`.
pub fn gru(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    recurrent(cx, Cell::Gru)
}

/// `LSTM`.
pub fn lstm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    recurrent(cx, Cell::Lstm)
}
