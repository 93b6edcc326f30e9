//! `Trace`: the steps a [`Schedule`] applied, as TVM records them.
//!
//! 1. Each [`Instruction`] names its inputs and outputs by handle index
//!    in the schedule that recorded it; handles are numbered in order of
//!    creation, one counter for blocks, loops and sampled values, and print
//!    as TVM prints them (`b0`, `l1`, `v2`).
//! 2. [`Trace::as_python`] prints TVM's trace text
//!    (`b0 = sch.get_block(name="C", func_name="main")`);
//!    [`Trace::as_rust`] the same steps as calls on this crate's
//!    [`Schedule`].
//! 3. [`Trace::apply_to`] replays the steps on another schedule (a fresh
//!    one of the same function gives a structurally equal function);
//!    sampling steps replay their recorded decision, as TVM's do.

use super::annotate::BlockOrLoop;
use super::{BlockRV, Handle, LoopRV, Result, Schedule};
use crate::ir::AttrValue;
use std::collections::HashMap;

/// One recorded step. Handle fields are indices into the recording
/// schedule's handles.
#[derive(Clone, Debug, PartialEq)]
pub enum Instruction {
    /// `get_block(name)`.
    GetBlock {
        /// The block's name.
        name: String,
        /// The block handle made.
        out: usize,
    },
    /// `get_loops(block)`.
    GetLoops {
        /// The block.
        block: usize,
        /// The loop handles made, outermost first.
        outs: Vec<usize>,
    },
    /// `split(loop, factors)`.
    Split {
        /// The loop split.
        loop_rv: usize,
        /// The factors, at most one inferred (`None`).
        factors: Vec<Option<i64>>,
        /// The new loops, outermost first.
        outs: Vec<usize>,
    },
    /// `fuse(loops)`.
    Fuse {
        /// The loops fused, outermost first.
        loops: Vec<usize>,
        /// The fused loop.
        out: usize,
    },
    /// `reorder(loops)`.
    Reorder {
        /// The loops in their new order.
        loops: Vec<usize>,
    },
    /// `parallel(loop)`.
    Parallel {
        /// The loop.
        loop_rv: usize,
    },
    /// `vectorize(loop)`.
    Vectorize {
        /// The loop.
        loop_rv: usize,
    },
    /// `unroll(loop)`.
    Unroll {
        /// The loop.
        loop_rv: usize,
    },
    /// `compute_inline(block)`.
    ComputeInline {
        /// The block inlined.
        block: usize,
    },
    /// `reverse_compute_inline(block)`.
    ReverseComputeInline {
        /// The consumer block folded into its producer.
        block: usize,
    },
    /// `cache_read(block, read_index, storage_scope)`, with the block as
    /// the one consumer of the cache.
    CacheRead {
        /// The block.
        block: usize,
        /// Which of its read buffers.
        read_index: usize,
        /// The scope naming the cache.
        storage_scope: String,
        /// The copy block made.
        out: usize,
    },
    /// `compute_at(block, loop)`.
    ComputeAt {
        /// The producer block moved.
        block: usize,
        /// The loop it moves under.
        loop_rv: usize,
    },
    /// `cache_write(block, write_index, storage_scope)`.
    CacheWrite {
        /// The block.
        block: usize,
        /// Which of its written buffers.
        write_index: usize,
        /// The scope naming the cache.
        storage_scope: String,
        /// The copy-back block made.
        out: usize,
    },
    /// `reverse_compute_at(block, loop)`.
    ReverseComputeAt {
        /// The consumer block moved.
        block: usize,
        /// The loop it moves under.
        loop_rv: usize,
    },
    /// `decompose_reduction(block, loop)`.
    DecomposeReduction {
        /// The reduction block.
        block: usize,
        /// The loop the init block is placed before.
        loop_rv: usize,
        /// The init block made.
        out: usize,
    },
    /// `sample_perfect_tile(loop, n, max_innermost_factor)`.
    SamplePerfectTile {
        /// The loop whose extent is tiled.
        loop_rv: usize,
        /// The number of factors.
        n: usize,
        /// The largest innermost factor allowed.
        max_innermost_factor: i64,
        /// The seed sampled with.
        seed: u64,
        /// The factors drawn.
        decision: Vec<i64>,
        /// The value handles made.
        outs: Vec<usize>,
    },
    /// `blockize(loop, preserve_unit_iters)`.
    Blockize {
        /// The loop whose subtree becomes a block.
        loop_rv: usize,
        /// Whether outer variables bound to unit loops keep their loop.
        preserve_unit_iters: bool,
        /// The outer block made.
        out: usize,
    },
    /// `tensorize(block, intrin)`.
    Tensorize {
        /// The block whose body the intrinsic's implementation replaces.
        block: usize,
        /// The registered intrinsic's name.
        intrin: String,
    },
    /// `set_scope(block, buffer_index, storage_scope)`.
    SetScope {
        /// The block writing the buffer.
        block: usize,
        /// Which of its written buffers.
        buffer_index: usize,
        /// The new storage scope.
        storage_scope: String,
    },
    /// `annotate(block_or_loop, ann_key, ann_val)`.
    Annotate {
        /// The block or loop annotated.
        block_or_loop: usize,
        /// The annotation's name.
        ann_key: String,
        /// Its value.
        ann_val: AttrValue,
    },
    /// `unannotate(block_or_loop, ann_key)`.
    Unannotate {
        /// The block or loop.
        block_or_loop: usize,
        /// The annotation removed.
        ann_key: String,
    },
}

