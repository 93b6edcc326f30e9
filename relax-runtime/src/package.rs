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
//!    name in the executable and its symbol in the library). Then two
//!    sections, each a `u64` length, the bytes and a `u64`
//!    [`checksum`] of them: the serialized executable
//!    ([`Executable::to_bytes`]) and the shared library (ELF on Linux)
//!    defining the kernels. Nothing follows.
//! 2. Decoding ([`PackageRef::parse`], in place; [`Package::from_bytes`])
//!    trusts nothing: every length is
//!    compared with the bytes left before anything is allocated, strings
//!    must be UTF-8, and both checksums must match, so a truncated or
//!    corrupted file is an [`Error::Deserialize`] before any of it is used.
//! 3. Loading ([`PackageRef::load`], Unix) first checks that the running
//!    machine is the architecture and OS of the code and that its CPU has
//!    the recorded level ([`crate::cpu::supports`]), then decodes the
//!    executable, writes the library to a new private file (mode 0600,
//!    created exclusively in the temporary directory), `dlopen`s it and
//!    removes the file, points the library's `relax_parallel_for`
//!    trampoline at this runtime's thread pool
//!    ([`crate::parallel::relax_parallel_for`]) through its
//!    `relax_set_parallel_for`, and looks every kernel up by symbol. A
//!    kernel the executable calls but the table lacks is an error.
//!
//! A package is native code: load only files you would run as programs.
//! The checksums detect damage, not tampering.

use crate::error::Error;
use crate::executable::Executable;

/// The first bytes of every package.
pub const MAGIC: &[u8; 8] = b"RELAXPKG";

/// The format version [`Package::to_bytes`] writes, and the only one
/// [`Package::from_bytes`] reads.
pub const FORMAT_VERSION: u32 = 1;

/// The symbol of the library function that sets the target of its
/// `relax_parallel_for` trampoline (`void relax_set_parallel_for(void
/// (*)(int64_t, body, void *))`).
pub const SET_PARALLEL_FOR: &str = "relax_set_parallel_for";

/// A compiled model. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The serialized executable.
    pub executable: Vec<u8>,
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

/// A package read in place: the header decoded, the two sections
/// borrowed from the bytes (and checked by their checksums), so loading a
/// large model copies its weights once, into the executable's tensors.
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
    /// The serialized executable.
    pub executable: &'a [u8],
    /// The shared library.
    pub library: &'a [u8],
}

impl Package {
    /// The package as bytes. See the module docs.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.executable.len() + self.library.len() + 4096);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let str = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        str(&mut out, &self.arch);
        str(&mut out, &self.os);
        str(&mut out, &self.cpu);
        for names in [&self.input_names, &self.output_names] {
            out.extend_from_slice(&(names.len() as u64).to_le_bytes());
            for n in names {
                str(&mut out, n);
            }
        }
        out.extend_from_slice(&(self.kernels.len() as u64).to_le_bytes());
        for (name, symbol) in &self.kernels {
            str(&mut out, name);
            str(&mut out, symbol);
        }
        for section in [&self.executable, &self.library] {
            out.extend_from_slice(&(section.len() as u64).to_le_bytes());
            out.extend_from_slice(section);
            out.extend_from_slice(&checksum(section).to_le_bytes());
        }
        out
    }

    /// A package from bytes written by [`Package::to_bytes`]; malformed,
    /// truncated or damaged input is an [`Error::Deserialize`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Package, Error> {
        let p = PackageRef::parse(bytes)?;
        Ok(Package {
            arch: p.arch.into(),
            os: p.os.into(),
            cpu: p.cpu.into(),
            input_names: p.input_names,
            output_names: p.output_names,
            kernels: p.kernels,
            executable: p.executable.to_vec(),
            library: p.library.to_vec(),
        })
    }

    /// This package, borrowed.
    pub fn as_ref(&self) -> PackageRef<'_> {
        PackageRef {
            arch: &self.arch,
            os: &self.os,
            cpu: &self.cpu,
            input_names: self.input_names.clone(),
            output_names: self.output_names.clone(),
            kernels: self.kernels.clone(),
            executable: &self.executable,
            library: &self.library,
        }
    }

    /// See [`PackageRef::check_host`].
    pub fn check_host(&self) -> Result<(), Error> {
        self.as_ref().check_host()
    }

    /// See [`PackageRef::load`].
    pub fn load(&self) -> Result<Executable, Error> {
        self.as_ref().load()
    }
}

