//! The progress bar a build draws while a model compiles, and the stage
//! times `--time-passes` prints.
//!
//! [`BuildProgress`] is the build's `relax_core::transform::Progress`: it
//! records when each stage starts (import, passes, lowering, code
//! generation, linking, writing) and, when stderr is a terminal, draws
//! the current stage on it: a spinner, or for code generation a bar of the
//! kernels compiled so far. In a pipe, in CI and in tests nothing is drawn.

use indicatif::{ProgressBar, ProgressStyle};
use relax_core::transform::{BuildStage, Progress, ProgressEvent};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// See the module docs.
pub struct BuildProgress {
    /// The bar, when stderr is a terminal.
    bar: Option<ProgressBar>,
    /// Each stage started, when, and its item count; then when the build
    /// finished.
    stages: Mutex<Vec<(BuildStage, Instant, usize)>>,
    finished: Mutex<Option<Instant>>,
}

impl BuildProgress {
    /// A progress that draws on stderr when it is a terminal.
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        BuildProgress {
            bar,
            stages: Mutex::new(Vec::new()),
            finished: Mutex::new(None),
        }
    }

    /// Clears the bar and notes the end of the last stage.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished.get_or_insert_with(Instant::now);
    }

    /// Each stage started so far, how long it took (until the next one,
    /// or [`BuildProgress::finish`]) and its item count.
    pub fn stage_times(&self) -> Vec<(BuildStage, Duration, usize)> {
        let stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        let end = self
            .finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_else(Instant::now);
        stages
            .iter()
            .enumerate()
            .map(|(i, &(stage, start, items))| {
                let until = stages.get(i + 1).map_or(end, |s| s.1);
                (stage, until.saturating_duration_since(start), items)
            })
            .collect()
    }

    /// The stage times as one line: `import 0.12 s, passes 0.03 s, …`.
    pub fn render(&self) -> String {
        self.stage_times()
            .iter()
            .map(|(stage, took, items)| match stage {
                BuildStage::Codegen => format!(
                    "{} ({items} kernels) {:.3} s",
                    stage.name(),
                    took.as_secs_f64()
                ),
                _ => format!("{} {:.3} s", stage.name(), took.as_secs_f64()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Progress for BuildProgress {
    fn report(&self, event: ProgressEvent) {
        match event {
            ProgressEvent::Started { stage, items } => {
                self.stages.lock().unwrap_or_else(|e| e.into_inner()).push((
                    stage,
                    Instant::now(),
                    items,
                ));
                let Some(bar) = &self.bar else { return };
                let template = if items > 0 {
                    "{spinner} {msg} [{bar:30}] {pos}/{len} kernels, {elapsed}"
                } else {
                    "{spinner} {msg}, {elapsed}"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_length(items as u64);
                bar.set_position(0);
                bar.set_message(stage.name());
            }
            ProgressEvent::Advanced { done, .. } => {
                if let Some(bar) = &self.bar {
                    bar.set_position(done as u64);
                }
            }
        }
    }
}
