//! Pass instruments (TVM's `tvm.ir.instrument`): hooks a
//! [`PassContext`](super::PassContext) calls around every pass it runs.
//!
//! A [`PassInstrument`] sees each pass as a [`PassInfo`] (its name and its
//! nesting depth inside `Sequential`s) and the module before and after it.
//! Three come with the crate, named as TVM names them:
//!
//! | instrument | what it does |
//! |---|---|
//! | [`PassTimingInstrument`] | times every pass; [`render`](PassTimingInstrument::render) prints the tree of timings |
//! | [`PrintBeforeAll`] | prints the module before every pass |
//! | [`PrintAfterAll`] | prints the module after every pass |
//!
//! Printing goes to a sink, a closure taking each text; `new()` prints to
//! standard output, as TVM does.

use crate::ir::IRModule;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What an instrument is told about the pass that runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassInfo<'a> {
    /// The pass name (`FuseOps`).
    pub name: &'a str,
    /// How deep the pass is nested: 0 for a top-level pass, 1 for a pass of
    /// a top-level `Sequential`, and so on.
    pub depth: usize,
}

/// Hooks called around every pass of a [`PassContext`](super::PassContext)
/// run. Every method has a default that does nothing, so an instrument
/// implements only what it needs. Instruments are shared (`Arc`) and called
/// through `&self`: keep state behind a `Mutex`.
pub trait PassInstrument: Send + Sync {
    /// The instrument's name, for messages.
    fn name(&self) -> &str;
    /// Whether the pass runs; any instrument saying no skips it (TVM's
    /// `should_run`).
    fn should_run(&self, _module: &IRModule, _pass: &PassInfo) -> bool {
        true
    }
    /// Called before the pass, with its input.
    fn run_before_pass(&self, _module: &IRModule, _pass: &PassInfo) {}
    /// Called after the pass succeeded, with its output.
    fn run_after_pass(&self, _module: &IRModule, _pass: &PassInfo) {}
}

/// A sink for printed modules.
type Sink = Box<dyn Fn(&str) + Send + Sync>;

fn stdout_sink() -> Sink {
    Box::new(|text| println!("{text}"))
}

/// Prints the module before every pass (TVM's `PrintBeforeAll`).
pub struct PrintBeforeAll {
    sink: Sink,
}

impl PrintBeforeAll {
    /// Prints to standard output.
    pub fn new() -> Self {
        Self {
            sink: stdout_sink(),
        }
    }
    /// Hands each text (a header line, then the module) to `sink`.
    pub fn with_sink(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            sink: Box::new(sink),
        }
    }
}

impl Default for PrintBeforeAll {
    fn default() -> Self {
        Self::new()
    }
}

impl PassInstrument for PrintBeforeAll {
    fn name(&self) -> &str {
        "PrintBeforeAll"
    }
    fn run_before_pass(&self, module: &IRModule, pass: &PassInfo) {
        (self.sink)(&format!("# Before pass: {}\n{module}", pass.name));
    }
}

/// Prints the module after every pass (TVM's `PrintAfterAll`).
pub struct PrintAfterAll {
    sink: Sink,
}

impl PrintAfterAll {
    /// Prints to standard output.
    pub fn new() -> Self {
        Self {
            sink: stdout_sink(),
        }
    }
    /// Hands each text (a header line, then the module) to `sink`.
    pub fn with_sink(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            sink: Box::new(sink),
        }
    }
}

impl Default for PrintAfterAll {
    fn default() -> Self {
        Self::new()
    }
}

impl PassInstrument for PrintAfterAll {
    fn name(&self) -> &str {
        "PrintAfterAll"
    }
    fn run_after_pass(&self, module: &IRModule, pass: &PassInfo) {
        (self.sink)(&format!("# After pass: {}\n{module}", pass.name));
    }
}

/// One timed pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassTiming {
    /// The pass name.
    pub name: String,
    /// Its nesting depth (see [`PassInfo::depth`]).
    pub depth: usize,
    /// Wall-clock time from before to after the pass, nested passes
    /// included.
    pub elapsed: Duration,
}

/// Times every pass (TVM's `PassTimingInstrument`). Read the figures with
/// [`timings`](Self::timings) or [`render`](Self::render).
#[derive(Default)]
pub struct PassTimingInstrument {
    /// The passes running now, outermost first: when each started and its
    /// slot in `done`.
    running: Mutex<Vec<(Instant, usize)>>,
    /// Every pass that started, in that order; `None` until it finished.
    done: Mutex<Vec<Option<PassTiming>>>,
}

impl PassTimingInstrument {
    /// No timings yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The passes that finished, in the order they started (a `Sequential`
    /// before the passes it ran).
    pub fn timings(&self) -> Vec<PassTiming> {
        lock(&self.done).iter().flatten().cloned().collect()
    }

    /// The timings as an indented table, one pass per line, nested passes
    /// under their `Sequential`, with each pass's share of its parent:
    /// ```text
    /// Sequential: 1250us [1250us] (100.00%; 100.00%)
    ///     LegalizeOps: 800us [800us] (64.00%; 64.00%)
    /// ```
    /// (total time [time outside nested passes] (share of the whole run;
    /// share of the parent), as TVM's `render()` prints it).
    pub fn render(&self) -> String {
        let timings = self.timings();
        let total: Duration = timings
            .iter()
            .filter(|t| t.depth == 0)
            .map(|t| t.elapsed)
            .sum();
        let mut out = String::new();
        for (i, t) in timings.iter().enumerate() {
            let children: Duration = timings[i + 1..]
                .iter()
                .take_while(|c| c.depth > t.depth)
                .filter(|c| c.depth == t.depth + 1)
                .map(|c| c.elapsed)
                .sum();
            let parent = timings[..i]
                .iter()
                .rev()
                .find(|p| p.depth + 1 == t.depth)
                .map_or(total, |p| p.elapsed);
            let _ = writeln!(
                out,
                "{}{}: {}us [{}us] ({:.2}%; {:.2}%)",
                "    ".repeat(t.depth),
                t.name,
                t.elapsed.as_micros(),
                t.elapsed.saturating_sub(children).as_micros(),
                percent(t.elapsed, total),
                percent(t.elapsed, parent),
            );
        }
        out
    }

    /// Forgets every timing.
    pub fn clear(&self) {
        lock(&self.done).clear();
        lock(&self.running).clear();
    }
}

impl PassInstrument for PassTimingInstrument {
    fn name(&self) -> &str {
        "PassTimingInstrument"
    }
    fn run_before_pass(&self, _module: &IRModule, pass: &PassInfo) {
        let mut done = lock(&self.done);
        let mut running = lock(&self.running);
        // A pass at depth d runs inside d others. Entries beyond that are
        // passes that failed (their after-hook never came): their slots
        // stay `None`, and `timings` skips them.
        running.truncate(pass.depth);
        running.push((Instant::now(), done.len()));
        done.push(None);
    }
    fn run_after_pass(&self, _module: &IRModule, pass: &PassInfo) {
        let Some((start, slot)) = lock(&self.running).pop() else {
            return;
        };
        if let Some(entry) = lock(&self.done).get_mut(slot) {
            *entry = Some(PassTiming {
                name: pass.name.to_string(),
                depth: pass.depth,
                elapsed: start.elapsed(),
            });
        }
    }
}

fn percent(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        100.0
    } else {
        100.0 * part.as_secs_f64() / whole.as_secs_f64()
    }
}

/// Locks `m`, also when another thread panicked while holding it (the
/// figures stay usable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