/// The steps of a schedule. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The steps, in order.
    pub insts: Vec<Instruction>,
}

/// The printed name of handle `i` of `handles`.
pub(crate) fn rv_name(handles: &[Handle], i: usize) -> String {
    let prefix = match handles.get(i) {
        Some(Handle::Block(_)) => 'b',
        Some(Handle::Loop(_)) => 'l',
        Some(Handle::Expr) => 'v',
        None => '?',
    };
    format!("{prefix}{i}")
}

impl Trace {
    /// The prefix of each handle the steps make (`b`, `l`, `v`).
    fn prefixes(&self) -> HashMap<usize, char> {
        let mut m = HashMap::new();
        for inst in &self.insts {
            match inst {
                Instruction::GetBlock { out, .. }
                | Instruction::DecomposeReduction { out, .. }
                | Instruction::Blockize { out, .. }
                | Instruction::CacheWrite { out, .. }
                | Instruction::CacheRead { out, .. } => {
                    m.insert(*out, 'b');
                }
                Instruction::GetLoops { outs, .. } | Instruction::Split { outs, .. } => {
                    m.extend(outs.iter().map(|o| (*o, 'l')));
                }
                Instruction::Fuse { out, .. } => {
                    m.insert(*out, 'l');
                }
                Instruction::SamplePerfectTile { outs, .. } => {
                    m.extend(outs.iter().map(|o| (*o, 'v')));
                }
                _ => {}
            }
        }
        m
    }

    fn names(&self) -> impl Fn(usize) -> String {
        let p = self.prefixes();
        move |i| format!("{}{i}", p.get(&i).copied().unwrap_or('?'))
    }

