//! Compiled packages: an executable together with the machine code of its
//! native kernels, the file `relax compile` writes (`model.relax`) and
//! `relax run` / `relax bench` load without compiling.
//!
//! 1. The bytes are little-endian, as in [`crate::serialize`]: the magic
//!    `RELAXPKG`, a `u32` format version ([`FORMAT_VERSION`]), then the
//!    header strings: the architecture and OS the code is for
//!    (`std::env::consts::ARCH`/`OS`), the CPU level it was compiled for
//!    ([`crate::cpu`]: `x86-64-v4-vnni-bf16`, `x86-64-v4`, `x86-64-v3`,
//!    `generic`), the model's
//!    input and output names, and the kernel table (each native kernel's
//!    name in the executable and its symbol in the library). Then, each
//!    section a `u64` length, the bytes and a `u64` [`checksum`] of them:
//!    the serialized executable ([`Executable::to_bytes`]) with its tensor
//!    constants (the model's weights) taken out (`weights.rs`); the weight
//!    table (a `u64` count, then each weight's constant index, dtype
//!    string, rank and dims, and offset and length in the weight data);
//!    then the weight data: its `u64` length, zeros up to a multiple of 64
//!    bytes from the file's start, the weights (each at a multiple of 64
//!    within the data) and a `u64` checksum; last the shared library (ELF
//!    on Linux) defining the kernels. Nothing follows.
//! 2. Decoding ([`PackageRef::parse`], in place; [`Package::from_bytes`])
//!    trusts nothing: every length is compared with the bytes left before
//!    anything is allocated, strings must be UTF-8, every weight must lie
//!    inside the weight data and hold exactly its shape's elements, and
//!    the checksums of the executable and the library must match, so a
//!    truncated or corrupted file is an [`Error::Deserialize`] before any
//!    of it is used. The weights' checksum is checked by
//!    [`PackageRef::verify_weights`], which [`Package::from_bytes`] and
//!    [`PackageRef::load`] call; [`open`] does not (see 4).
//! 3. Loading ([`PackageRef::load`], Unix) first checks that the running
//!    machine is the architecture and OS of the code and that its CPU has
//!    the recorded level ([`crate::cpu::supports`]), then decodes the
//!    executable, puts the weights back into its constant pool, writes
//!    the library to a new private file (mode 0600,
//!    created exclusively in the temporary directory), `dlopen`s it and
//!    removes the file, points the library's `relax_parallel_for`
//!    trampoline at this runtime's thread pool
//!    ([`crate::parallel::relax_parallel_for`]) through its
//!    `relax_set_parallel_for`, and looks every kernel up by symbol. A
//!    kernel the executable calls but the table lacks is an error.
//! 4. [`open`] loads a package file in milliseconds whatever the size of
//!    its weights: it maps the file read-only and wraps each weight in
//!    place ([`Tensor::from_external`]; 64-byte aligned, as the format
//!    puts them), so no weight byte is read before a kernel reads it. It
//!    therefore does not check the weights' checksum (that would read
//!    every page of them); a damaged weight gives wrong numbers, never an
//!    access out of bounds, as every weight's extent is checked.
//!
//! A package is native code: load only files you would run as programs.
//! The checksums detect damage, not tampering.

mod open;
mod weights;

pub use open::{open, Opened};
pub use weights::Weight;

use crate::data_type::DataType;
use crate::error::Error;
use crate::executable::Executable;
use crate::tensor::Tensor;

/// The first bytes of every package.
pub const MAGIC: &[u8; 8] = b"RELAXPKG";

/// The format version [`Package::to_bytes`] writes, and the only one
/// [`Package::from_bytes`] reads (version 2 took the weights out of the
/// executable).
pub const FORMAT_VERSION: u32 = 2;

/// The symbol of the library function that sets the target of its
/// `relax_parallel_for` trampoline (`void relax_set_parallel_for(void
/// (*)(int64_t, body, void *))`).
pub const SET_PARALLEL_FOR: &str = "relax_set_parallel_for";

/// The symbol of the library function that sets the targets of its
/// `relax_workspace_alloc`/`_free` trampolines (the kernels' scratch,
/// [`crate::workspace`]). A library linked before it existed has none and
/// its kernels call `malloc`/`free` themselves.
pub const SET_WORKSPACE: &str = "relax_set_workspace";

