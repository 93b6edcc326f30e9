//! Tests of the AOT Builder: scanning files, rendering errors with
//! `file:line:column`, compiling modules into a library, and the exit
//! status of `compile`. Linking the library into a crate is what
//! `examples/aot-mlp` does.

use super::*;
use crate::frontend::codegen::aot::artifact_hash;
use relax_runtime::Executable;
use std::process::Command;

const MLP: &str = r#"//! A model.
use relax::ndarray;

relax::module! {
    /// A small MLP.
    pub mod tiny {
        #[function]
        pub fn main(
            x: Tensor![(n, 4), f32],
            w: Tensor![(3, 4), f32],
            b: Tensor![(3,), f32],
        ) -> Tensor![(n, 3), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w));
                let lv1 = R::add(lv0, b);
                let gv = R::nn::relu(lv1);
                R::output(gv);
            }
            gv
        }
    }
}

fn unrelated() -> u32 {
    // Not a module: DSL inside a function body is skipped.
    relax::module! { pub mod hidden {} }
    7
}

mod nested {
    #[relax::function]
    pub fn scale(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
        let y = R::multiply(x, x);
        y
    }

    macro_rules! not_dsl { () => {} }
}
"#;

const SHAPE_ERROR: &str = r#"relax::module! {
    pub mod broken {
        #[function]
        pub fn main(x: Tensor![(n, 4), f32], w: Tensor![(3, 5), f32]) -> Tensor![(n, 3), f32] {
            let y = R::matmul(x, R::permute_dims(w));
            y
        }
    }
}
"#;

/// A fresh directory for one test, removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("relax-aot-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `source` written to `<dir>/model.rs`.
fn model_file(dir: &Path, source: &str) -> PathBuf {
    let path = dir.join("model.rs");
    std::fs::write(&path, source).unwrap();
    path
}

/// (1-based line, 1-based column) of the first `needle` in `src`.
fn location(src: &str, needle: &str) -> (usize, usize) {
    let offset = src.find(needle).unwrap();
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

fn source_errors(r: Result<Artifacts, AotError>) -> Vec<SourceError> {
    match r {
        Err(AotError::Source(errors)) => errors,
        Err(other) => panic!("expected source errors, found {other}"),
        Ok(a) => panic!("expected errors, compiled {:?}", a.library),
    }
}

// ---- scanning -------------------------------------------------------------

#[test]
fn the_scanner_finds_modules_and_functions_and_skips_the_rest() {
    let file = syn::parse_file(MLP).unwrap();
    let found = scan(&file);
    assert_eq!(found.len(), 2, "{found:#?}");
    let DslItem::Module { tokens, range } = &found[0] else {
        panic!("first a module")
    };
    let text = tokens.to_string();
    assert!(
        text.starts_with("# [doc = "),
        "the doc comment comes first: {text}"
    );
    assert!(
        text.contains("A small MLP.") && text.contains("pub mod tiny"),
        "{text}"
    );
    assert_eq!(range.start.start().line, 4, "the invocation's first token");
    let DslItem::Function { attr, item, .. } = &found[1] else {
        panic!("then a function")
    };
    assert!(attr.is_empty());
    let item = item.to_string();
    assert!(item.starts_with("pub fn scale"), "{item}");
    assert!(
        !item.contains("relax :: function"),
        "the attribute is removed: {item}"
    );
}

#[test]
fn the_scanner_takes_attribute_arguments_and_both_path_forms() {
    let file = syn::parse_file(
        r#"
        #[inline]
        #[::relax::function(pure = false)]
        fn f() -> Object { let t = R::call_packed("p", sinfo = Object); t }
        ::relax::module! { mod m {} }
        other::module! { mod n {} }
        #[function] fn g() {}
        "#,
    )
    .unwrap();
    let found = scan(&file);
    assert_eq!(found.len(), 2, "{found:#?}");
    let DslItem::Function { attr, item, .. } = &found[0] else {
        panic!("a function")
    };
    assert_eq!(attr.to_string(), "pure = false");
    assert!(item.to_string().starts_with("# [inline] fn f"), "{item}");
    assert!(matches!(found[1], DslItem::Module { .. }));
}

// ---- errors ---------------------------------------------------------------

#[test]
fn a_shape_error_is_reported_with_file_line_and_column() {
    let dir = TempDir::new("shape-error");
    let path = model_file(&dir, SHAPE_ERROR);
    let errors = source_errors(
        Builder::new()
            .file(&path)
            .out_dir(dir.join("out"))
            .crate_name("t")
            .try_compile("model"),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (line, column) = location(SHAPE_ERROR, "R::matmul");
    let e = &errors[0];
    assert_eq!((e.line, e.column), (line, column));
    let text = e.to_string();
    let first = text.lines().next().unwrap();
    // The second operand is an inner call, named by the frontend's temporary.
    let want = format!(
        "{}:{line}:{column}: error: matmul: inner dimensions differ: x is (n, 4), ",
        path.display()
    );
    assert!(first.starts_with(&want), "{text}");
    assert!(first.ends_with(" is (5, 3)"), "{text}");
    // The source line, with the whole call underlined.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[2],
        format!("{line} |             let y = R::matmul(x, R::permute_dims(w));")
    );
    assert_eq!(
        lines[3].trim_end(),
        format!(
            "  |                     {}",
            "^".repeat("R::matmul(x, R::permute_dims(w))".len())
        )
    );
    assert!(!dir.join("out/libmodel.a").exists(), "nothing is written");
}

#[test]
fn errors_of_every_module_and_file_are_reported_together() {
    let dir = TempDir::new("many-errors");
    let a = model_file(&dir, SHAPE_ERROR);
    let b = dir.join("other.rs");
    std::fs::write(
        &b,
        "relax::module! {\n    pub mod other {\n        #[function]\n        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {\n            let y = R::nonexistent(x);\n            y\n        }\n    }\n}\n",
    )
    .unwrap();
    let errors = source_errors(
        Builder::new()
            .file(&a)
            .file(&b)
            .out_dir(dir.join("out"))
            .try_compile("model"),
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].file, a);
    assert_eq!(
        (errors[1].file.clone(), errors[1].line, errors[1].column),
        (b, 5, 21)
    );
    assert!(errors[1].message.contains("nonexistent"), "{}", errors[1]);
}

