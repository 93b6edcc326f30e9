//! `relax`: the command line of relax-rs (after TVM's `tvmc` and tract's
//! CLI).
//!
//! ```text
//! relax import model.onnx -o model.py      ONNX to TVMScript (or -o model.rs: the DSL)
//! relax check  model.{onnx,py}             well-formedness, every diagnostic
//! relax print  model.{onnx,py} [--passes LegalizeOps,FuseOps,…] [--pipeline] [--bind NAME=VALUE …]
//! relax compile model.{onnx,py} -o model.relax [--precision f32|f16|bf16] [--cpu LEVEL]
//!              [--time-passes] [--tune N] [--tuning-db PATH] [--tune-dim NAME=VALUE …]
//!              [--bind NAME=VALUE …]
//! relax run    model.{onnx,py,relax} --input x=x.npy … [--output y.npy …] [--full] [--json]
//!              [--precision f32|f16|bf16] [--tuning-db PATH] [--bind NAME=VALUE …]
//! relax bench  model.{onnx,py,relax} --input x=x.npy … [--runs 100] [--profile] [--json]
//!              [--precision f32|f16|bf16] [--tuning-db PATH] [--bind NAME=VALUE …]
//! relax dot    model.{onnx,py} [--function main] [--fuse] [--svg]
//! relax completions bash|zsh|fish|powershell|elvish
//! ```
//!
//! An ONNX model's external data (weights in files beside it) is read from
//! its directory. `run` prints each output's name, dtype and shape, then its
//! values as numpy does (the middle of a large tensor elided unless
//! `--full`); `--json` gives the same as one JSON document. Errors go to
//! stderr with one `error: ` prefix and, where there is an obvious next step,
//! a `hint: ` line, with exit status 1; nothing panics on bad input.
//!
//! `relax compile` writes a package (`model.relax`: the executable and its
//! kernels' machine code in a shared library, for one CPU level) that `run`
//! and `bench` load in milliseconds instead of compiling the model again.
//! While a model compiles, a progress bar on stderr (when it is a
//! terminal, never in a pipe) shows the stage, and for code generation the
//! kernels compiled so far; `--time-passes` (compile, run, bench) prints
//! each pass's time, each stage's and code generation's to stderr. `RELAX_DISABLED_PASSES=Conv2dWinograd,…` skips those passes of
//! the build pipeline (TVM's `disabled_pass`), to measure what one gains.
//!
//! `relax compile --tune N` measures up to N candidate schedules of each
//! kernel the tuning database lacks (register tiles, cache blocks, row
//! folding; each checked against the default on random inputs) and keeps
//! the fastest in the database, `--tuning-db PATH` or by default
//! `$RELAX_TUNING_DB`, else `~/.cache/relax/tuning.json`; symbolic dims
//! are measured at 1 unless `--tune-dim seq=128` says otherwise. Later
//! builds given the database (`compile --tuning-db`, `run`/`bench
//! --tuning-db`) use its knobs without measuring.
//!
//! `--bind batch=1` (compile, run, bench, print; repeatable) replaces a
//! symbolic dim of the imported model by a constant before the build
//! (TVM's `BindSymbolicVars`): the model compiles as its static twin,
//! to compare with the symbolic build at the same size.
//!
//! `--precision bf16` (or `f16`) runs the model through
//! `ToMixedPrecision` first: it computes in bfloat16 (float16), matmuls and
//! convolutions accumulating in float32; inputs and outputs stay float32.
//!
//! `run`, `bench` and `compile` first run `FakeQuantizationToInteger`: a
//! quantized model's (QDQ) matmuls and convolutions of dequantized 8-bit
//! tensors become `int32` matmuls and convolutions of the 8-bit tensors,
//! rescaled once (exact integer products; only that rescale rounds),
//! which run on the `vpdpbusd` kernels.

mod bind;
mod dot;
mod dsl;
mod model;
mod npy;
mod package;
mod passes;
mod progress;
mod summary;
mod tuning;

