//! The context passes run in (TVM's `tvm.transform.PassContext`).
//!
//! A [`PassContext`] holds what a pipeline run is configured with, apart
//! from the passes themselves:
//!
//! 1. **instruments** ([`PassInstrument`]), called around every pass the
//!    run executes, nested passes of a [`Sequential`](super::Sequential)
//!    included: [`PassTimingInstrument`](super::PassTimingInstrument),
//!    [`PrintBeforeAll`](super::PrintBeforeAll),
//!    [`PrintAfterAll`](super::PrintAfterAll), or your own;
//! 2. **disabled passes** (TVM's `disabled_pass`): passes skipped by name,
//!    e.g. `FuseOps` to compare a build with and without fusion;
//! 3. **progress** ([`Progress`]): where a build run in the context reports
//!    its stages and its code generation's kernel count.
//!
//! A pass that panics does not take the process down: the panic becomes an
//! `Error::Compile` with a `pass-panicked` diagnostic naming the pass.
//!
//! TVM makes the context ambient (`with PassContext(...)`); here it is an
//! explicit argument: [`Pass::run_in`](super::Pass::run_in) and
//! [`build_with`](crate::backend::build_with). [`Pass::run`](super::Pass::run)
//! is `run_in` with the default context (no instruments, nothing disabled).

use super::instrument::{PassInfo, PassInstrument};
use super::progress::{BuildStage, Progress, ProgressEvent};
use crate::ir::IRModule;
use relax_runtime::{Diagnostic, Error};
use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Instruments and disabled passes for one pipeline run. See the module docs.
#[derive(Default)]
pub struct PassContext {
    instruments: Vec<Arc<dyn PassInstrument>>,
    disabled: Vec<String>,
    /// Who hears of the build's stages ([`super::progress`]).
    progress: Option<Arc<dyn Progress>>,
    /// The nesting depth of the pass running now (0: a top-level pass).
    depth: Cell<usize>,
}

impl PassContext {
    /// No instruments, nothing disabled.
    pub fn new() -> Self {
        Self::default()
    }

    /// This context with `instrument` called around every pass. Keep an
    /// `Arc` clone to read the instrument afterwards (timings, say).
    pub fn with_instrument(mut self, instrument: Arc<dyn PassInstrument>) -> Self {
        self.instruments.push(instrument);
        self
    }

    /// This context with the stages of a build that runs in it (and its
    /// code generation's kernel count) reported to `progress`
    /// ([`super::progress`]).
    pub fn with_progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Where this context reports a build's progress, if anywhere.
    pub fn progress(&self) -> Option<&dyn Progress> {
        self.progress.as_deref()
    }

    /// Reports that `stage` starts, with `items` items (0: not counted).
    pub fn report_stage(&self, stage: BuildStage, items: usize) {
        if let Some(p) = &self.progress {
            p.report(ProgressEvent::Started { stage, items });
        }
    }

    /// This context with the pass named `name` skipped (TVM's
    /// `disabled_pass`); the module passes through it unchanged.
    pub fn disable(mut self, name: impl Into<String>) -> Self {
        self.disabled.push(name.into());
        self
    }

    /// The instruments, in the order they are called before a pass (after
    /// a pass they are called in the same order, as TVM does).
    pub fn instruments(&self) -> &[Arc<dyn PassInstrument>] {
        &self.instruments
    }

    /// Whether the pass named `name` is disabled.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }

    /// Runs `run` as the pass named `name` on `module`: skipped when the
    /// pass is disabled or an instrument's `should_run` says no; otherwise
    /// the instruments' `run_before_pass`, the pass, and their
    /// `run_after_pass` on its result. A pass that fails reports its error
    /// without the after-hooks (TVM does the same).
    pub fn run_instrumented(
        &self,
        name: &str,
        module: IRModule,
        run: impl FnOnce(IRModule) -> Result<IRModule, Error>,
    ) -> Result<IRModule, Error> {
        let info = PassInfo {
            name,
            depth: self.depth.get(),
        };
        if self.is_disabled(name)
            || !self
                .instruments
                .iter()
                .all(|i| i.should_run(&module, &info))
        {
            return Ok(module);
        }
        for instrument in &self.instruments {
            instrument.run_before_pass(&module, &info);
        }
        self.depth.set(info.depth + 1);
        // A pass is user code too (a rewrite callback, a pass written
        // outside this crate): its panic becomes an error naming it, and
        // the caller's process and context stay usable.
        let result = catch_unwind(AssertUnwindSafe(|| run(module)));
        self.depth.set(info.depth);
        let module = result.unwrap_or_else(|payload| {
            Err(Error::Compile(vec![Diagnostic::new(
                "pass-panicked",
                format!("pass {name} panicked: {}", panic_message(&*payload)),
            )]))
        })?;
        for instrument in &self.instruments {
            instrument.run_after_pass(&module, &info);
        }
        Ok(module)
    }
}

/// The message a panic was raised with, when it is a string.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string payload)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal;
    use crate::transform::{
        DeadCodeElimination, LegalizeOps, Pass, PassTimingInstrument, PrintAfterAll, Sequential,
    };
    use std::sync::Mutex;

    const MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            unused = R.multiply(x, x)
            y = R.add(x, x)
            R.output(y)
        return y