#[test]
fn a_file_that_is_not_rust_is_reported_where_parsing_stopped() {
    let dir = TempDir::new("parse-error");
    let path = model_file(&dir, "fn ok() {}\n\nfn broken( {\n");
    let errors = source_errors(Builder::new().file(&path).out_dir(&dir).try_compile("m"));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, 3, "{}", errors[0]);
    assert!(errors[0]
        .to_string()
        .starts_with(&format!("{}:3:", path.display())));
}

#[test]
fn two_modules_of_one_name_are_an_error() {
    let dir = TempDir::new("duplicate");
    let src = "relax::module! { pub mod m { #[function] pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] { x } } }\n\
               mod inner { relax::module! { pub mod m { #[function] pub fn g(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] { x } } } }\n";
    let path = model_file(&dir, src);
    let errors = source_errors(Builder::new().file(&path).out_dir(&dir).try_compile("m"));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, 2);
    assert!(
        errors[0]
            .message
            .contains("a second relax module named `m`"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].notes[0].contains("line 1"),
        "{:?}",
        errors[0].notes
    );
}

#[test]
fn misuse_is_a_config_error() {
    let r = Builder::new()
        .out_dir("/nonexistent")
        .try_compile("lib name");
    assert!(matches!(r, Err(AotError::Config(_))), "{r:?}");
    let r = Builder::new()
        .file("/nonexistent/model.rs")
        .out_dir("/tmp")
        .try_compile("m");
    assert!(matches!(r, Err(AotError::Io { .. })), "{r:?}");
}

