//! The stable runner's mutations: a seed corpus, a dictionary, libFuzzer-style mutations (bit and
//! byte flips, interesting numbers, inserts and erases, block copies, dictionary words, splices
//! with another corpus entry). The loop that applies them is in [`crate::bounded`].

use std::path::{Path, PathBuf};

/// xorshift64*: reproducible from its seed, no dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// 0..n (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Numbers that break parsers: limits of the integer types as text, and as raw bytes.
const INTERESTING: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-0",
    "0x10",
];

/// Parses a libFuzzer dictionary (`"word"` or `name="word"` per line, `\xNN`, `\"`, `\\`).
pub fn parse_dict(text: &str) -> Vec<Vec<u8>> {
    let mut words = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let (Some(start), Some(end)) = (line.find('"'), line.rfind('"')) else {
            continue;
        };
        if end <= start {
            continue;
        }
        let raw = &line.as_bytes()[start + 1..end];
        let mut word = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            match (raw[i], raw.get(i + 1)) {
                (b'\\', Some(b'x')) if i + 3 < raw.len() => {
                    let hex = std::str::from_utf8(&raw[i + 2..i + 4]).unwrap_or("");
                    match u8::from_str_radix(hex, 16) {
                        Ok(b) => word.push(b),
                        Err(_) => word.extend_from_slice(&raw[i..i + 4]),
                    }
                    i += 4;
                }
                (b'\\', Some(&c)) => {
                    word.push(c);
                    i += 2;
                }
                (c, _) => {
                    word.push(c);
                    i += 1;
                }
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// The files of a folder (sorted by name), or nothing when it does not exist.
pub fn read_dir_files(dir: &Path) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    entries.sort();
    entries
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| std::fs::read(&p).map(|b| (p, b)))
        .collect()
}

/// One mutation step on `data` (in place); `max_len` caps the size.
pub fn mutate(
    rng: &mut Rng,
    data: &mut Vec<u8>,
    corpus: &[Vec<u8>],
    dict: &[Vec<u8>],
    max_len: usize,
) {
    let pos = |rng: &mut Rng, data: &Vec<u8>| rng.below(data.len() + 1);
    match rng.below(11) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.next_u64() as u8;
        }
        2 if !data.is_empty() => {
            let i = rng.below(data.len());
            let n = 1 + rng.below(data.len() - i).min(16);
            data.drain(i..i + n);
        }
        3 => {
            let i = pos(rng, data);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            data.splice(i..i, bytes);
        }
        4 if !data.is_empty() => {
            // Copy a block of the input elsewhere in it.
            let from = rng.below(data.len());
            let n = 1 + rng.below(data.len() - from).min(64);
            let block = data[from..from + n].to_vec();
            let to = pos(rng, data);
            data.splice(to..to, block);
        }
        5 | 6 if !dict.is_empty() => {
            let word = dict[rng.below(dict.len())].clone();
            let i = pos(rng, data);
            if rng.below(2) == 0 || data.is_empty() {
                data.splice(i..i, word);
            } else {
                let end = (i + word.len()).min(data.len());
                data.splice(i..end, word);
            }
        }
        7 => {
            // libFuzzer's "change ASCII integer": a whole number of the input (the first one
            // from a random position) becomes an interesting one; inserted when there is none.
            let word = INTERESTING[rng.below(INTERESTING.len())]
                .as_bytes()
                .to_vec();
            let from = pos(rng, data);
            match data[from..].iter().position(u8::is_ascii_digit) {
                Some(p) => {
                    let mut start = from + p;
                    while start > 0 && data[start - 1].is_ascii_digit() {
                        start -= 1;
                    }
                    let mut end = from + p;
                    while end < data.len() && data[end].is_ascii_digit() {
                        end += 1;
                    }
                    data.splice(start..end, word);
                }
                None => {
                    data.splice(from..from, word);
                }
            }
        }
        8 if !corpus.is_empty() => {
            // Splice: our head, another entry's tail.
            let other = &corpus[rng.below(corpus.len())];
            let cut = pos(rng, data);
            let from = rng.below(other.len() + 1);
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        9 if !data.is_empty() => {
            // Repeat a line (parsers of line-based files).
            let i = rng.below(data.len());
            let start = data[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let end = data[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(data.len(), |p| i + p + 1);
            let line = data[start..end].to_vec();
            data.splice(end..end, line);
        }
        _ => {
            let i = pos(rng, data);
            data.truncate(i);
        }
    }
    data.truncate(max_len);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_escapes() {
        let d = parse_dict("# c\n\"a\\\"b\"\nkw=\"\\x00\\xff\"\n\"\\\\\"\n");
        assert_eq!(d, vec![b"a\"b".to_vec(), vec![0, 255], b"\\".to_vec()]);
    }

    #[test]
    fn mutations_stay_within_the_cap() {
        let mut rng = Rng::new(7);
        let corpus = vec![vec![b'a'; 100]];
        let mut d = vec![b'x'; 10];
        for _ in 0..10_000 {
            mutate(&mut rng, &mut d, &corpus, &[b"word".to_vec()], 64);
            assert!(d.len() <= 64);
        }
    }
}
