//! CPU levels: which of the code variants an ahead-of-time build emits the
//! running CPU can execute.
//!
//! `relax::aot::Builder` compiles every kernel for several x86-64
//! micro-architecture levels, named as LLVM (and the psABI) name them, and
//! the executable picks the best one this CPU supports when it loads, as
//! production BLAS libraries do:
//!
//! | level | what it adds (run-time check) |
//! |---|---|
//! | `generic` | the architecture's baseline (x86-64: SSE2); always runs |
//! | `x86-64-v3` | AVX2, FMA, BMI1/2, LZCNT, MOVBE, F16C |
//! | `x86-64-v4-vnni-bf16` | v4 + AVX512-VNNI (`vpdpbusd`, the int8 GEMM) and AVX512-BF16 (`vdpbf16ps`, the bfloat16 GEMM): AMD Zen 4, Intel Cooper Lake and Sapphire Rapids; LLVM's `x86-64-v4` with those two features |
//! | `x86-64-v4` | v3 + AVX-512 F, BW, CD, DQ, VL |
//! | `native` | the build machine's own CPU (`Builder::native_cpu`): the user chose it, so it is taken as supported |
//!
//! An unknown level is never supported.
//!
//! [`vendor`] tells who made the CPU: the schedules' register tile and
//! cache blocking are chosen per vendor (`Knobs::for_vendor` in
//! relax-core), since the same instructions are fastest in different
//! shapes on AMD's and Intel's cores. [`brand`] is its model name, for
//! reports.

/// The levels an x86-64 AOT build emits, best first.
pub const X86_64_LEVELS: &[&str] = &[V4_VNNI_BF16, "x86-64-v4", "x86-64-v3", "generic"];

/// The level of `x86-64-v4` with AVX512-VNNI and AVX512-BF16 (the integer
/// and bfloat16 dot-product instructions).
pub const V4_VNNI_BF16: &str = "x86-64-v4-vnni-bf16";

/// Whether this CPU can run code compiled for `level`.
pub fn supports(level: &str) -> bool {
    match level {
        "generic" | "native" => true,
        "x86-64-v3" => has_v3(),
        "x86-64-v4" => has_v3() && has_v4_extras(),
        V4_VNNI_BF16 => has_v3() && has_v4_extras() && has_vnni_bf16(),
        _ => false,
    }
}

/// The best of `levels` this CPU supports, if any.
pub fn best<'a>(levels: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    levels.into_iter().find(|l| supports(l))
}

/// Who made a CPU, from the vendor string of `cpuid` leaf 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// `AuthenticAMD`.
    Amd,
    /// `GenuineIntel`.
    Intel,
    /// Any other vendor, or a CPU that is not x86-64.
    Other,
}

/// Who made this CPU.
pub fn vendor() -> Vendor {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: leaf 0 of `cpuid` exists on every x86-64 CPU.
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut name = [0u8; 12];
        name[..4].copy_from_slice(&r.ebx.to_le_bytes());
        name[4..8].copy_from_slice(&r.edx.to_le_bytes());
        name[8..].copy_from_slice(&r.ecx.to_le_bytes());
        match &name {
            b"AuthenticAMD" => Vendor::Amd,
            b"GenuineIntel" => Vendor::Intel,
            _ => Vendor::Other,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vendor::Other
    }
}

/// The CPU's name as its maker gives it (`cpuid` leaves `0x8000_0002` to
/// `0x8000_0004`, what `/proc/cpuinfo` calls the model name), trimmed;
/// empty where the CPU has none or is not x86-64.
pub fn brand() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: leaf 0x8000_0000 exists on every x86-64 CPU; it gives
        // the highest extended leaf, checked before reading the others.
        #[allow(unused_unsafe)]
        let top = unsafe { __cpuid(0x8000_0000) }.eax;
        if top < 0x8000_0004 {
            return String::new();
        }
        let mut bytes = Vec::with_capacity(48);
        for leaf in 0x8000_0002u32..=0x8000_0004 {
            // SAFETY: the leaf is at most the highest extended leaf.
            #[allow(unused_unsafe)]
            let r = unsafe { __cpuid(leaf) };
            for word in [r.eax, r.ebx, r.ecx, r.edx] {
                bytes.extend_from_slice(&word.to_le_bytes());
            }
        }
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).trim().to_string()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        String::new()
    }
}

#[cfg(target_arch = "x86_64")]
fn has_v3() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("movbe")
        && std::arch::is_x86_feature_detected!("f16c")
}

#[cfg(target_arch = "x86_64")]
fn has_v4_extras() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512cd")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

#[cfg(target_arch = "x86_64")]
fn has_vnni_bf16() -> bool {
    std::arch::is_x86_feature_detected!("avx512vnni")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_v3() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn has_vnni_bf16() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn has_v4_extras() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_always_runs_and_unknown_levels_never() {
        assert!(supports("generic"));
        assert!(supports("native"));
        assert!(!supports("x86-64-v9"));
        assert_eq!(best(["nonsense", "generic"]), Some("generic"));
        assert_eq!(best(["nonsense"]), None);
    }

    #[test]
    fn levels_are_nested() {
        // A CPU with v4 has v3: the best level is never worse than v3 then.
        if supports(V4_VNNI_BF16) {
            assert!(supports("x86-64-v4"));
        }
        if supports("x86-64-v4") {
            assert!(supports("x86-64-v3"));
        }
        assert!(best(X86_64_LEVELS.iter().copied()).is_some());
    }

    #[test]
    fn the_brand_agrees_with_proc_cpuinfo() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let Some(model) = info
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).trim())
        else {
            return;
        };
        // The kernel squeezes runs of spaces; so does the comparison.
        let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(squeeze(&brand()), squeeze(model));
    }

    #[test]
    fn the_vendor_agrees_with_proc_cpuinfo() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let expected = match info
            .lines()
            .find_map(|l| l.strip_prefix("vendor_id"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).trim())
        {
            Some("AuthenticAMD") => Vendor::Amd,
            Some("GenuineIntel") => Vendor::Intel,
            _ => Vendor::Other,
        };
        assert_eq!(vendor(), expected);
    }
}