/// `compile` prints the rendered errors and exits with status 1: run in a
/// child process (this test binary, re-entered with an environment
/// variable naming the file).
#[test]
fn compile_exits_with_status_1_after_printing_the_errors() {
    const CHILD: &str = "RELAX_AOT_TEST_CHILD_FILE";
    if let Some(file) = std::env::var_os(CHILD) {
        let dir = PathBuf::from(&file).parent().unwrap().join("out");
        Builder::new().file(&file).out_dir(dir).compile("model");
        // Only reached when compiling succeeds, which this test's file does not.
        std::process::exit(0);
    }
    let dir = TempDir::new("exit-status");
    let path = model_file(&dir, SHAPE_ERROR);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "backend::aot::tests::compile_exits_with_status_1_after_printing_the_errors",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (line, column) = location(SHAPE_ERROR, "R::matmul");
    assert!(
        stderr.contains(&format!(
            "{}:{line}:{column}: error: matmul: inner dimensions differ",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: relax could not compile `model` due to 1 previous error"),
        "{stderr}"
    );
}

// ---- compiling ------------------------------------------------------------

#[test]
fn compiles_every_module_into_a_library_an_executable_and_an_artifact_file() {
    let dir = TempDir::new("compile");
    let path = model_file(&dir, MLP);
    let out = dir.join("out");
    let artifacts = Builder::new()
        .file(&path)
        .out_dir(&out)
        .crate_name("my-app")
        .try_compile("model")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(artifacts.library, out.join("libmodel.a"));
    let names: Vec<&str> = artifacts.modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["tiny", "scale"]);

    // The hash is the one the macro would embed for the same module.
    let file = syn::parse_file(MLP).unwrap();
    let DslItem::Module { tokens, .. } = &scan(&file)[0] else {
        panic!()
    };
    let lowered = crate::frontend::lower_module_macro(tokens.clone()).unwrap();
    let tiny = &artifacts.modules[0];
    assert_eq!(tiny.content_hash, artifact_hash(&lowered.module));

    // The executable loads and calls exactly the kernels of the table.
    let exec = Executable::from_bytes(&std::fs::read(&tiny.executable).unwrap()).unwrap();
    assert!(exec.function_index("main").is_some());
    let table: Vec<&str> = tiny.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(exec.natives, table);
    assert!(!table.is_empty(), "the ops were legalized to kernels");
    for k in &tiny.kernels {
        assert!(
            k.symbol.starts_with("relax_my_app_model_tiny_"),
            "{}",
            k.symbol
        );
    }

    // The library: an index naming every kernel, one object per module.
    let lib = std::fs::read(&artifacts.library).unwrap();
    assert!(lib.starts_with(b"!<arch>\n"));
    for m in &artifacts.modules {
        for k in &m.kernels {
            let needle = format!("{}\0", k.symbol);
            assert!(
                lib.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{}",
                k.symbol
            );
        }
    }
    assert!(lib.windows(6).any(|w| w == b"tiny.o"));
    // On x86-64 every kernel is also compiled for the v3 and v4 levels.
    if cfg!(target_arch = "x86_64") {
        for suffix in ["_v3", "_v4"] {
            let member = format!("tiny{suffix}.o");
            assert!(lib.windows(member.len()).any(|w| w == member.as_bytes()));
            for k in &tiny.kernels {
                let needle = format!("{}{suffix}\0", k.symbol);
                assert!(lib.windows(needle.len()).any(|w| w == needle.as_bytes()));
            }
        }
    }

    // The artifact file names the executable and the hash.
    let text = std::fs::read_to_string(&tiny.source).unwrap();
    assert!(
        text.contains(&format!("{:#018x}u64", tiny.content_hash)),
        "{text}"
    );
    assert!(text.contains(&format!("{:?}", tiny.executable.display().to_string())));

    let lines = &artifacts.cargo_lines;
    for want in [
        format!("cargo:rustc-link-search=native={}", out.display()),
        "cargo:rustc-link-lib=static=model".to_string(),
        format!("cargo:rerun-if-changed={}", path.display()),
        "cargo:rustc-check-cfg=cfg(relax_aot, values(none(), \"tiny\", \"scale\"))".to_string(),
        "cargo:rustc-cfg=relax_aot".to_string(),
        "cargo:rustc-cfg=relax_aot=\"tiny\"".to_string(),
        format!("cargo:rustc-env=RELAX_AOT_tiny={}", tiny.source.display()),
    ] {
        assert!(lines.contains(&want), "{want} not in {lines:#?}");
    }
}

#[test]
fn one_module_name_in_two_libraries_of_a_build_is_an_error() {
    let dir = TempDir::new("claims");
    let path = model_file(
        &dir,
        "relax::module! { pub mod claimed { #[function] pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] { x } } }\n",
    );
    let mut b = Builder::new();
    b.file(&path).out_dir(dir.join("out"));
    b.try_compile("first").unwrap();
    // The same library again (a rerun) is fine; another one is not.
    b.try_compile("first").unwrap();
    let r = b.try_compile("second");
    assert!(
        matches!(&r, Err(AotError::Config(m)) if m.contains("already compiled into the library `first`")),
        "{r:?}"
    );
}

#[test]
fn native_cpu_code_is_an_opt_in_that_builds_too() {
    let dir = TempDir::new("native");
    let path = model_file(&dir, MLP);
    let artifacts = Builder::new()
        .file(&path)
        .out_dir(dir.join("out"))
        .native_cpu(true)
        .try_compile("native")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(artifacts.modules.len(), 2);
    assert!(!Builder::new().native_cpu, "generic by default");
}

/// `compile_ir_module` reports its stages in order and counts every
/// kernel of every CPU level as code generation compiles it.
#[test]
fn compiling_a_module_reports_monotone_progress() {
    use crate::transform::progress::testing::Recorder;
    use crate::transform::{BuildStage, PassContext};
    let module: crate::ir::IRModule = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((9, 5), dtype="float32"), w: R.Tensor((5, 3), dtype="float32")) -> R.Tensor((9, 3), dtype="float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            gv = R.nn.softmax(y, axis=1)
            R.output(gv)
        return gv
"#
    .parse()
    .unwrap();
    let recorder = std::sync::Arc::new(Recorder::default());
    let ctx = PassContext::new().with_progress(recorder.clone());
    let variants = cpu_variants(false);
    let compiled = compile_ir_module(&module, "relax_progress", &variants, &ctx).unwrap();
    let stages = recorder.check();
    assert_eq!(
        stages.iter().map(|s| s.0).collect::<Vec<_>>(),
        [BuildStage::Passes, BuildStage::Lower, BuildStage::Codegen]
    );
    let distinct: HashSet<&str> = compiled.kernels.iter().map(|k| k.symbol.as_str()).collect();
    assert_eq!(stages[2].1, distinct.len() * variants.len(), "{stages:?}");
}