use clap::{CommandFactory, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use progress::BuildProgress;
use relax_core::backend::{build_with, Target};
use relax_core::ir::IRModule;
use relax_core::transform::{BuildStage, PassContext, PassTimingInstrument};
use relax_runtime::{Executable, Tensor, Value, VirtualMachine};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One example per command, shown by `relax --help`.
const EXAMPLES: &str = "\
Examples:
  relax import resnet18.onnx -o resnet18.py          ONNX to TVMScript
  relax import resnet18.onnx -o resnet18.rs          ONNX to a relax::module! file
  relax check  resnet18.onnx                         well-formedness diagnostics
  relax print  resnet18.onnx --passes LegalizeOps,FuseOps
  relax compile resnet18.onnx -o resnet18.relax     compile once, with native code
  relax run    resnet18.relax --input input=x.npy    run without compiling again
  relax run    resnet18.onnx --input input=x.npy     outputs as numpy prints them
  relax run    resnet18.onnx -i x.npy -o y.npy       write the output to a .npy file
  relax run    resnet18.onnx -i x.npy --precision bf16  compute in bfloat16
  relax bench  resnet18.onnx -i x.npy --runs 50 --profile
  relax dot    resnet18.onnx --fuse --svg -o resnet18.svg
  relax completions bash > /etc/bash_completion.d/relax";

#[derive(Parser)]
#[command(
    name = "relax",
    version,
    about = "Relax IR models: import, check, print, compile, run, bench, draw",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import an ONNX model and write it as TVMScript (`.py`) or as a
    /// `relax::module!` DSL file (`.rs`, weights in `<name>.weights`).
    Import {
        /// The ONNX model (`.onnx`; external data is read from its folder).
        model: PathBuf,
        /// The file to write (`.py` or `.rs`).
        #[arg(short, long)]
        output: PathBuf,
        /// Weights as parameters of `main` (TVM's keep_params_in_input).
        #[arg(long)]
        keep_params: bool,
    },
    /// Check a model's well-formedness and print every diagnostic.
    Check {
        /// The model: ONNX (`.onnx`) or TVMScript (`.py`).
        model: PathBuf,
    },
    /// Print a model as TVMScript, after the given passes.
    Print {
        /// The model: ONNX (`.onnx`) or TVMScript (`.py`).
        model: PathBuf,
        /// Comma-separated pass names, run in order (`relax print --passes
        /// help` lists them).
        #[arg(long, value_delimiter = ',')]
        passes: Vec<String>,
        /// Then run the passes `run` and `bench` build with for this
        /// machine, without `--precision` or `--tuning-db` (the integer
        /// products, then the host pipeline through `DefaultSchedule`):
        /// prints the scheduled kernels the build compiles.
        #[arg(long)]
        pipeline: bool,
        /// Bind a symbolic dim to a constant first, `NAME=VALUE`, as for
        /// `compile`; repeatable.
        #[arg(long)]
        bind: Vec<String>,
    },
    /// Compile a model once into a package (`.relax`) with its native
    /// code, which `run` and `bench` load without compiling.
    Compile {
        /// The model: ONNX (`.onnx`) or TVMScript (`.py`).
        model: PathBuf,
        /// The package to write (`model.relax`).
        #[arg(short, long)]
        output: PathBuf,
        /// Compute in this precision, as for `run`.
        #[arg(long, value_enum, default_value_t = Precision::F32)]
        precision: Precision,
        /// The CPU level to compile for (x86-64-v4-vnni-bf16, x86-64-v4,
        /// x86-64-v3, generic);
        /// by default the best this CPU has. The package refuses to run on
        /// a CPU without it.
        #[arg(long)]
        cpu: Option<String>,
        /// Print the time of every pass and of code generation to stderr.
        #[arg(long)]
        time_passes: bool,
        /// Measure up to N candidate schedules per kernel the tuning
        /// database lacks, keeping the fastest in it (0: no tuning).
        #[arg(long, default_value_t = 0)]
        tune: usize,
        /// The tuning database (default: $RELAX_TUNING_DB, else
        /// ~/.cache/relax/tuning.json); without --tune its knobs are used
        /// as they are.
        #[arg(long)]
        tuning_db: Option<PathBuf>,
        /// The value of a symbolic dim while tuning, `NAME=VALUE`
        /// (`seq=128`; others are 1).
        #[arg(long)]
        tune_dim: Vec<String>,
        /// Bind a symbolic dim to a constant before the build, `NAME=VALUE`
        /// (TVM's BindSymbolicVars; `--bind batch=1`), repeatable.
        #[arg(long)]
        bind: Vec<String>,
    },
    /// Run `main` on `.npy` inputs; print or write the outputs.
    Run {
        /// The model: ONNX (`.onnx`), TVMScript (`.py`) or a package
        /// from `relax compile` (`.relax`).
        model: PathBuf,
        /// An input, `name=file.npy` (or just `file.npy`), in `main`'s
        /// parameter order; the name is the parameter's or, for an ONNX
        /// model, the graph input's (`gpu_0/data_0=x.npy`).
        #[arg(short, long)]
        input: Vec<String>,
        /// Where to write each output (`.npy`), in order.
        #[arg(short, long)]
        output: Vec<PathBuf>,
        /// Run on the reference interpreter instead of LLVM.
        #[arg(long)]
        interp: bool,
        /// Print every element (by default a tensor of more than 1000
        /// elements shows 3 at each end of each axis).
        #[arg(long)]
        full: bool,
        /// Print the outputs as JSON: name, dtype, shape, and min, max and
        /// mean (the data with `--full`).
        #[arg(long)]
        json: bool,
        /// Compute in this precision (`ToMixedPrecision`: bf16 or f16,
        /// accumulating in f32; inputs and outputs keep their dtypes).
        #[arg(long, value_enum, default_value_t = Precision::F32)]
        precision: Precision,
        /// Print the time of every pass and of code generation to stderr.
        #[arg(long)]
        time_passes: bool,
        /// Schedule kernels with the knobs of this tuning database
        /// (`relax compile --tune`).
        #[arg(long)]
        tuning_db: Option<PathBuf>,
        /// Bind a symbolic dim to a constant before the build, `NAME=VALUE`
        /// (TVM's BindSymbolicVars; `--bind batch=1`), repeatable.
        #[arg(long)]
        bind: Vec<String>,
    },
    /// Time `main` on `.npy` inputs: latency percentiles.
    Bench {
        /// The model: ONNX (`.onnx`), TVMScript (`.py`) or a package
        /// (`.relax`).
        model: PathBuf,
        /// An input, `name=file.npy` (or just `file.npy`), as for `run`.
        #[arg(short, long)]
        input: Vec<String>,
        /// Timed runs (after 3 warm-up runs).
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Also time each kernel (TVM's `vm.profile`) and print the
        /// slowest.
        #[arg(long)]
        profile: bool,
        /// How many of the slowest kernels `--profile` prints.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Print the timings (and the profile) as JSON, in milliseconds.
        #[arg(long)]
        json: bool,
        /// Compute in this precision, as for `run`.
        #[arg(long, value_enum, default_value_t = Precision::F32)]
        precision: Precision,
        /// Print the time of every pass and of code generation to stderr.
        #[arg(long)]
        time_passes: bool,
        /// Schedule kernels with the knobs of this tuning database, as
        /// for `run`.
        #[arg(long)]
        tuning_db: Option<PathBuf>,
        /// Bind a symbolic dim to a constant before the build, `NAME=VALUE`
        /// (TVM's BindSymbolicVars; `--bind batch=1`), repeatable.
        #[arg(long)]
        bind: Vec<String>,
    },
    /// Draw a function's dataflow graph in Graphviz's DOT language.
    Dot {
        /// The model: ONNX (`.onnx`) or TVMScript (`.py`).
        model: PathBuf,
        /// The Relax function to draw.
        #[arg(long, default_value = "main")]
        function: String,
        /// Legalize and fuse first: fused groups are drawn as clusters.
        #[arg(long)]
        fuse: bool,
        /// Lay the graph out and write SVG instead of DOT (no Graphviz
        /// needed); fused groups are drawn as one node each.
        #[arg(long)]
        svg: bool,
        /// The file to write (stdout if not given).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a shell completion script for `relax`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// The precision `run` and `bench` compute in (the variants carry no doc
/// comments, which would make clap print every option's help on a line of
/// its own).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Precision {
    // float32: the model as it is.
    F32,
    // float16, accumulating in float32.
    F16,
    // bfloat16, accumulating in float32.
    Bf16,
}

impl Precision {
    /// The name `--precision` takes.
    fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::Bf16 => "bf16",
        }
    }

    /// `module` computing in this precision (dataflow blocks first, which
    /// is where `ToMixedPrecision` rewrites).
    fn apply(self, module: IRModule) -> Result<IRModule, String> {
        let dtype = match self {
            Precision::F32 => return Ok(module),
            Precision::F16 => "float16",
            Precision::Bf16 => "bfloat16",
        };
        let module = passes::run("ConvertToDataflow", module)?;
        passes::run(&format!("ToMixedPrecision({dtype})"), module)
    }
}