    /// The steps as TVM's Python trace (`sch.get_block(…)` and so on), one
    /// line each.
    pub fn as_python(&self) -> String {
        let n = self.names();
        let list = |v: &[usize]| v.iter().map(|i| n(*i)).collect::<Vec<_>>().join(", ");
        let mut out = String::new();
        for inst in &self.insts {
            let line = match inst {
                Instruction::GetBlock { name, out } => {
                    format!("{} = sch.get_block(name={name:?}, func_name=\"main\")", n(*out))
                }
                Instruction::GetLoops { block, outs } => {
                    format!("{} = sch.get_loops(block={})", list(outs), n(*block))
                }
                Instruction::Split {
                    loop_rv,
                    factors,
                    outs,
                } => format!(
                    "{} = sch.split(loop={}, factors=[{}], preserve_unit_iters=True, disable_predication=False)",
                    list(outs),
                    n(*loop_rv),
                    factors
                        .iter()
                        .map(|f| f.map_or("None".to_string(), |f| f.to_string()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Instruction::Fuse { loops, out } => format!(
                    "{} = sch.fuse({}, preserve_unit_iters=True)",
                    n(*out),
                    list(loops)
                ),
                Instruction::Reorder { loops } => format!("sch.reorder({})", list(loops)),
                Instruction::Parallel { loop_rv } => format!("sch.parallel(loop={})", n(*loop_rv)),
                Instruction::Vectorize { loop_rv } => {
                    format!("sch.vectorize(loop={})", n(*loop_rv))
                }
                Instruction::Unroll { loop_rv } => format!("sch.unroll(loop={})", n(*loop_rv)),
                Instruction::ComputeInline { block } => {
                    format!("sch.compute_inline(block={})", n(*block))
                }
                Instruction::ReverseComputeInline { block } => {
                    format!("sch.reverse_compute_inline(block={})", n(*block))
                }
                Instruction::CacheRead {
                    block,
                    read_index,
                    storage_scope,
                    out,
                } => format!(
                    "{} = sch.cache_read(block={}, read_buffer_index={read_index}, storage_scope={storage_scope:?}, consumer_blocks=[{}])",
                    n(*out),
                    n(*block),
                    n(*block)
                ),
                Instruction::CacheWrite {
                    block,
                    write_index,
                    storage_scope,
                    out,
                } => format!(
                    "{} = sch.cache_write(block={}, write_buffer_index={write_index}, storage_scope={storage_scope:?})",
                    n(*out),
                    n(*block)
                ),
                Instruction::ReverseComputeAt { block, loop_rv } => format!(
                    "sch.reverse_compute_at(block={}, loop={}, preserve_unit_loops=False, index=-1)",
                    n(*block),
                    n(*loop_rv)
                ),
                Instruction::ComputeAt { block, loop_rv } => format!(
                    "sch.compute_at(block={}, loop={}, preserve_unit_loops=False, index=-1)",
                    n(*block),
                    n(*loop_rv)
                ),
                Instruction::DecomposeReduction {
                    block,
                    loop_rv,
                    out,
                } => format!(
                    "{} = sch.decompose_reduction(block={}, loop={})",
                    n(*out),
                    n(*block),
                    n(*loop_rv)
                ),
                Instruction::SamplePerfectTile {
                    loop_rv,
                    n: count,
                    max_innermost_factor,
                    decision,
                    outs,
                    ..
                } => format!(
                    "{} = sch.sample_perfect_tile(loop={}, n={count}, max_innermost_factor={max_innermost_factor}, decision=[{}])",
                    list(outs),
                    n(*loop_rv),
                    decision
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Instruction::Blockize {
                    loop_rv,
                    preserve_unit_iters,
                    out,
                } => format!(
                    "{} = sch.blockize(target={}, preserve_unit_iters={})",
                    n(*out),
                    n(*loop_rv),
                    py_bool(*preserve_unit_iters)
                ),
                Instruction::Tensorize { block, intrin } => format!(
                    "sch.tensorize(block_or_loop={}, tensor_intrin={intrin:?}, preserve_unit_iters=True)",
                    n(*block)
                ),
                Instruction::SetScope {
                    block,
                    buffer_index,
                    storage_scope,
                } => format!(
                    "sch.set_scope(block={}, buffer_index={buffer_index}, storage_scope={storage_scope:?})",
                    n(*block)
                ),
                Instruction::Annotate {
                    block_or_loop,
                    ann_key,
                    ann_val,
                } => format!(
                    "sch.annotate(block_or_loop={}, ann_key={ann_key:?}, ann_val={})",
                    n(*block_or_loop),
                    py_value(ann_val)
                ),
                Instruction::Unannotate {
                    block_or_loop,
                    ann_key,
                } => format!(
                    "sch.unannotate(block_or_loop={}, ann_key={ann_key:?})",
                    n(*block_or_loop)
                ),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// The steps as Rust calls on a `Schedule` named `sch`, in a function
    /// returning `Result<_, ScheduleError>`.
    pub fn as_rust(&self) -> String {
        let n = self.names();
        let handles = |v: &[usize]| v.iter().map(|i| n(*i)).collect::<Vec<_>>().join(", ");
        let destructure = |outs: &[usize], call: String| {
            format!(
                "let [{}] = {call}?[..] else {{ unreachable!() }};",
                handles(outs)
            )
        };
        let mut out = String::new();
        for inst in &self.insts {
            let line = match inst {
                Instruction::GetBlock { name, out } => {
                    format!("let {} = sch.get_block({name:?})?;", n(*out))
                }
                Instruction::GetLoops { block, outs } => {
                    destructure(outs, format!("sch.get_loops({})", n(*block)))
                }
                Instruction::Split {
                    loop_rv,
                    factors,
                    outs,
                } => destructure(
                    outs,
                    format!(
                        "sch.split({}, &[{}])",
                        n(*loop_rv),
                        factors
                            .iter()
                            .map(|f| f.map_or("None".to_string(), |f| format!("Some({f})")))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                Instruction::Fuse { loops, out } => {
                    format!("let {} = sch.fuse(&[{}])?;", n(*out), handles(loops))
                }
                Instruction::Reorder { loops } => format!("sch.reorder(&[{}])?;", handles(loops)),
                Instruction::Parallel { loop_rv } => format!("sch.parallel({})?;", n(*loop_rv)),
                Instruction::Vectorize { loop_rv } => {
                    format!("sch.vectorize({})?;", n(*loop_rv))
                }
                Instruction::Unroll { loop_rv } => format!("sch.unroll({})?;", n(*loop_rv)),
                Instruction::ComputeInline { block } => {
                    format!("sch.compute_inline({})?;", n(*block))
                }
                Instruction::ReverseComputeInline { block } => {
                    format!("sch.reverse_compute_inline({})?;", n(*block))
                }
                Instruction::CacheRead {
                    block,
                    read_index,
                    storage_scope,
                    out,
                } => format!(
                    "let {} = sch.cache_read({}, {read_index}, {storage_scope:?})?;",
                    n(*out),
                    n(*block)
                ),
                Instruction::ComputeAt { block, loop_rv } => {
                    format!("sch.compute_at({}, {})?;", n(*block), n(*loop_rv))
                }
                Instruction::ReverseComputeAt { block, loop_rv } => {
                    format!("sch.reverse_compute_at({}, {})?;", n(*block), n(*loop_rv))
                }
                Instruction::CacheWrite {
                    block,
                    write_index,
                    storage_scope,
                    out,
                } => format!(
                    "let {} = sch.cache_write({}, {write_index}, {storage_scope:?})?;",
                    n(*out),
                    n(*block)
                ),
                Instruction::DecomposeReduction {
                    block,
                    loop_rv,
                    out,
                } => format!(
                    "let {} = sch.decompose_reduction({}, {})?;",
                    n(*out),
                    n(*block),
                    n(*loop_rv)
                ),
                Instruction::SamplePerfectTile {
                    loop_rv,
                    n: count,
                    max_innermost_factor,
                    seed,
                    decision,
                    outs,
                } => format!(
                    "{} // decision {decision:?}",
                    destructure(
                        outs,
                        format!(
                            "sch.sample_perfect_tile({}, {count}, {max_innermost_factor}, {seed})",
                            n(*loop_rv)
                        )
                    )
                ),
                Instruction::Blockize {
                    loop_rv,
                    preserve_unit_iters,
                    out,
                } => format!(
                    "let {} = sch.blockize({}, {preserve_unit_iters})?;",
                    n(*out),
                    n(*loop_rv)
                ),
                Instruction::Tensorize { block, intrin } => {
                    format!("sch.tensorize({}, {intrin:?})?;", n(*block))
                }
                Instruction::SetScope {
                    block,
                    buffer_index,
                    storage_scope,
                } => format!(
                    "sch.set_scope({}, {buffer_index}, {storage_scope:?})?;",
                    n(*block)
                ),
                Instruction::Annotate {
                    block_or_loop,
                    ann_key,
                    ann_val,
                } => format!(
                    "sch.annotate({}, {ann_key:?}, {})?;",
                    n(*block_or_loop),
                    rust_value(ann_val)
                ),
                Instruction::Unannotate {
                    block_or_loop,
                    ann_key,
                } => format!("sch.unannotate({}, {ann_key:?})?;", n(*block_or_loop)),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Replays the steps on `sch` (typically a fresh schedule of the
    /// function this trace was recorded on). Sampling steps replay their
    /// recorded decisions. Stops at the first step that fails.
    pub fn apply_to(&self, sch: &mut Schedule) -> Result<()> {
        let mut map: HashMap<usize, usize> = HashMap::new();
        let get = |map: &HashMap<usize, usize>, i: usize| {
            map.get(&i).copied().ok_or_else(|| {
                super::ScheduleError::new(format!("trace: handle {i} is used before it is made"))
            })
        };
        let block = |map: &HashMap<usize, usize>, i| get(map, i).map(BlockRV);
        let lp = |map: &HashMap<usize, usize>, i| get(map, i).map(LoopRV);
        let loops = |map: &HashMap<usize, usize>, v: &[usize]| {
            v.iter().map(|i| lp(map, *i)).collect::<Result<Vec<_>>>()
        };
        // A block or a loop, by what the replaying schedule's handle is.
        let target = |sch: &Schedule, map: &HashMap<usize, usize>, i: usize| {
            let j = get(map, i)?;
            Ok::<_, super::ScheduleError>(match sch.handles.get(j) {
                Some(Handle::Loop(_)) => BlockOrLoop::Loop(LoopRV(j)),
                _ => BlockOrLoop::Block(BlockRV(j)),
            })
        };
        for inst in &self.insts {
            match inst {
                Instruction::GetBlock { name, out } => {
                    let b = sch.get_block(name)?;
                    map.insert(*out, b.0);
                }
                Instruction::GetLoops { block: b, outs } => {
                    let ls = sch.get_loops(block(&map, *b)?)?;
                    if ls.len() != outs.len() {
                        return Err(super::ScheduleError::new(format!(
                            "trace: get_loops gave {} loops where the trace has {}",
                            ls.len(),
                            outs.len()
                        )));
                    }
                    map.extend(outs.iter().zip(&ls).map(|(o, l)| (*o, l.0)));
                }
                Instruction::Split {
                    loop_rv,
                    factors,
                    outs,
                } => {
                    let ls = sch.split(lp(&map, *loop_rv)?, factors)?;
                    map.extend(outs.iter().zip(&ls).map(|(o, l)| (*o, l.0)));
                }
                Instruction::Fuse { loops: ls, out } => {
                    let l = sch.fuse(&loops(&map, ls)?)?;
                    map.insert(*out, l.0);
                }
                Instruction::Reorder { loops: ls } => sch.reorder(&loops(&map, ls)?)?,
                Instruction::Parallel { loop_rv } => sch.parallel(lp(&map, *loop_rv)?)?,
                Instruction::Vectorize { loop_rv } => sch.vectorize(lp(&map, *loop_rv)?)?,
                Instruction::Unroll { loop_rv } => sch.unroll(lp(&map, *loop_rv)?)?,
                Instruction::ComputeInline { block: b } => sch.compute_inline(block(&map, *b)?)?,
                Instruction::ReverseComputeInline { block: b } => {
                    sch.reverse_compute_inline(block(&map, *b)?)?
                }
                Instruction::CacheRead {
                    block: b,
                    read_index,
                    storage_scope,
                    out,
                } => {
                    let nb = sch.cache_read(block(&map, *b)?, *read_index, storage_scope)?;
                    map.insert(*out, nb.0);
                }
                Instruction::ComputeAt { block: b, loop_rv } => {
                    sch.compute_at(block(&map, *b)?, lp(&map, *loop_rv)?)?
                }
                Instruction::ReverseComputeAt { block: b, loop_rv } => {
                    sch.reverse_compute_at(block(&map, *b)?, lp(&map, *loop_rv)?)?
                }
                Instruction::CacheWrite {
                    block: b,
                    write_index,
                    storage_scope,
                    out,
                } => {
                    let nb = sch.cache_write(block(&map, *b)?, *write_index, storage_scope)?;
                    map.insert(*out, nb.0);
                }
                Instruction::DecomposeReduction {
                    block: b,
                    loop_rv,
                    out,
                } => {
                    let nb = sch.decompose_reduction(block(&map, *b)?, lp(&map, *loop_rv)?)?;
                    map.insert(*out, nb.0);
                }
                Instruction::SamplePerfectTile {
                    loop_rv,
                    n,
                    max_innermost_factor,
                    seed,
                    decision,
                    outs,
                } => {
                    let l = lp(&map, *loop_rv)?;
                    let (_, idx) = sch.sample_perfect_tile_with(
                        l,
                        *n,
                        *max_innermost_factor,
                        *seed,
                        Some(decision.clone()),
                    )?;
                    map.extend(outs.iter().zip(&idx).map(|(o, i)| (*o, *i)));
                }
                Instruction::Blockize {
                    loop_rv,
                    preserve_unit_iters,
                    out,
                } => {
                    let nb = sch.blockize(lp(&map, *loop_rv)?, *preserve_unit_iters)?;
                    map.insert(*out, nb.0);
                }
                Instruction::Tensorize { block: b, intrin } => {
                    sch.tensorize(block(&map, *b)?, intrin)?
                }
                Instruction::SetScope {
                    block: b,
                    buffer_index,
                    storage_scope,
                } => sch.set_scope(block(&map, *b)?, *buffer_index, storage_scope)?,
                Instruction::Annotate {
                    block_or_loop,
                    ann_key,
                    ann_val,
                } => sch.annotate(target(sch, &map, *block_or_loop)?, ann_key, ann_val.clone())?,
                Instruction::Unannotate {
                    block_or_loop,
                    ann_key,
                } => sch.unannotate(target(sch, &map, *block_or_loop)?, ann_key)?,
            }
        }
        Ok(())
    }
}

/// An annotation value as Python writes it (`612`, `"aaa"`, `["aa", 1]`).
fn py_value(v: &AttrValue) -> String {
    match v {
        AttrValue::None => "None".into(),
        AttrValue::Bool(b) => py_bool(*b).into(),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) if f.is_finite() => format!("{f:?}"),
        AttrValue::Float(f) => format!("float({:?})", f.to_string()),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) => format!("{:?}", d.to_string()),
        AttrValue::PrimExpr(e) => e.to_string(),
        AttrValue::Array(items) => format!(
            "[{}]",
            items.iter().map(py_value).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// An annotation value as a Rust expression that converts into an
/// `AttrValue` (`612_i64`, `"aaa"`, `AttrValue::Array(vec![…])`).
fn rust_value(v: &AttrValue) -> String {
    match v {
        AttrValue::None => "AttrValue::None".into(),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Int(i) => format!("{i}_i64"),
        AttrValue::Float(f) if f.is_finite() => format!("{f:?}_f64"),
        AttrValue::Float(f) => format!("f64::from_bits({:#x})", f.to_bits()),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) => format!(
            "AttrValue::DataType({:?}.parse().expect(\"a dtype\"))",
            d.to_string()
        ),
        AttrValue::PrimExpr(e) => format!("AttrValue::PrimExpr(/* {e} */)"),
        AttrValue::Array(items) => format!(
            "AttrValue::Array(vec![{}])",
            items
                .iter()
                .map(|i| format!("AttrValue::from({})", rust_value(i)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `True` or `False`.
fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