/// The alignment of the weight data in the file, and of each weight in it.
pub const WEIGHT_ALIGN: usize = 64;

/// A compiled model. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Package {
    /// The architecture the code is for (`x86_64`).
    pub arch: String,
    /// The operating system the library is for (`linux`).
    pub os: String,
    /// The CPU level the kernels were compiled for ([`crate::cpu`]).
    pub cpu: String,
    /// The name of each input of `main` in the model file (an ONNX graph
    /// input's name).
    pub input_names: Vec<String>,
    /// The name of each output of `main` in the model file.
    pub output_names: Vec<String>,
    /// Each native kernel: its name in the executable and its symbol in
    /// the library.
    pub kernels: Vec<(String, String)>,
    /// The serialized executable, each constant of [`Package::weights`]
    /// replaced by a placeholder ([`Package::split_executable`]).
    pub executable: Vec<u8>,
    /// The executable's tensor constants, by their index in its constant
    /// pool.
    pub weights: Vec<Weight>,
    /// The shared library defining the kernels.
    pub library: Vec<u8>,
}

/// A 64-bit checksum of `bytes`: four FNV-1a-style lanes over the 8-byte
/// words of each 32-byte block (independent, so the multiplies overlap),
/// then the tail bytes, the lanes and the length folded into one. Fast
/// enough (several GB/s) to check a model's weights at every load.
pub fn checksum(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let word = |w: &[u8]| {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        u64::from_le_bytes(b)
    };
    let mix = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(PRIME);
        h ^ (h >> 29)
    };
    let mut lanes: [u64; 4] = [
        0xcbf2_9ce4_8422_2325,
        0x8422_2325_cbf2_9ce4,
        0x9e37_79b9_7f4a_7c15,
        0x7f4a_7c15_9e37_79b9,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, word(w));
        }
    }
    let mut h = lanes[0];
    for &lane in &lanes[1..] {
        h = mix(h, lane);
    }
    for &b in blocks.remainder() {
        h = mix(h, u64::from(b));
    }
    mix(h, bytes.len() as u64)
}

/// A package read in place: the header and the weight table decoded, the
/// sections borrowed from the bytes (the executable and the library
/// checked by their checksums). See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageRef<'a> {
    /// See [`Package::arch`].
    pub arch: &'a str,
    /// See [`Package::os`].
    pub os: &'a str,
    /// See [`Package::cpu`].
    pub cpu: &'a str,
    /// See [`Package::input_names`].
    pub input_names: Vec<String>,
    /// See [`Package::output_names`].
    pub output_names: Vec<String>,
    /// See [`Package::kernels`].
    pub kernels: Vec<(String, String)>,
    /// The serialized executable (see [`Package::executable`]).
    pub executable: &'a [u8],
    /// The weights, their bytes borrowed.
    pub weights: Vec<WeightRef<'a>>,
    /// The weight data all weights lie in, and its recorded checksum.
    weight_data: (&'a [u8], u64),
    /// The shared library.
    pub library: &'a [u8],
}

/// A weight of a [`PackageRef`]: where its bytes are and what they hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightRef<'a> {
    /// Its index in the executable's constant pool.
    pub constant: usize,
    /// Its dtype.
    pub dtype: DataType,
    /// Its shape.
    pub shape: Vec<i64>,
    /// Its bytes (exactly the shape's elements).
    pub bytes: &'a [u8],
    /// Where they start in the bytes the package was parsed from.
    pub offset: usize,
}

impl WeightRef<'_> {
    /// A tensor holding a copy of the weight's bytes.
    pub fn to_tensor(&self) -> Result<Tensor, Error> {
        Tensor::from_bytes(self.dtype, &self.shape, self.bytes).map_err(Error::from)
    }
}