impl<'a> PackageRef<'a> {
    /// The package in `bytes` (written by [`Package::to_bytes`]); malformed,
    /// truncated or damaged input is an [`Error::Deserialize`].
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
            library,
        })
    }

    /// Fails, saying what the package needs, unless this machine can run
    /// its code: the same architecture and OS, and a CPU with its level.
    pub fn check_host(&self) -> Result<(), Error> {
        let (arch, os) = (std::env::consts::ARCH, std::env::consts::OS);
        if self.arch != arch || self.os != os {
            return Err(Error::Unsupported(format!(
                "the package was compiled for {} on {}, and this machine is {arch} on {os}",
                self.arch, self.os
            )));
        }
        if !crate::cpu::supports(self.cpu) {
            return Err(Error::Unsupported(format!(
                "the package was compiled for the CPU level `{}`, which this CPU lacks; compile the model on this machine (relax compile)",
                self.cpu
            )));
        }
        Ok(())
    }

    /// The executable with its kernels loaded from the library. See the
    /// module docs.
    #[cfg(unix)]
    pub fn load(&self) -> Result<Executable, Error> {
        self.check_host()?;
        let exec = Executable::from_bytes(self.executable)?;
        if let Some(missing) = exec
            .natives
            .iter()
            .find(|n| !self.kernels.iter().any(|(k, _)| k == *n))
        {
            return Err(Error::Deserialize(format!(
                "the package's kernel table has no kernel `{missing}`, which its executable calls"
            )));
        }
        let library = dynamic::load(self.library, &self.kernels)?;
        Ok(exec.with_library(library))
    }

    /// Loading needs `dlopen`.
    #[cfg(not(unix))]
    pub fn load(&self) -> Result<Executable, Error> {
        self.check_host()?;
        Err(Error::Unsupported(
            "loading a compiled package needs a Unix dynamic loader".into(),
        ))
    }
}

/// The decoder's position in the bytes.
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
mod dynamic {
    //! The library of a package, loaded with `dlopen`.

    use super::SET_PARALLEL_FOR;
    use crate::error::Error;
    use crate::native::{CompiledKernel, KernelFn, NativeKernel, NativeLibrary};
    use crate::parallel::ParallelBody;
    use std::collections::HashMap;
    use std::ffi::{CStr, CString};
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// The signature of the library's `relax_set_parallel_for`.
    type SetParallelFor = unsafe extern "C" fn(unsafe extern "C" fn(i64, ParallelBody, *mut u8));

    /// A `dlopen` handle, closed when the last kernel is dropped.
    struct Handle(*mut libc::c_void);

