//! Mutations of an input. Binary inputs get byte-level ones (flip, set,
//! insert, delete, repeat a range, an integer field set to an edge) and
//! splices with another corpus entry. Text inputs stay text: tokens from
//! the target's dictionary inserted or swapped in, ranges deleted or
//! repeated, digits and letters changed, lines spliced from another entry,
//! so that most mutants get past the lexer. Two-file inputs (an ONNX model
//! and its external data file, see [`split`]) have one file or both
//! mutated, the other kept, so that most mutants still name their data.

use crate::rng::Rng;

/// Interesting bytes and integers for byte-level mutations.
const SPECIAL: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b'0', b'9', b'-', b'(', b')', b'\n'];

/// `input` mutated one to four times (text stays valid UTF-8 when `text`).
pub fn mutate(
    input: &[u8],
    corpus: &[Vec<u8>],
    dictionary: &[&str],
    text: bool,
    rng: &mut Rng,
) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        if text {
            mutate_text(&mut out, corpus, dictionary, rng);
        } else {
            mutate_once(&mut out, corpus, dictionary, rng);
        }
    }
    out.truncate(1 << 16);
    out
}

/// A char boundary of `s` at or before `i`.
fn boundary(s: &[u8], mut i: usize) -> usize {
    while i > 0 && i < s.len() && (s[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i.min(s.len())
}

fn mutate_text(out: &mut Vec<u8>, corpus: &[Vec<u8>], dictionary: &[&str], rng: &mut Rng) {
    let len = out.len();
    let at = |rng: &mut Rng, out: &[u8]| boundary(out, rng.below(out.len() + 1));
    match rng.below(7) {
        0 | 1 if !dictionary.is_empty() => {
            let word = dictionary[rng.below(dictionary.len())];
            let i = at(rng, out);
            out.splice(i..i, word.bytes());
        }
        2 if len > 0 => {
            // Replace a word-ish range with a dictionary token.
            let i = at(rng, out);
            let n = (1 + rng.below(8)).min(len - i);
            let j = boundary(out, i + n);
            let word = dictionary
                .get(rng.below(dictionary.len().max(1)))
                .copied()
                .unwrap_or("");
            out.splice(i..j.max(i), word.bytes());
        }
        3 if len > 0 => {
            let i = at(rng, out);
            let j = boundary(out, (i + 1 + rng.below(32)).min(len));
            out.drain(i..j.max(i));
        }
        4 if len > 0 => {
            let i = at(rng, out);
            let j = boundary(out, (i + 1 + rng.below(64)).min(len));
            let piece = out[i..j.max(i)].to_vec();
            let k = at(rng, out);
            out.splice(k..k, piece);
        }
        5 if len > 0 => {
            // A digit or a letter changed (an ASCII byte stays ASCII).
            let i = rng.below(len);
            if out[i].is_ascii_digit() {
                out[i] = b'0' + rng.below(10) as u8;
            } else if out[i].is_ascii_alphabetic() {
                out[i] = b'a' + rng.below(26) as u8;
            }
        }
        _ if !corpus.is_empty() => {
            // Splice at line starts: a prefix of this, a suffix of another.
            let other = &corpus[rng.below(corpus.len())];
            let line_start = |s: &[u8], i: usize| {
                s[..i]
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |p| p + 1)
            };
            let cut = line_start(out, rng.below(len + 1));
            let from = line_start(other, rng.below(other.len() + 1));
            out.truncate(cut);
            out.extend_from_slice(&other[from..]);
        }
        _ => {}
    }
}

fn mutate_once(out: &mut Vec<u8>, corpus: &[Vec<u8>], dictionary: &[&str], rng: &mut Rng) {
    let len = out.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            out[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            out[i] = SPECIAL[rng.below(SPECIAL.len())];
        }
        2 => {
            let i = rng.below(len + 1);
            out.insert(i, rng.next_u64() as u8);
        }
        3 if len > 0 => {
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(16));
            out.drain(i..i + n);
        }
        4 if len > 0 => {
            // Repeat a range: deep nesting, long lists.
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(64));
            let piece = out[i..i + n].to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(out.len() + 1);
                out.splice(at..at, piece.iter().copied());
            }
        }
        5 if !corpus.is_empty() => {
            // Splice: a prefix of this input, a suffix of another.
            let other = &corpus[rng.below(corpus.len())];
            let cut = rng.below(len + 1);
            let from = rng.below(other.len() + 1);
            out.truncate(cut);
            out.extend_from_slice(&other[from..]);
        }
        6 | 7 if !dictionary.is_empty() => {
            let word = dictionary[rng.below(dictionary.len())];
            let i = rng.below(len + 1);
            out.splice(i..i, word.bytes());
        }
        _ if len >= 8 => {
            // An integer field of the binary formats, set to an edge.
            let i = rng.below(len - 7);
            let v: u64 = match rng.below(5) {
                0 => 0,
                1 => u64::MAX,
                2 => 1 << 31,
                3 => (1 << 63) - 1,
                _ => rng.next_u64(),
            };
            out[i..i + 8].copy_from_slice(&v.to_le_bytes());
        }
        _ => out.push(rng.next_u64() as u8),
    }
}

/// A two-file input: the first file's length (4 bytes, little-endian),
/// that file, then the second file. Bytes too short for the length, or a
/// length past the end, are one file and an empty second.
pub fn split(input: &[u8]) -> (&[u8], &[u8]) {
    let Some((len, rest)) = input.split_first_chunk::<4>() else {
        return (input, &[]);
    };
    let len = u32::from_le_bytes(*len) as usize;
    if len > rest.len() {
        return (rest, &[]);
    }
    rest.split_at(len)
}

/// The two-file input of `first` and `second` (see [`split`]).
pub fn join(first: &[u8], second: &[u8]) -> Vec<u8> {
    let len = u32::try_from(first.len()).unwrap_or(u32::MAX);
    let mut out = len.to_le_bytes().to_vec();
    out.extend_from_slice(first);
    out.extend_from_slice(second);
    out
}

/// A two-file input mutated: the first file (most often), the second, or
/// both, each one to four times at the byte level, with `dictionary`'s
/// tokens; now and then the whole input is spliced with another entry.
pub fn mutate_pair(
    input: &[u8],
    corpus: &[Vec<u8>],
    dictionary: &[&str],
    rng: &mut Rng,
) -> Vec<u8> {
    if rng.one_in(16) {
        return mutate(input, corpus, dictionary, false, rng);
    }
    let (first, second) = split(input);
    let (mut first, mut second) = (first.to_vec(), second.to_vec());
    let which = rng.below(8);
    for (file, chosen) in [(&mut first, which < 6), (&mut second, which >= 4)] {
        if chosen {
            for _ in 0..1 + rng.below(4) {
                mutate_once(file, &[], dictionary, rng);
            }
        }
    }
    let mut out = join(&first, &second);
    out.truncate(1 << 16);
    out
}
