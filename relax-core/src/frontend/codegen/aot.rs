//! The ahead-of-time hook of a generated module: where its executable comes
//! from.
//!
//! Every generated module holds its `relax::dsl::ExecutableCache` in a hidden inner
//! module `__relax_aot`, chosen by a cfg that `relax::aot::Builder` sets
//! from build.rs:
//!
//! ```text
//! #[allow(unexpected_cfgs)]            // the cfg is unknown in crates without AOT
//! pub mod __relax_aot {
//!     #[cfg(relax_aot = "mlp")]        // build.rs compiled the module `mlp`:
//!     pub static ARTIFACT: ::relax::dsl::AotArtifact = include!(env!("RELAX_AOT_mlp"));
//!     #[cfg(relax_aot = "mlp")]        // a stale artifact is a build error
//!     const _: () = assert!(ARTIFACT.content_hash == <artifact hash>, "…");
//!     #[cfg(relax_aot = "mlp")]
//!     pub static EXECUTABLE: ExecutableCache = ExecutableCache::with_aot(<hash>, &ARTIFACT);
//!     #[cfg(not(relax_aot = "mlp"))]   // otherwise: compiled on first call
//!     pub static EXECUTABLE: ExecutableCache = ExecutableCache::new(<hash>);
//! }
//! pub use self::__relax_aot::EXECUTABLE as __RELAX_EXECUTABLE;
//! ```
//!
//! 1. The cfg and the environment variable are keyed by the module's name
//!    ([`aot_key`]): the Builder prints `cargo:rustc-cfg=relax_aot="mlp"`
//!    and `cargo:rustc-env=RELAX_AOT_mlp=<OUT_DIR>/<lib>_mlp.rs`, a file
//!    holding the `AotArtifact` expression (the serialized executable, the
//!    kernels' `extern "C"` declarations and their table).
//! 2. Both sides hash the same thing, [`artifact_hash`]: the checked IR
//!    printed as TVMScript, its tensor constants (the weights of an
//!    imported model) not as text but by dtype, shape and a checksum of
//!    their bytes, so a weight change changes the hash without a model's
//!    weights being printed. The token text a proc macro sees is printed by
//!    rustc and differs in spacing and escapes from the text proc-macro2
//!    prints for the same tokens read from a file in build.rs, so
//!    [`Lowered::content_hash`](super::super::Lowered::content_hash) cannot
//!    be recomputed there; the IR can, and it is exactly what the artifact
//!    was compiled from. A module edited after build.rs ran, or another
//!    module of the same name, fails the `const` assertion: `cargo build`
//!    stops instead of running stale code.
//! 3. `#[allow(unexpected_cfgs)]` must be on an enclosing item: rustc checks
//!    an item's `cfg` before it reads the item's own lint attributes.

use super::super::Lowered;
use crate::fnv::Fnv1a;
use crate::ir::IRModule;
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use std::hash::Hasher;

/// The hash an AOT artifact is checked against, the same in the proc
/// macro and in build.rs: FNV-1a (64-bit) over the module's TVMScript text
/// up to its `metadata` section, then, for each tensor of that section in
/// order, its dtype, its shape and the runtime's
/// [`checksum`](relax_runtime::package::checksum) of its bytes (several
/// GB/s, where printing the elements as text would take seconds for a
/// model's weights).
pub fn artifact_hash(module: &IRModule) -> u64 {
    let (text, constants) = crate::printer::module_text_and_constants(module);
    let mut h = Fnv1a::default();
    h.write(text.as_bytes());
    for t in &constants {
        h.write(t.dtype().to_string().as_bytes());
        h.write(&(t.ndim() as u64).to_le_bytes());
        for &d in t.shape() {
            h.write(&d.to_le_bytes());
        }
        h.write(&relax_runtime::package::checksum(t.as_bytes()).to_le_bytes());
    }
    h.finish()
}

/// The key of a module's AOT artifact: the Rust module's name without
/// `r#`. It is the value of the `relax_aot` cfg and the suffix of the
/// `RELAX_AOT_<key>` environment variable.
pub fn aot_key(mod_name: &syn::Ident) -> String {
    let name = mod_name.to_string();
    name.strip_prefix("r#").map(str::to_string).unwrap_or(name)
}

/// The environment variable naming the artifact file of the module `key`.
pub fn aot_env_var(key: &str) -> String {
    format!("RELAX_AOT_{key}")
}

