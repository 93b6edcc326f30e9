//! Static libraries: the GNU/System V `ar` format, written directly.
//!
//! An archive is the magic `!<arch>\n` followed by members, each a 60-byte
//! text header (name, date, owner, group, mode, size, the two bytes
//! `` `\n ``) and its data, padded to an even length. Two special members
//! come first:
//!
//! 1. `/`, the symbol index linkers require (GNU ld refuses an archive
//!    without one): a big-endian `u32` count, one big-endian `u32` per
//!    symbol giving the offset of the header of the member that defines it,
//!    then the symbol names, each ending in NUL;
//! 2. `//`, present when a member's name does not fit the 15 bytes of the
//!    header: the long names, each ending in `/\n`; such a member's header
//!    names it `/<offset into this table>`.
//!
//! Dates, owners and groups are zero so the same input gives the same bytes
//! (reproducible builds). The symbol index lists what the caller says each
//! member defines: for relax's objects those are the kernel symbols, the
//! only ones other code refers to.

/// One object file of an archive.
#[derive(Clone, Debug)]
pub struct Member {
    /// The file name inside the archive (`mlp.o`), without `/`.
    pub name: String,
    /// The object file's bytes.
    pub data: Vec<u8>,
    /// The global symbols the object defines, for the index.
    pub symbols: Vec<String>,
}

const MAGIC: &[u8] = b"!<arch>\n";
const HEADER_LEN: usize = 60;

/// The archive holding `members`, in order. See the module docs.
pub fn write_archive(members: &[Member]) -> Vec<u8> {
    // The long-name table, and each member's name as its header gives it.
    let mut long_names = Vec::new();
    let header_names: Vec<String> = members
        .iter()
        .map(|m| {
            if m.name.len() <= 15 && !m.name.contains(' ') {
                format!("{}/", m.name)
            } else {
                let offset = long_names.len();
                long_names.extend_from_slice(m.name.as_bytes());
                long_names.extend_from_slice(b"/\n");
                format!("/{offset}")
            }
        })
        .collect();

    let symbol_count: usize = members.iter().map(|m| m.symbols.len()).sum();
    let names_len: usize = members
        .iter()
        .flat_map(|m| &m.symbols)
        .map(|s| s.len() + 1)
        .sum();
    let index_len = 4 + 4 * symbol_count + names_len;

    // Where each member's header starts, for the index.
    let mut offset = MAGIC.len() + HEADER_LEN + padded(index_len);
    if !long_names.is_empty() {
        offset += HEADER_LEN + padded(long_names.len());
    }
    let mut member_offsets = Vec::with_capacity(members.len());
    for m in members {
        member_offsets.push(offset);
        offset += HEADER_LEN + padded(m.data.len());
    }

    let mut index = Vec::with_capacity(index_len);
    index.extend_from_slice(&be32(symbol_count));
    for (m, &at) in members.iter().zip(&member_offsets) {
        for _ in &m.symbols {
            index.extend_from_slice(&be32(at));
        }
    }
    for s in members.iter().flat_map(|m| &m.symbols) {
        index.extend_from_slice(s.as_bytes());
        index.push(0);
    }

    let mut out = Vec::with_capacity(offset);
    out.extend_from_slice(MAGIC);
    push_member(&mut out, "/", &index);
    if !long_names.is_empty() {
        push_member(&mut out, "//", &long_names);
    }
    for (m, name) in members.iter().zip(&header_names) {
        push_member(&mut out, name, &m.data);
    }
    out
}

/// `len` rounded up to even: members start at even offsets.
fn padded(len: usize) -> usize {
    len + len % 2
}

/// An offset or count as the index stores it. Archives over 4 GiB are out
/// of scope (the format itself cannot index them).
fn be32(n: usize) -> [u8; 4] {
    u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes()
}

/// Appends a header named `name` and `data`, padded with `\n`.
fn push_member(out: &mut Vec<u8>, name: &str, data: &[u8]) {
    let field = |out: &mut Vec<u8>, text: &str, width: usize| {
        out.extend_from_slice(text.as_bytes());
        out.extend(std::iter::repeat_n(b' ', width.saturating_sub(text.len())));
    };
    field(out, name, 16);
    field(out, "0", 12); // modification time
    field(out, "0", 6); // owner
    field(out, "0", 6); // group
    field(out, "644", 8); // mode, octal
    field(out, &data.len().to_string(), 10);
    out.extend_from_slice(b"`\n");
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member as read back: header name, data.
    fn read(archive: &[u8]) -> Vec<(String, Vec<u8>, usize)> {
        assert_eq!(&archive[..8], MAGIC);
        let mut at = 8;
        let mut out = Vec::new();
        while at < archive.len() {
            let header = &archive[at..at + HEADER_LEN];
            assert_eq!(&header[58..60], b"`\n", "header end at {at}");
            let text = |r: std::ops::Range<usize>| {
                std::str::from_utf8(&header[r])
                    .unwrap()
                    .trim_end()
                    .to_string()
            };
            assert_eq!(text(16..28), "0");
            let size: usize = text(48..58).parse().unwrap();
            let data = archive[at + HEADER_LEN..at + HEADER_LEN + size].to_vec();
            out.push((text(0..16), data, at));
            at += HEADER_LEN + padded(size);
        }
        assert_eq!(at, archive.len());
        out
    }

    fn member(name: &str, data: &[u8], symbols: &[&str]) -> Member {
        Member {
            name: name.into(),
            data: data.to_vec(),
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn writes_members_with_an_index_pointing_at_their_headers() {
        let archive = write_archive(&[
            member("a.o", b"odd", &["f", "g"]),
            member("b.o", b"even", &["h"]),
        ]);
        let members = read(&archive);
        let names: Vec<&str> = members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["/", "a.o/", "b.o/"]);
        assert_eq!(members[1].1, b"odd");
        assert_eq!(members[2].1, b"even");
        // The odd-sized member is padded with one newline.
        let a_end = members[1].2 + HEADER_LEN + 3;
        assert_eq!(archive[a_end], b'\n');

        let index = &members[0].1;
        let word = |i: usize| u32::from_be_bytes(index[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(word(0), 3);
        let (a_at, b_at) = (members[1].2 as u32, members[2].2 as u32);
        assert_eq!([word(1), word(2), word(3)], [a_at, a_at, b_at]);
        assert_eq!(&index[16..], b"f\0g\0h\0");
    }

    #[test]
    fn long_names_go_to_the_name_table() {
        let long = "a_rather_long_module_name.o";
        let archive = write_archive(&[member("s.o", b"x", &[]), member(long, b"yy", &["k"])]);
        let members = read(&archive);
        let names: Vec<&str> = members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["/", "//", "s.o/", "/0"]);
        assert_eq!(members[1].1, format!("{long}/\n").as_bytes());
        let index = &members[0].1;
        assert_eq!(u32::from_be_bytes(index[..4].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_be_bytes(index[4..8].try_into().unwrap()) as usize,
            members[3].2
        );
    }

    #[test]
    fn an_empty_archive_has_an_empty_index() {
        let archive = write_archive(&[]);
        let members = read(&archive);
        assert_eq!(members.len(), 1);
        assert_eq!(members[0].1, [0, 0, 0, 0]);
    }

    #[test]
    fn the_output_is_reproducible() {
        let ms = [member("a.o", b"abc", &["f"])];
        assert_eq!(write_archive(&ms), write_archive(&ms));
    }
}
