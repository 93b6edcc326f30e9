//! The process's resident memory, for the example's report that a
//! generation holds the weights, the caches and a small constant: Linux's
//! `/proc/self/status` splits it into anonymous pages (the heap: copied or
//! quantized weights, the caches, the VM's buffers) and pages of mapped
//! files (the memory-mapped checkpoint, and the program itself).

/// Resident bytes, anonymous and file-backed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resident {
    pub anon: usize,
    pub file: usize,
}

impl Resident {
    /// This process's resident memory now; `None` where `/proc/self/status`
    /// does not exist or lacks the fields (not Linux).
    pub fn now() -> Option<Resident> {
        Resident::parse(&std::fs::read_to_string("/proc/self/status").ok()?)
    }

    /// The `RssAnon` and `RssFile` lines of a `/proc/<pid>/status` text.
    pub fn parse(status: &str) -> Option<Resident> {
        let field = |name: &str| -> Option<usize> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kb: usize = line[name.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(kb * 1024)
        };
        Some(Resident {
            anon: field("RssAnon:")?,
            file: field("RssFile:")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Resident;

    #[test]
    fn status_lines_give_bytes() {
        let status =
            "Name:\tllama\nVmRSS:\t  3000 kB\nRssAnon:\t    1000 kB\nRssFile:\t    2000 kB\n";
        assert_eq!(
            Resident::parse(status),
            Some(Resident {
                anon: 1000 * 1024,
                file: 2000 * 1024
            })
        );
        assert_eq!(Resident::parse("VmRSS:\t3000 kB\n"), None);
    }

    #[test]
    fn this_process_has_some_resident_memory() {
        if let Some(r) = Resident::now() {
            assert!(r.anon + r.file > 0);
        }
    }
}