    // SAFETY: a dlopen handle may be used and closed from any thread.
    unsafe impl Send for Handle {}
    // SAFETY: as above; shared references only look symbols up.
    unsafe impl Sync for Handle {}

    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: the handle came from a successful dlopen and is closed
            // once; every kernel holds an Arc of it, so no code of the
            // library can still be called.
            unsafe {
                libc::dlclose(self.0);
            }
        }
    }

    impl Handle {
        fn symbol(&self, name: &str) -> Result<*mut libc::c_void, Error> {
            let c = CString::new(name).map_err(|_| {
                Error::Deserialize(format!("the kernel symbol {name:?} contains a NUL byte"))
            })?;
            // SAFETY: a live handle and a NUL-terminated name.
            let p = unsafe { libc::dlsym(self.0, c.as_ptr()) };
            if p.is_null() {
                return Err(Error::Deserialize(format!(
                    "the package's library defines no symbol `{name}`"
                )));
            }
            Ok(p)
        }
    }

    struct Library {
        kernels: HashMap<String, Arc<CompiledKernel>>,
    }

    impl NativeLibrary for Library {
        fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
            self.kernels
                .get(symbol)
                .map(|k| k.clone() as Arc<dyn NativeKernel>)
        }
        fn describe(&self) -> String {
            "compiled package (shared library)".into()
        }
    }

    /// The last `dlerror` message.
    fn dl_error() -> String {
        // SAFETY: dlerror returns NULL or a NUL-terminated string.
        let p = unsafe { libc::dlerror() };
        if p.is_null() {
            "unknown dlopen error".into()
        } else {
            // SAFETY: non-null, NUL-terminated, valid until the next dl call.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// A new private file for the library's bytes.
    fn write_private(bytes: &[u8]) -> Result<PathBuf, Error> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(
                "relax-package-{}-{nanos:x}-{n}.so",
                std::process::id()
            ));
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match file {
                Ok(mut f) => {
                    let written = f.write_all(bytes);
                    if let Err(e) = written {
                        let _ = std::fs::remove_file(&path);
                        return Err(Error::Unsupported(format!(
                            "cannot write the package's library to {}: {e}",
                            path.display()
                        )));
                    }
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(Error::Unsupported(format!(
                        "cannot create a file for the package's library in {}: {e}",
                        dir.display()
                    )))
                }
            }
        }
        Err(Error::Unsupported(format!(
            "cannot create a fresh file for the package's library in {}",
            dir.display()
        )))
    }

    /// Loads `bytes` (checked by its checksum) and looks up `kernels`.
    pub(super) fn load(
        bytes: &[u8],
        kernels: &[(String, String)],
    ) -> Result<Arc<dyn NativeLibrary>, Error> {
        let path = write_private(bytes)?;
        let c_path = CString::new(path.as_os_str().as_encoded_bytes().to_vec());
        let raw = match c_path {
            // SAFETY: a NUL-terminated path of a file only this process
            // wrote; the library's initializers are the C runtime's.
            Ok(c) => unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) },
            Err(_) => std::ptr::null_mut(),
        };
        let message = if raw.is_null() {
            dl_error()
        } else {
            String::new()
        };
        // The mapping stays after the file is gone.
        let _ = std::fs::remove_file(&path);
        if raw.is_null() {
            return Err(Error::Deserialize(format!(
                "cannot load the package's library: {message}"
            )));
        }
        let handle = Arc::new(Handle(raw));
        let set = handle.symbol(SET_PARALLEL_FOR)?;
        // SAFETY: the library defines `relax_set_parallel_for` with this
        // signature (the trampoline `relax compile` links in).
        unsafe {
            let set: SetParallelFor = std::mem::transmute::<*mut libc::c_void, SetParallelFor>(set);
            set(crate::parallel::relax_parallel_for);
        }
        let owner: Arc<dyn Send + Sync> = handle.clone();
        let mut table = HashMap::new();
        for (name, symbol) in kernels {
            let p = handle.symbol(symbol)?;
            // SAFETY: the symbol is a kernel of the `KernelFn` ABI, as the
            // compiler emitted it; the VM checks every call's shapes before
            // it runs.
            let func = unsafe { std::mem::transmute::<*mut libc::c_void, KernelFn>(p) };
            table.insert(
                name.clone(),
                Arc::new(CompiledKernel {
                    symbol: symbol.clone(),
                    func,
                    owner: owner.clone(),
                }),
            );
        }
        Ok(Arc::new(Library { kernels: table }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Package {
        Package {
            arch: std::env::consts::ARCH.into(),
            os: std::env::consts::OS.into(),
            cpu: "generic".into(),
            input_names: vec!["gpu_0/data_0".into()],
            output_names: vec!["logits".into(), "".into()],
            kernels: vec![("add".into(), "relax_pkg_add".into())],
            executable: Executable::default().to_bytes(),
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
    fn a_changed_byte_is_an_error_never_a_panic() {
        let bytes = sample().to_bytes();
        let header = bytes.len() - sample().library.len() - sample().executable.len() - 32;
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