/// `module` with the matmuls and convolutions of dequantized 8-bit
/// tensors as `int32` ones of the 8-bit tensors (module docs).
fn integer_products(module: IRModule) -> Result<IRModule, String> {
    use relax_core::transform::{FakeQuantizationToInteger, Pass};
    FakeQuantizationToInteger::default()
        .run(module)
        .map_err(|e| format!("FakeQuantizationToInteger: {e}"))
}

/// The error `out!` gives when stdout is a pipe whose reader has gone
/// (`relax print m.onnx | head`): the command stops, quietly and
/// successfully, as Unix tools do.
const BROKEN_PIPE: &str = "\0stdout closed";

/// `print!` that returns an error instead of panicking when stdout fails.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*).map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                BROKEN_PIPE.to_string()
            } else {
                format!("writing to stdout: {e}")
            }
        })?
    }};
}

/// `println!` as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        out!($($arg)*);
        out!("\n");
    }};
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) if message == BROKEN_PIPE => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The arguments of `main`: the `--input` files in order (a `name=` prefix
/// must name the parameter at that position, by its name in `main` or in
/// the model file: `gpu_0_data_0` or `gpu_0/data_0`), then the weights.
fn arguments(
    main_params: &[String],
    inputs: &[String],
    params: &[Tensor],
    input_names: &[String],
) -> Result<Vec<Value>, String> {
    let expected = main_params.len().saturating_sub(params.len());
    if inputs.len() != expected {
        let names: Vec<&str> = main_params[..expected].iter().map(String::as_str).collect();
        return Err(format!(
            "`main` takes {expected} input(s) ({}), and {} --input were given",
            names.join(", "),
            inputs.len()
        ));
    }
    let mut args = Vec::new();
    for (i, spec) in inputs.iter().enumerate() {
        let (name, file) = match spec.split_once('=') {
            Some((n, f)) => (Some(n), f),
            None => (None, spec.as_str()),
        };
        let param = main_params[i].as_str();
        let source = input_names.get(i).map(String::as_str).unwrap_or(param);
        if let Some(n) = name {
            if n != param && n != source {
                let also = if source == param {
                    String::new()
                } else {
                    format!(" (the model's input `{source}`)")
                };
                let known: Vec<&str> = (0..expected)
                    .map(|j| {
                        input_names
                            .get(j)
                            .map(String::as_str)
                            .unwrap_or(main_params[j].as_str())
                    })
                    .collect();
                return Err(format!(
                    "--input {i} is named `{n}`, but `main`'s parameter {i} is `{param}`{also}\n\
                     hint: the model's inputs are, in order: {}",
                    known.join(", ")
                ));
            }
        }
        args.push(Value::Tensor(npy::read(Path::new(file))?));
    }
    args.extend(params.iter().cloned().map(Value::Tensor));
    Ok(args)
}

/// The pass context of a build: its [`BuildProgress`] (the progress bar
/// and the stage times), and a [`PassTimingInstrument`] when
/// `--time-passes` asks for the timings.
struct Timing {
    ctx: PassContext,
    passes: Option<Arc<PassTimingInstrument>>,
    progress: Arc<BuildProgress>,
}

impl Timing {
    fn new(time_passes: bool) -> Self {
        let mut ctx = PassContext::new();
        if let Ok(names) = std::env::var("RELAX_DISABLED_PASSES") {
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                ctx = ctx.disable(name);
            }
        }
        let progress = Arc::new(BuildProgress::new());
        let ctx = ctx.with_progress(progress.clone());
        if !time_passes {
            return Timing {
                ctx,
                passes: None,
                progress,
            };
        }
        let passes = Arc::new(PassTimingInstrument::new());
        Timing {
            ctx: ctx.with_instrument(passes.clone()),
            passes: Some(passes),
            progress,
        }
    }

    /// Clears the progress bar; prints, with `--time-passes`, every
    /// pass's time, each stage's, and what the rest of a build of `total`
    /// took: VM code generation and LLVM, and `link` (the C compiler, for
    /// a package).
    fn report(&self, total: Duration, link: Option<Duration>) {
        self.progress.finish();
        let Some(passes) = &self.passes else {
            return;
        };
        eprintln!("stages: {}", self.progress.render());
        let in_passes: Duration = passes
            .timings()
            .iter()
            .filter(|t| t.depth == 0)
            .map(|t| t.elapsed)
            .sum();
        let link_time = link.unwrap_or_default();
        eprint!("pass timings:\n{}", passes.render());
        eprintln!(
            "passes: {:.3} s; code generation (VM code, kernel schedules, LLVM): {:.3} s{}; total {:.3} s",
            in_passes.as_secs_f64(),
            total
                .saturating_sub(in_passes)
                .saturating_sub(link_time)
                .as_secs_f64(),
            match link {
                Some(l) => format!("; linking (cc): {:.3} s", l.as_secs_f64()),
                None => String::new(),
            },
            total.as_secs_f64()
        );
    }
}