"#;

    fn module() -> IRModule {
        MODULE.parse().expect("the test module parses")
    }

    fn pipeline() -> Sequential {
        Sequential::new()
            .with(LegalizeOps::default())
            .with(DeadCodeElimination::default())
    }

    #[test]
    fn timing_sees_the_sequential_and_every_nested_pass() {
        let timing = Arc::new(PassTimingInstrument::new());
        let ctx = PassContext::new().with_instrument(timing.clone());
        pipeline().run_in(module(), &ctx).unwrap();
        let seen: Vec<(String, usize)> = timing
            .timings()
            .into_iter()
            .map(|t| (t.name, t.depth))
            .collect();
        assert_eq!(
            seen,
            [
                ("Sequential".to_string(), 0),
                ("LegalizeOps".to_string(), 1),
                ("DeadCodeElimination".to_string(), 1),
            ]
        );
        let rendered = timing.render();
        let lines: Vec<&str> = rendered.lines().collect();
        assert_eq!(lines.len(), 3, "{rendered}");
        assert!(lines[0].starts_with("Sequential: "), "{rendered}");
        assert!(lines[0].contains("(100.00%; 100.00%)"), "{rendered}");
        assert!(lines[1].starts_with("    LegalizeOps: "), "{rendered}");
        assert!(
            lines[2].starts_with("    DeadCodeElimination: "),
            "{rendered}"
        );
        timing.clear();
        assert!(timing.timings().is_empty());
    }

    #[test]
    fn print_after_all_shows_each_pass_result_in_order() {
        let texts = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = texts.clone();
        let ctx =
            PassContext::new().with_instrument(Arc::new(PrintAfterAll::with_sink(move |text| {
                sink.lock().unwrap().push(text.to_string())
            })));
        pipeline().run_in(module(), &ctx).unwrap();
        let texts = texts.lock().unwrap();
        let headers: Vec<&str> = texts.iter().map(|t| t.lines().next().unwrap()).collect();
        assert_eq!(
            headers,
            [
                "# After pass: LegalizeOps",
                "# After pass: DeadCodeElimination",
                "# After pass: Sequential",
            ]
        );
        // After LegalizeOps the unused multiply is still there (as a
        // call_tir); DeadCodeElimination removes it.
        assert!(texts[0].contains("multiply"), "{}", texts[0]);
        assert!(!texts[1].contains("multiply"), "{}", texts[1]);
    }

    #[test]
    fn a_disabled_pass_is_skipped() {
        let ctx = PassContext::new().disable("LegalizeOps");
        let after = pipeline().run_in(module(), &ctx).unwrap();
        let expected = DeadCodeElimination::default().run(module()).unwrap();
        assert!(structural_equal(&after, &expected), "{after}");
        assert!(!after.to_string().contains("call_tir"), "{after}");
    }

    /// Skips every pass whose name starts with "Dead".
    struct NoDce;
    impl PassInstrument for NoDce {
        fn name(&self) -> &str {
            "NoDce"
        }
        fn should_run(&self, _module: &IRModule, pass: &PassInfo) -> bool {
            !pass.name.starts_with("Dead")
        }
    }

    #[test]
    fn an_instrument_can_veto_a_pass() {
        let ctx = PassContext::new().with_instrument(Arc::new(NoDce));
        let after = pipeline().run_in(module(), &ctx).unwrap();
        let expected = LegalizeOps::default().run(module()).unwrap();
        assert!(structural_equal(&after, &expected), "{after}");
    }

    struct Panics;
    impl Pass for Panics {
        fn name(&self) -> &str {
            "Panics"
        }
        fn run(&self, _module: IRModule) -> Result<IRModule, Error> {
            panic!("a bug in a user pass")
        }
    }

    #[test]
    fn a_panicking_pass_is_an_error_naming_it_and_the_context_stays_usable() {
        let timing = Arc::new(PassTimingInstrument::new());
        let ctx = PassContext::new().with_instrument(timing.clone());
        let err = Sequential::new()
            .with(LegalizeOps::default())
            .with(Panics)
            .run_in(module(), &ctx)
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("pass Panics panicked: a bug in a user pass"),
            "{text}"
        );
        // The failed passes have no timing; the next run is timed as usual.
        let names: Vec<String> = timing.timings().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["LegalizeOps"]);
        timing.clear();
        pipeline().run_in(module(), &ctx).unwrap();
        assert_eq!(timing.timings().len(), 3);
        assert_eq!(timing.timings()[0].depth, 0);
    }

    #[test]
    fn build_with_runs_the_target_pipeline_in_the_context() {
        let timing = Arc::new(PassTimingInstrument::new());
        let ctx = PassContext::new().with_instrument(timing.clone());
        let target = crate::Target::tir_interpreter();
        crate::backend::build_with(&module(), &target, &ctx).unwrap();
        let names: Vec<String> = timing.timings().into_iter().map(|t| t.name).collect();
        let pipeline = crate::backend::pipeline(&target);
        let expected: Vec<&str> = std::iter::once("Sequential")
            .chain(pipeline.pass_names())
            .collect();
        assert_eq!(names, expected);
    }
}
