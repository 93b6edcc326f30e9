//! Progress of a build, for whoever shows it (the `relax` command line's
//! progress bar, `--time-passes`): relax-core reports, draws nothing.
//!
//! 1. A build goes through the [`BuildStage`]s in their order; each is
//!    entered once at most, with the number of items it will finish when
//!    it counts them (the kernels of [`BuildStage::Codegen`]).
//! 2. Within a counted stage, [`ProgressEvent::Advanced`] gives the items
//!    done so far, increasing, up to the stage's count. Code generation
//!    reports as each thread finishes a part, so the count moves in steps
//!    of a part's kernels.
//! 3. A [`Progress`] is given to a build through its
//!    [`PassContext::with_progress`](super::PassContext::with_progress);
//!    it is called from code generation threads, so it is `Send + Sync`.
//!    Stages relax-core does not run (importing a model, linking a
//!    package, writing it) are reported by whoever runs them, to the same
//!    [`Progress`].

/// A stage of a build, in the order builds go through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BuildStage {
    /// Reading the model (ONNX import, parsing); not run by relax-core.
    Import,
    /// The pass pipeline (legalization, fusion, …).
    Passes,
    /// VM code generation and the kernels' loop schedules.
    Lower,
    /// LLVM: the kernels to machine code, in parallel.
    Codegen,
    /// Linking the machine code (a package's shared library).
    Link,
    /// Writing the result (a package file); not run by relax-core.
    Write,
}

impl BuildStage {
    /// Its name, lower case, as progress bars and timings show it.
    pub fn name(self) -> &'static str {
        match self {
            BuildStage::Import => "import",
            BuildStage::Passes => "passes",
            BuildStage::Lower => "lowering",
            BuildStage::Codegen => "code generation",
            BuildStage::Link => "linking",
            BuildStage::Write => "writing",
        }
    }
}

/// What a build reports. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A stage starts.
    Started {
        /// The stage.
        stage: BuildStage,
        /// The items it will finish (0: not counted).
        items: usize,
    },
    /// Items of a counted stage are finished.
    Advanced {
        /// The stage.
        stage: BuildStage,
        /// How many are finished so far.
        done: usize,
        /// Of how many.
        items: usize,
    },
}

/// Receives a build's [`ProgressEvent`]s. See the module docs.
pub trait Progress: Send + Sync {
    /// Called for each event, in order (from code generation threads for
    /// [`ProgressEvent::Advanced`] of [`BuildStage::Codegen`], serialized
    /// by the caller).
    fn report(&self, event: ProgressEvent);
}

/// A counter of finished items that reports each step to a [`Progress`]
/// as [`ProgressEvent::Advanced`], from any thread, in increasing order.
pub(crate) struct StageCounter<'a> {
    progress: Option<&'a dyn Progress>,
    stage: BuildStage,
    items: usize,
    done: std::sync::Mutex<usize>,
}

impl<'a> StageCounter<'a> {
    /// Reports that `stage` starts with `items` items.
    pub(crate) fn start(
        progress: Option<&'a dyn Progress>,
        stage: BuildStage,
        items: usize,
    ) -> Self {
        if let Some(p) = progress {
            p.report(ProgressEvent::Started { stage, items });
        }
        StageCounter {
            progress,
            stage,
            items,
            done: std::sync::Mutex::new(0),
        }
    }

    /// `n` more items are finished.
    pub(crate) fn advance(&self, n: usize) {
        let Some(p) = self.progress else { return };
        // Held while reporting, so the counts arrive in increasing order.
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done = (*done + n).min(self.items);
        p.report(ProgressEvent::Advanced {
            stage: self.stage,
            done: *done,
            items: self.items,
        });
    }
}

/// A [`Progress`] that keeps every event, and the checks the build tests
/// make of them.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::sync::Mutex;

    /// Records every event.
    #[derive(Default)]
    pub(crate) struct Recorder(pub(crate) Mutex<Vec<ProgressEvent>>);

    impl Progress for Recorder {
        fn report(&self, event: ProgressEvent) {
            self.0.lock().unwrap().push(event);
        }
    }

    impl Recorder {
        /// Checks the events are monotone: stages in increasing order,
        /// each once; within a stage, counts increasing to its items, and
        /// reaching them. Returns the stages and their item counts.
        pub(crate) fn check(&self) -> Vec<(BuildStage, usize)> {
            let events = self.0.lock().unwrap();
            let mut stages: Vec<(BuildStage, usize)> = Vec::new();
            let mut done = 0;
            for e in events.iter() {
                match *e {
                    ProgressEvent::Started { stage, items } => {
                        if let Some(&(last, last_items)) = stages.last() {
                            assert!(last < stage, "{last:?} then {stage:?}: {events:?}");
                            assert_eq!(done, last_items, "{last:?} ended early: {events:?}");
                        }
                        stages.push((stage, items));
                        done = 0;
                    }
                    ProgressEvent::Advanced {
                        stage,
                        done: now,
                        items,
                    } => {
                        assert_eq!(stages.last(), Some(&(stage, items)), "{events:?}");
                        assert!(now > done && now <= items, "{done} then {now}: {events:?}");
                        done = now;
                    }
                }
            }
            if let Some(&(_, items)) = stages.last() {
                assert_eq!(done, items, "{events:?}");
            }
            stages
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Recorder;
    use super::*;

    #[test]
    fn a_counter_reports_increasing_counts_capped_at_its_items() {
        let r = Recorder::default();
        let c = StageCounter::start(Some(&r), BuildStage::Codegen, 5);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| c.advance(2));
            }
        });
        c.advance(3);
        assert_eq!(r.check(), vec![(BuildStage::Codegen, 5)]);
        let events = r.0.lock().unwrap();
        assert_eq!(events.len(), 4);
        assert_eq!(
            events[3],
            ProgressEvent::Advanced {
                stage: BuildStage::Codegen,
                done: 5,
                items: 5
            }
        );
        // Without a progress nothing is reported, nothing fails.
        StageCounter::start(None, BuildStage::Codegen, 1).advance(1);
    }

    #[test]
    fn stages_are_ordered_as_builds_run_them() {
        use BuildStage::*;
        let order = [Import, Passes, Lower, Codegen, Link, Write];
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Codegen.name(), "code generation");
    }
}