/// A model ready to call: its executable, the names of `main`'s
/// parameters, the weights it takes after its inputs, the model file's
/// input and output names, and how long compiling (or loading a package)
/// took.
struct Prepared {
    exec: Executable,
    main_params: Vec<String>,
    params: Vec<Tensor>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    compile: std::time::Duration,
    /// Whether it was loaded from a package (`compile` is the load time).
    loaded: bool,
}

impl Prepared {
    /// The name to show for output `i`.
    fn output_name(&self, i: usize) -> String {
        self.output_names
            .get(i)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("output {i}"))
    }
}

/// Compiles the model at `path` for `target` in `precision`, or loads it
/// when it is a package (`.relax`), which was compiled for its precision
/// and target already.
fn prepare(
    path: &Path,
    precision: Precision,
    interp: bool,
    time_passes: bool,
    tuning_db: Option<&Path>,
    dims: &[String],
) -> Result<Prepared, String> {
    if path.extension().and_then(|e| e.to_str()) == Some("relax") {
        if let Some(db) = tuning_db {
            return Err(format!(
                "{}: a package's kernels were scheduled when it was compiled; give --tuning-db {} to `relax compile`",
                path.display(),
                db.display()
            ));
        }
        if !dims.is_empty() {
            return Err(format!(
                "{}: a package's symbolic dims were fixed when it was compiled; give --bind to `relax compile`",
                path.display()
            ));
        }
        if interp {
            return Err(format!(
                "{}: a package runs its compiled kernels; --interp takes the model (.onnx or .py)",
                path.display()
            ));
        }
        if precision != Precision::F32 {
            return Err(format!(
                "{}: a package's precision was chosen when it was compiled (relax compile --precision)",
                path.display()
            ));
        }
        let start = Instant::now();
        let (exec, input_names, output_names) = package::load(path)?;
        if time_passes {
            eprintln!(
                "no passes: the package was compiled already (loaded in {:.3} s)",
                start.elapsed().as_secs_f64()
            );
        }
        let main = exec
            .function_index("main")
            .map(|i| exec.functions[i].params.clone())
            .ok_or("the package has no function `main`")?;
        return Ok(Prepared {
            exec,
            main_params: main,
            params: Vec::new(),
            input_names,
            output_names,
            compile: start.elapsed(),
            loaded: true,
        });
    }
    let timing = Timing::new(time_passes);
    timing.ctx.report_stage(BuildStage::Import, 0);
    let mut m = model::read(path, false)?;
    m.module = bind::bind(m.module, dims)?;
    m.module = integer_products(m.module)?;
    m.module = precision.apply(m.module)?;
    let target = match (interp, tuning_db) {
        (true, Some(_)) => {
            return Err("--tuning-db schedules compiled kernels; --interp runs none".into())
        }
        (true, None) => Target::interpreter(),
        (false, Some(db)) => Target::host().with_tuned_knobs(tuning::host_knobs(db)?),
        (false, None) => Target::host(),
    };
    let main_params = m
        .module
        .get_relax("main")
        .ok_or("the module has no Relax function `main`")?
        .params
        .iter()
        .map(|p| p.name_hint().to_string())
        .collect();
    let start = Instant::now();
    let exec = build_with(&m.module, &target, &timing.ctx).map_err(|e| e.to_string());
    timing.report(start.elapsed(), None);
    let exec = exec?;
    Ok(Prepared {
        exec,
        main_params,
        params: m.params,
        input_names: m.input_names,
        output_names: m.output_names,
        compile: start.elapsed(),
        loaded: false,
    })
}