/// The executable cache and its AOT hook (see the module docs).
pub(super) fn cache_tokens(lowered: &Lowered) -> TokenStream {
    let hash = Literal::u64_suffixed(lowered.content_hash);
    let artifact_hash = Literal::u64_suffixed(artifact_hash(&lowered.module));
    let key = aot_key(&lowered.mod_name);
    let env = aot_env_var(&key);
    let stale = format!(
        "relax: the AOT artifact of module `{key}` is stale: it was compiled from other source \
         than this module (edited since build.rs ran, or another module of the same name); \
         rebuild so that build.rs compiles this module"
    );
    let jit = if lowered.schedules.is_empty() {
        quote!(::relax::dsl::ExecutableCache::new(#hash))
    } else {
        quote!(::relax::dsl::ExecutableCache::with_schedules(#hash, super::__RELAX_SCHEDULES))
    };
    quote! {
        /// Where this module's executable comes from: the ahead-of-time
        /// artifact when the crate's build.rs compiled it with
        /// `relax::aot::Builder`, else compiled on first call.
        #[doc(hidden)]
        #[allow(unexpected_cfgs)]
        pub mod __relax_aot {
            /// The artifact build.rs compiled from this module.
            #[cfg(relax_aot = #key)]
            pub static ARTIFACT: ::relax::dsl::AotArtifact = ::std::include!(::std::env!(#env));

            #[cfg(relax_aot = #key)]
            const _: () = ::std::assert!(ARTIFACT.content_hash == #artifact_hash, #stale);

            /// The module's executable, loaded from the artifact on first call.
            #[cfg(relax_aot = #key)]
            pub static EXECUTABLE: ::relax::dsl::ExecutableCache =
                ::relax::dsl::ExecutableCache::with_aot(#hash, &ARTIFACT);

            /// The module compiled for this process, on first call; shared by the wrappers.
            #[cfg(not(relax_aot = #key))]
            pub static EXECUTABLE: ::relax::dsl::ExecutableCache = #jit;
        }

        #[doc(hidden)]
        pub use self::__relax_aot::EXECUTABLE as __RELAX_EXECUTABLE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::lower_module_macro;
    use std::str::FromStr;

    fn lower(src: &str) -> Lowered {
        let tokens = TokenStream::from_str(src).unwrap();
        lower_module_macro(tokens).unwrap_or_else(|e| panic!("{}", e[0].message))
    }

    const SRC: &str = "/// Docs.\npub mod m { #[function] pub fn f(x: Tensor![(n, 2), f32]) -> Tensor![(n, 2), f32] { let y = R::add(x, 1.5); y } }";

    #[test]
    fn the_artifact_hash_ignores_layout_and_follows_the_ir() {
        let a = artifact_hash(&lower(SRC).module);
        // Other spacing and line breaks: the same IR, the same hash.
        let respaced = SRC.replace(' ', "  ").replace('{', "{\n");
        assert_eq!(a, artifact_hash(&lower(&respaced).module));
        // A change of the IR changes it (a constant, a shape); the
        // module's doc comment is not part of the IR.
        for (from, to) in [
            ("1.5", "2.5"),
            ("(n, 2)", "(n, 3)"),
            ("Docs.", "Other docs."),
        ] {
            let changed = SRC.replace(from, to);
            let b = artifact_hash(&lower(&changed).module);
            if from == "Docs." {
                assert_eq!(a, b, "{from} -> {to}");
            } else {
                assert_ne!(a, b, "{from} -> {to}");
            }
        }
    }

    #[test]
    fn the_artifact_hash_follows_every_weight_byte_and_shape() {
        // An imported model's weights: tensor constants in the metadata
        // section, hashed by their bytes rather than printed.
        let module = |weight: &str| -> IRModule {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="float32")):
        w = R.const({weight}, "float32")
        gv: R.Tensor((2, 2), dtype="float32") = R.add(x, x)
        return (gv, w)
"#
            )
            .parse()
            .unwrap()
        };
        let a = artifact_hash(&module("[[1.0, 2.0], [3.0, 4.0]]"));
        assert_eq!(a, artifact_hash(&module("[[1.0, 2.0], [3.0, 4.0]]")));
        // One element, or only the shape of the same bytes, changed.
        for other in ["[[1.0, 2.0], [3.0, 4.5]]", "[[1.0, 2.0, 3.0, 4.0]]"] {
            assert_ne!(a, artifact_hash(&module(other)), "{other}");
        }
        // The text hashed holds no element of the weight.
        let (text, constants) =
            crate::printer::module_text_and_constants(&module("[[1.0, 2.0], [3.0, 4.5]]"));
        assert!(!text.contains("4.5"), "{text}");
        assert_eq!(constants.len(), 1);
    }

    #[test]
    fn the_hook_is_keyed_by_the_module_name_and_checks_the_hash() {
        let lowered = lower(SRC);
        let text = cache_tokens(&lowered).to_string();
        assert!(
            text.contains("# [allow (unexpected_cfgs)] pub mod __relax_aot"),
            "{text}"
        );
        assert_eq!(
            text.matches("# [cfg (relax_aot = \"m\")]").count(),
            3,
            "{text}"
        );
        assert!(text.contains("# [cfg (not (relax_aot = \"m\"))]"), "{text}");
        assert!(text.contains(":: std :: env ! (\"RELAX_AOT_m\")"), "{text}");
        let hash = format!(
            "ARTIFACT . content_hash == {}u64",
            artifact_hash(&lowered.module)
        );
        assert!(text.contains(&hash), "{text}");
        assert!(text.contains("is stale"), "{text}");
    }

    #[test]
    fn raw_module_names_key_without_the_prefix() {
        let ident = syn::Ident::new_raw("type", proc_macro2::Span::call_site());
        assert_eq!(aot_key(&ident), "type");
        assert_eq!(aot_env_var("type"), "RELAX_AOT_type");
    }
}
