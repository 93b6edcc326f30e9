//! The library of a package, loaded with `dlopen`.

use super::{SET_PARALLEL_FOR, SET_WORKSPACE};
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

/// The signature of the library's `relax_set_workspace`.
type SetWorkspace =
    unsafe extern "C" fn(extern "C" fn(i64) -> *mut u8, unsafe extern "C" fn(*mut u8, i64));

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
    if let Ok(set) = handle.symbol(SET_WORKSPACE) {
        // SAFETY: the library defines `relax_set_workspace` with this
        // signature (the trampolines `relax compile` links in).
        unsafe {
            let set: SetWorkspace = std::mem::transmute::<*mut libc::c_void, SetWorkspace>(set);
            set(
                crate::workspace::relax_workspace_alloc,
                crate::workspace::relax_workspace_free,
            );
        }
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