fn outputs(v: Value) -> Vec<Value> {
    match v {
        Value::Tuple(fields) => fields.to_vec(),
        v => vec![v],
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Import {
            model,
            output,
            keep_params,
        } => match output.extension().and_then(|e| e.to_str()) {
            Some("py") => {
                let m = model::read(&model, keep_params)?;
                write_file(&output, &m.module.to_string())
            }
            Some("rs") => dsl::write(&model, &output),
            _ => Err(format!(
                "{}: `import` writes TVMScript (.py) or DSL (.rs)",
                output.display()
            )),
        },
        Command::Check { model } => {
            let m = model::read(&model, false)?;
            match relax_core::analysis::well_formed(&m.module) {
                Ok(()) => {
                    outln!("{}: well formed", model.display());
                    Ok(())
                }
                Err(diagnostics) => {
                    for d in &diagnostics {
                        eprintln!("{d}");
                    }
                    Err(format!("{} diagnostic(s)", diagnostics.len()))
                }
            }
        }
        Command::Print {
            model,
            passes,
            pipeline,
            bind,
        } => {
            if passes.iter().any(|p| p == "help") {
                outln!("passes: {}", passes::NAMES.join(", "));
                return Ok(());
            }
            let m = model::read(&model, false)?;
            let mut module = bind::bind(m.module, &bind)?;
            for name in &passes {
                module = passes::run(name, module)?;
            }
            if pipeline {
                use relax_core::transform::Pass as _;
                module = integer_products(module)?;
                module = relax_core::backend::pipeline(&Target::host())
                    .run(module)
                    .map_err(|e| format!("the build pipeline: {e}"))?;
            }
            out!("{module}");
            Ok(())
        }
        Command::Compile {
            model,
            output,
            precision,
            cpu,
            time_passes,
            tune,
            tuning_db,
            tune_dim,
            bind,
        } => {
            let tuning = tuning::options(tune, tuning_db, &tune_dim)?;
            if output.extension().and_then(|e| e.to_str()) != Some("relax") {
                return Err(format!(
                    "{}: `compile` writes a package, named `.relax`",
                    output.display()
                ));
            }
            let timing = Timing::new(time_passes);
            let start = Instant::now();
            timing.ctx.report_stage(BuildStage::Import, 0);
            let mut m = model::read(&model, false)?;
            m.module = bind::bind(m.module, &bind)?;
            let imported = start.elapsed();
            m.module = integer_products(m.module)?;
            m.module = precision.apply(m.module)?;
            let start = Instant::now();
            let compiled = package::compile(&m, cpu.as_deref(), &timing.ctx, tuning.as_ref());
            let took = start.elapsed();
            let compiled = compiled.and_then(|(compiled, linked, report)| {
                timing.ctx.report_stage(BuildStage::Write, 0);
                let bytes = package::write(&output, &compiled)?;
                Ok((compiled, linked, bytes, report))
            });
            timing.report(took, compiled.as_ref().ok().map(|c| c.1));
            let (compiled, _, bytes, report) = compiled?;
            if let (Some(report), Some(t)) = (report, &tuning) {
                eprintln!("{}", report.summary());
                eprintln!("tuning database: {}", t.db.display());
            }
            outln!(
                "{}: imported in {:.2} s, compiled in {:.2} s for {}; wrote {} ({:.1} MB)",
                model.display(),
                imported.as_secs_f64(),
                took.as_secs_f64(),
                compiled.cpu,
                output.display(),
                bytes as f64 / 1e6
            );
            Ok(())
        }
        Command::Run {
            model,
            input,
            output,
            interp,
            full,
            json,
            precision,
            time_passes,
            tuning_db,
            bind,
        } => {
            let m = prepare(
                &model,
                precision,
                interp,
                time_passes,
                tuning_db.as_deref(),
                &bind,
            )?;
            let exec = &m.exec;
            let args = arguments(&m.main_params, &input, &m.params, &m.input_names)?;
            let vm = VirtualMachine::new(exec);
            let results = outputs(vm.call("main", &args).map_err(|e| e.to_string())?);
            if !output.is_empty() && output.len() != results.len() {
                return Err(format!(
                    "`main` returns {} output(s), and {} --output were given",
                    results.len(),
                    output.len()
                ));
            }
            let mut shown = Vec::new();
            for (i, r) in results.iter().enumerate() {
                let name = m.output_name(i);
                match (output.get(i), r) {
                    (Some(path), Value::Tensor(t)) => {
                        if let Some(note) = npy::write(path, t)? {
                            eprintln!("note: {note}");
                        }
                    }
                    (Some(path), _) => {
                        return Err(format!(
                            "output {i} (`{name}`) is not a tensor ({})",
                            path.display()
                        ))
                    }
                    (None, v) if json => shown.push(summary::json(&name, v, full)),
                    (None, v) => outln!("{}", summary::text(&name, v, full)),
                }
            }
            if json {
                outln!("{}", serde_json::Value::Array(shown));
            }
            Ok(())
        }
        Command::Bench {
            model,
            input,
            runs,
            profile,
            top,
            json,
            precision,
            time_passes,
            tuning_db,
            bind,
        } => {
            let m = prepare(
                &model,
                precision,
                false,
                time_passes,
                tuning_db.as_deref(),
                &bind,
            )?;
            let compile = m.compile;
            let exec = &m.exec;
            let args = arguments(&m.main_params, &input, &m.params, &m.input_names)?;
            let vm = VirtualMachine::new(exec);
            for _ in 0..3 {
                vm.call("main", &args).map_err(|e| e.to_string())?;
            }
            let bar = ProgressBar::new(runs as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} runs {elapsed_precise}")
                    .map_err(|e| e.to_string())?,
            );
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs.max(1) {
                let t = Instant::now();
                vm.call("main", &args).map_err(|e| e.to_string())?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                bar.inc(1);
            }
            bar.finish_and_clear();
            times.sort_by(f64::total_cmp);
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            let kernels = if profile {
                let vm = VirtualMachine::new(exec).with_profiling();
                for _ in 0..runs.max(1) {
                    vm.call("main", &args).map_err(|e| e.to_string())?;
                }
                vm.profile()
            } else {
                Vec::new()
            };
            let total: f64 = kernels.iter().map(|k| k.total.as_secs_f64()).sum();
            let per_run = |d: std::time::Duration| d.as_secs_f64() * 1e3 / runs.max(1) as f64;
            if json {
                let profile: Vec<_> = kernels
                    .iter()
                    .take(top)
                    .map(|k| {
                        serde_json::json!({
                            "kernel": k.name,
                            "ms_per_run": per_run(k.total),
                            "calls_per_run": k.calls / runs.max(1) as u64,
                        })
                    })
                    .collect();
                let mut doc = serde_json::json!({
                    "model": model.display().to_string(),
                    "precision": precision.name(),
                    "compile_s": if m.loaded { 0.0 } else { compile.as_secs_f64() },
                    "load_s": if m.loaded { compile.as_secs_f64() } else { 0.0 },
                    "runs": times.len(),
                    "ms": {
                        "min": times[0],
                        "p50": percentile(&times, 0.5),
                        "p90": percentile(&times, 0.9),
                        "p99": percentile(&times, 0.99),
                        "mean": mean,
                    },
                });
                if profile.is_empty() {
                    // Without --profile there is no per-kernel table.
                } else {
                    doc["profile"] = serde_json::Value::Array(profile);
                }
                outln!("{doc}");
                return Ok(());
            }
            outln!(
                "{}{}: {}; {} runs: min {:.3} ms, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, mean {:.3} ms",
                model.display(),
                match precision {
                    Precision::F32 => String::new(),
                    p => format!(" in {}", p.name()),
                },
                if m.loaded {
                    format!("loaded in {compile:.2?}")
                } else {
                    format!("compiled in {compile:.2?}")
                },
                times.len(),
                times[0],
                percentile(&times, 0.5),
                percentile(&times, 0.9),
                percentile(&times, 0.99),
                mean
            );
            if profile {
                outln!("{:>10} {:>6} {:>6}  kernel (per run)", "ms", "%", "calls");
                for k in kernels.iter().take(top) {
                    outln!(
                        "{:>10.3} {:>5.1}% {:>6}  {}",
                        per_run(k.total),
                        100.0 * k.total.as_secs_f64() / total.max(1e-12),
                        k.calls / runs.max(1) as u64,
                        k.name
                    );
                }
                if kernels.len() > top {
                    outln!("({} more kernels)", kernels.len() - top);
                }
            }
            Ok(())
        }
        Command::Dot {
            model,
            function,
            fuse,
            svg,
            output,
        } => {
            let m = model::read(&model, false)?;
            let mut module = m.module;
            if fuse {
                // The groups the build makes: LegalizeOps as its pipeline
                // runs it.
                module = passes::run("LambdaLift", module)?;
                module =
                    relax_core::transform::Pass::run(&relax_core::backend::legalize_ops(), module)
                        .map_err(|e| format!("LegalizeOps: {e}"))?;
                for name in ["AnnotateTIROpPattern", "FoldConstant"] {
                    module = passes::run(name, module)?;
                }
                module = relax_core::transform::Pass::run(&relax_core::backend::fuse_ops(), module)
                    .map_err(|e| format!("FuseOps: {e}"))?;
            }
            let mut text = dot::render(&module, &function, svg)?;
            if svg {
                text = dot::svg(&text)?;
            }
            match output {
                Some(path) => write_file(&path, &text),
                None => {
                    out!("{text}");
                    Ok(())
                }
            }
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "relax", &mut std::io::stdout());
            Ok(())
        }
    }
}