impl Package {
    /// The package as bytes. See the module docs.
    pub fn to_bytes(&self) -> Vec<u8> {
        let data: usize = self
            .weights
            .iter()
            .map(|w| w.tensor.as_bytes().len() + WEIGHT_ALIGN)
            .sum();
        let mut out = Vec::with_capacity(self.executable.len() + self.library.len() + data + 4096);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let u64 = |out: &mut Vec<u8>, n: u64| out.extend_from_slice(&n.to_le_bytes());
        let str = |out: &mut Vec<u8>, s: &str| {
            u64(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        };
        str(&mut out, &self.arch);
        str(&mut out, &self.os);
        str(&mut out, &self.cpu);
        for names in [&self.input_names, &self.output_names] {
            u64(&mut out, names.len() as u64);
            for n in names {
                str(&mut out, n);
            }
        }
        u64(&mut out, self.kernels.len() as u64);
        for (name, symbol) in &self.kernels {
            str(&mut out, name);
            str(&mut out, symbol);
        }
        let section = |out: &mut Vec<u8>, bytes: &[u8]| {
            u64(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
            u64(out, checksum(bytes));
        };
        section(&mut out, &self.executable);
        // The weight table, each weight at a multiple of WEIGHT_ALIGN of
        // the data.
        let mut offsets = Vec::with_capacity(self.weights.len());
        let mut data_len = 0usize;
        for w in &self.weights {
            data_len = data_len.next_multiple_of(WEIGHT_ALIGN);
            offsets.push(data_len);
            data_len += w.tensor.as_bytes().len();
        }
        let mut table = Vec::new();
        u64(&mut table, self.weights.len() as u64);
        for (w, &offset) in self.weights.iter().zip(&offsets) {
            u64(&mut table, w.constant as u64);
            str(&mut table, &w.tensor.dtype().to_string());
            u64(&mut table, w.tensor.ndim() as u64);
            for &d in w.tensor.shape() {
                table.extend_from_slice(&d.to_le_bytes());
            }
            u64(&mut table, offset as u64);
            u64(&mut table, w.tensor.as_bytes().len() as u64);
        }
        section(&mut out, &table);
        u64(&mut out, data_len as u64);
        out.resize(out.len().next_multiple_of(WEIGHT_ALIGN), 0);
        let start = out.len();
        for (w, &offset) in self.weights.iter().zip(&offsets) {
            out.resize(start + offset, 0);
            out.extend_from_slice(w.tensor.as_bytes());
        }
        out.resize(start + data_len, 0);
        let sum = checksum(&out[start..]);
        u64(&mut out, sum);
        section(&mut out, &self.library);
        out
    }

    /// A package from bytes written by [`Package::to_bytes`]; malformed,
    /// truncated or damaged input (the weights' checksum included) is an
    /// [`Error::Deserialize`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Package, Error> {
        let p = PackageRef::parse(bytes)?;
        p.verify_weights()?;
        Ok(Package {
            arch: p.arch.into(),
            os: p.os.into(),
            cpu: p.cpu.into(),
            weights: p
                .weights
                .iter()
                .map(|w| {
                    Ok(Weight {
                        constant: w.constant,
                        tensor: w.to_tensor()?,
                    })
                })
                .collect::<Result<_, Error>>()?,
            input_names: p.input_names,
            output_names: p.output_names,
            kernels: p.kernels,
            executable: p.executable.to_vec(),
            library: p.library.to_vec(),
        })
    }

    /// See [`PackageRef::check_host`].
    pub fn check_host(&self) -> Result<(), Error> {
        check_host(&self.arch, &self.os, &self.cpu)
    }

    /// The executable with its weights and its kernels; see
    /// [`PackageRef::load`].
    pub fn load(&self) -> Result<Executable, Error> {
        self.check_host()?;
        let weights = self.weights.iter().map(|w| Ok(w.clone()));
        assemble(&self.executable, weights, &self.kernels, &self.library)
    }
}

impl<'a> PackageRef<'a> {
    /// The package in `bytes` (written by [`Package::to_bytes`]); malformed,
    /// truncated or damaged input is an [`Error::Deserialize`] (the
    /// weights' checksum aside: [`PackageRef::verify_weights`]).
    pub fn parse(bytes: &'a [u8]) -> Result<PackageRef<'a>, Error> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(MAGIC.len(), "the magic number")? != MAGIC {
            return Err(Error::Deserialize(
                "the file does not start with the magic number of a compiled relax-rs package (`relax compile` writes them)"
                    .into(),
            ));
        }
        let version = r.u32("the format version")?;
        if version != FORMAT_VERSION {
            return Err(Error::Deserialize(format!(
                "package format version {version} is not supported (this build reads version {FORMAT_VERSION}); compile the model again"
            )));
        }
        let arch = r.str("the architecture")?;
        let os = r.str("the operating system")?;
        let cpu = r.str("the CPU level")?;
        let input_names = r.strs("the input names")?;
        let output_names = r.strs("the output names")?;
        let count = r.len(16, "the kernel table")?;
        let mut kernels = Vec::with_capacity(count);
        for _ in 0..count {
            kernels.push((
                r.str("a kernel name")?.to_string(),
                r.str("a kernel symbol")?.to_string(),
            ));
        }
        let executable = r.section("the executable")?;
        let (weights, weight_data) = weights::read_table(&mut r)?;
        let library = r.section("the library")?;
        if r.pos != bytes.len() {
            return Err(Error::Deserialize(format!(
                "{} unexpected bytes after the end of the package",
                bytes.len() - r.pos
            )));
        }
        Ok(PackageRef {
            arch,
            os,
            cpu,
            input_names,
            output_names,
            kernels,
            executable,
            weights,
            weight_data,
            library,
        })
    }

