use super::*;
use crate::ir::IRModule;

const SMALL: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32")) -> R.Tensor(("n", 2), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((n, 2), dtype="float32") = R.add(x, R.const(1.5, "float32"))
            R.output(gv)
        return gv
"#;

#[test]
fn dump() {
    let m: IRModule = SMALL.parse().unwrap();
    println!("{}", quote_module(&m));
}

fn lowered_of(name: &str, m: IRModule) -> Lowered {
    let functions = m
        .functions()
        .filter_map(|(gv, f)| f.as_relax().map(|f| (gv, f)))
        .map(|(gv, f)| crate::frontend::FunctionInfo {
            name: gv.name_hint().to_string(),
            public: f.global_symbol().is_some(),
            params: f
                .params
                .iter()
                .map(|p| (p.name_hint().to_string(), p.struct_info().cloned().unwrap()))
                .collect(),
            ret: f.ret_struct_info.clone(),
            doc: Some(format!("Doc of {}.", gv.name_hint())),
            span: proc_macro2::Span::call_site(),
        })
        .collect();
    Lowered {
        mod_name: syn::Ident::new(name, proc_macro2::Span::call_site()),
        vis: syn::parse_quote!(pub),
        doc: Some(format!("Module {name}.")),
        module: m,
        functions,
        content_hash: 7,
    }
}

#[test]
#[ignore]
fn dump_all() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let mut out = String::new();
    let mut table = String::new();
    for (i, p) in names.iter().enumerate() {
        let text = std::fs::read_to_string(p).unwrap();
        let m: IRModule = text.parse().unwrap();
        let toks = quote_module(&m);
        out.push_str(&format!("pub fn case_{i}() -> ::relax::ir::IRModule {{ {toks} }}\n"));
        table.push_str(&format!("({:?}, case_{i} as fn() -> ::relax::ir::IRModule),", p.display().to_string()));
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        out.push_str(&module_tokens(&lowered_of(&format!("m_{stem}"), m)).to_string());
        out.push('\n');
    }
    out.push_str(&format!("pub const CASES: &[(&str, fn() -> ::relax::ir::IRModule)] = &[{table}];\n"));
    std::fs::write("/tmp/gen_scratch.rs", out).unwrap();
}