    /// Fails, saying what the package needs, unless this machine can run
    /// its code: the same architecture and OS, and a CPU with its level.
    pub fn check_host(&self) -> Result<(), Error> {
        check_host(self.arch, self.os, self.cpu)
    }

    /// Fails unless the weight data matches its checksum (which reads
    /// every byte of it).
    pub fn verify_weights(&self) -> Result<(), Error> {
        let (data, sum) = self.weight_data;
        if checksum(data) != sum {
            return Err(Error::Deserialize(
                "the checksum of the weights does not match: the package is damaged".into(),
            ));
        }
        Ok(())
    }

    /// The executable with its weights (copied, after
    /// [`PackageRef::verify_weights`]) and its kernels loaded from the
    /// library. See the module docs; [`open`] loads a file without
    /// copying.
    pub fn load(&self) -> Result<Executable, Error> {
        self.check_host()?;
        self.verify_weights()?;
        let weights = self.weights.iter().map(|w| {
            Ok(Weight {
                constant: w.constant,
                tensor: w.to_tensor()?,
            })
        });
        assemble(self.executable, weights, &self.kernels, self.library)
    }
}

/// Fails unless this machine is `arch` on `os` with a CPU of level `cpu`.
fn check_host(package_arch: &str, package_os: &str, cpu: &str) -> Result<(), Error> {
    let (arch, os) = (std::env::consts::ARCH, std::env::consts::OS);
    if package_arch != arch || package_os != os {
        return Err(Error::Unsupported(format!(
            "the package was compiled for {package_arch} on {package_os}, and this machine is {arch} on {os}"
        )));
    }
    if !crate::cpu::supports(cpu) {
        return Err(Error::Unsupported(format!(
            "the package was compiled for the CPU level `{cpu}`, which this CPU lacks; compile the model on this machine (relax compile)"
        )));
    }
    Ok(())
}

/// The executable of `executable` with `weights` put back into its
/// constant pool and its kernels loaded from `library` (the host checked
/// already).
#[cfg(unix)]
fn assemble(
    executable: &[u8],
    weights: impl Iterator<Item = Result<Weight, Error>>,
    kernels: &[(String, String)],
    library: &[u8],
) -> Result<Executable, Error> {
    let mut exec = Executable::from_bytes(executable)?;
    weights::place(&mut exec, weights)?;
    if let Some(missing) = exec
        .natives
        .iter()
        .find(|n| !kernels.iter().any(|(k, _)| k == *n))
    {
        return Err(Error::Deserialize(format!(
            "the package's kernel table has no kernel `{missing}`, which its executable calls"
        )));
    }
    let library = dynamic::load(library, kernels)?;
    Ok(exec.with_library(library))
}

/// Loading needs `dlopen`.
#[cfg(not(unix))]
fn assemble(
    _: &[u8],
    _: impl Iterator<Item = Result<Weight, Error>>,
    _: &[(String, String)],
    _: &[u8],
) -> Result<Executable, Error> {
    Err(Error::Unsupported(
        "loading a compiled package needs a Unix dynamic loader".into(),
    ))
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let left = self.bytes.len() - self.pos;
        if n > left {
            return Err(Error::Deserialize(format!(
                "the package is truncated: {what} at byte {} needs {n} bytes, and {left} are left",
                self.pos
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }

    /// A length of items of at least `min_size` bytes each, checked
    /// against the bytes left.
    fn len(&mut self, min_size: usize, what: &str) -> Result<usize, Error> {
        let at = self.pos;
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(min_size as u64) > left {
            return Err(Error::Deserialize(format!(
                "the package is truncated or damaged: {what} at byte {at} has length {n}, and {left} bytes are left"
            )));
        }
        Ok(n as usize)
    }

    fn str(&mut self, what: &str) -> Result<&'a str, Error> {
        let n = self.len(1, what)?;
        let at = self.pos;
        let bytes = self.take(n, what)?;
        std::str::from_utf8(bytes).map_err(|_| {
            Error::Deserialize(format!(
                "{what} at byte {at} is not UTF-8: the package is damaged"
            ))
        })
    }

    fn strs(&mut self, what: &str) -> Result<Vec<String>, Error> {
        let n = self.len(8, what)?;
        (0..n).map(|_| Ok(self.str(what)?.to_string())).collect()
    }

    fn section(&mut self, what: &str) -> Result<&'a [u8], Error> {
        let n = self.len(1, what)?;
        let bytes = self.take(n, what)?;
        let sum = self.u64(what)?;
        if checksum(bytes) != sum {
            return Err(Error::Deserialize(format!(
                "the checksum of {what} does not match: the package is damaged"
            )));
        }
        Ok(bytes)
    }
}

#[cfg(unix)]
mod dynamic;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn sample() -> Package {
        let exec = Executable {
            constants: vec![
                Value::Tensor(Tensor::from_vec(&[2, 3], vec![1.5f32; 6]).unwrap()),
                Value::Int(7),
                Value::Tensor(Tensor::from_vec(&[5], vec![-3i8, 1, 2, 3, 4]).unwrap()),
                Value::Tensor(Tensor::from_vec(&[3], vec![9i64, 8, 7]).unwrap()),
            ],
            ..Executable::default()
        };
        let (executable, weights) = Package::split_executable(&exec);
        Package {
            arch: std::env::consts::ARCH.into(),
            os: std::env::consts::OS.into(),
            cpu: "generic".into(),
            input_names: vec!["gpu_0/data_0".into()],
            output_names: vec!["logits".into(), "".into()],
            kernels: vec![("add".into(), "relax_pkg_add".into())],
            executable,
            weights,
            library: b"\x7fELF not really".to_vec(),
        }
    }

    #[test]
    fn a_package_round_trips() {
        let p = sample();
        assert_eq!(Package::from_bytes(&p.to_bytes()).unwrap(), p);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample().to_bytes();
        for n in 0..bytes.len() {
            let err = Package::from_bytes(&bytes[..n]).unwrap_err();
            assert!(matches!(err, Error::Deserialize(_)), "{n}: {err}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Package::from_bytes(&longer).is_err());
    }

    #[test]
    fn the_weights_leave_the_executable_and_come_back_aligned() {
        let p = sample();
        assert_eq!(
            p.weights.iter().map(|w| w.constant).collect::<Vec<_>>(),
            [0, 2, 3]
        );
        let rest = Executable::from_bytes(&p.executable).unwrap();
        assert_eq!(rest.constants[1], Value::Int(7));
        assert!(rest
            .constants
            .iter()
            .all(|c| !matches!(c, Value::Tensor(_))));
        let bytes = p.to_bytes();
        let parsed = PackageRef::parse(&bytes).unwrap();
        parsed.verify_weights().unwrap();
        for (w, original) in parsed.weights.iter().zip(&p.weights) {
            assert_eq!(w.offset % WEIGHT_ALIGN, 0, "{w:?}");
            assert_eq!(&bytes[w.offset..w.offset + w.bytes.len()], w.bytes);
            assert_eq!(w.to_tensor().unwrap(), original.tensor);
        }
        // Put back, the pool is the original's.
        let mut exec = rest;
        weights::place(&mut exec, p.weights.iter().cloned().map(Ok)).unwrap();
        assert_eq!(
            exec.constants[0],
            Value::Tensor(p.weights[0].tensor.clone())
        );
        assert_eq!(
            exec.constants[3],
            Value::Tensor(p.weights[2].tensor.clone())
        );
    }

    #[test]
    fn weights_that_do_not_fit_their_slots_are_refused() {
        let p = sample();
        let rest = || Executable::from_bytes(&p.executable).unwrap();
        // A weight short: its placeholder stays.
        let err = weights::place(&mut rest(), p.weights[1..].iter().cloned().map(Ok)).unwrap_err();
        assert!(err.to_string().contains("constant 0"), "{err}");
        // A weight on a constant that is no placeholder, or out of range.
        for (constant, needle) in [(1, "not a weight's placeholder"), (9, "has 4 constants")] {
            let mut w = p.weights.clone();
            w[0].constant = constant;
            let err = weights::place(&mut rest(), w.into_iter().map(Ok)).unwrap_err();
            assert!(err.to_string().contains(needle), "{err}");
        }
    }

    #[test]
    fn a_changed_weight_byte_fails_its_checksum_only_when_verified() {
        let p = sample();
        let mut bytes = p.to_bytes();
        let at = PackageRef::parse(&bytes).unwrap().weights[1].offset;
        bytes[at] ^= 1;
        let parsed = PackageRef::parse(&bytes).unwrap();
        let err = parsed.verify_weights().unwrap_err();
        assert!(err.to_string().contains("checksum of the weights"), "{err}");
        assert!(Package::from_bytes(&bytes).is_err());
        assert!(parsed.load().unwrap_err().to_string().contains("checksum"));
    }

    #[test]
    fn a_changed_byte_is_an_error_never_a_panic() {
        let p = sample();
        let bytes = p.to_bytes();
        // Everything from the executable's length on is covered by a
        // checksum, a length or the padding check.
        let header = bytes
            .windows(p.executable.len())
            .position(|w| w == p.executable.as_slice())
            .unwrap()
            - 8;
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            let result = Package::from_bytes(&b);
            // Header strings may change into other valid strings; the
            // sections are covered by their checksums.
            if i >= header {
                assert!(result.is_err(), "byte {i}");
            }
        }
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        let err = Package::from_bytes(&bytes).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
    }

    #[test]
    fn another_version_or_magic_is_refused() {
        let mut bytes = sample().to_bytes();
        bytes[8] = 9;
        let err = Package::from_bytes(&bytes).unwrap_err();
        assert!(err.to_string().contains("version 9"), "{err}");
        bytes[0] = b'X';
        let err = Package::from_bytes(&bytes).unwrap_err();
        assert!(err.to_string().contains("magic"), "{err}");
    }

    #[test]
    fn a_cpu_level_this_machine_lacks_is_refused() {
        let mut p = sample();
        assert!(p.check_host().is_ok());
        p.cpu = "x86-64-v9".into();
        let err = p.check_host().unwrap_err();
        assert!(err.to_string().contains("`x86-64-v9`"), "{err}");
        let err = p.load().unwrap_err();
        assert!(err.to_string().contains("lacks"), "{err}");
        let mut p = sample();
        p.arch = "sparc".into();
        assert!(p.check_host().unwrap_err().to_string().contains("sparc"));
    }

    #[test]
    fn a_library_that_does_not_load_is_an_error() {
        // The executable calls no kernel, but the bytes are no ELF file.
        let err = sample().load().unwrap_err();
        assert!(err.to_string().contains("cannot load"), "{err}");
    }

    #[test]
    fn open_reads_a_file_through_its_checks() {
        let dir = std::env::temp_dir().join(format!("relax-package-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            match open(&path) {
                Ok(_) => panic!("{name} opened"),
                Err(e) => e.to_string(),
            }
        };
        let bytes = sample().to_bytes();
        assert!(err("empty.relax", &[]).contains("truncated"));
        assert!(err("short.relax", &bytes[..bytes.len() - 9]).contains("truncated"));
        // The weights wrapped, the (fake) library is what fails.
        assert!(err("fake-library.relax", &bytes).contains("cannot load the package's library"));
        let missing = open(&dir.join("missing.relax")).err().unwrap();
        assert!(missing.to_string().contains("cannot open"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_checksum_sees_every_byte_and_the_length() {
        let a = vec![0u8; 64];
        let mut b = a.clone();
        for i in 0..64 {
            b[i] = 1;
            assert_ne!(checksum(&a), checksum(&b), "{i}");
            b[i] = 0;
        }
        assert_ne!(checksum(&a), checksum(&a[..63]));
        assert_ne!(checksum(&[]), checksum(&[0]));
    }
}
