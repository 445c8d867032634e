//! How long a message to a caller may be, and how much of the caller's own value it may quote:
//! at most [`MAX_MESSAGE_CHARS`] characters in all, at most [`MAX_QUOTED_CHARS`] of any one value
//! (docs/design/security.md). The native messaging errors and every subcommand's error line keep
//! to it through [`bound_message`]; [`quote`] is how a value of the caller's goes into one.

/// Longest message: an error quotes a bit of what it was given, never the input back whole.
pub const MAX_MESSAGE_CHARS: usize = 256;
/// Longest piece of one of the caller's values (an argument, an `id`, a path) in a message.
pub const MAX_QUOTED_CHARS: usize = 64;

/// `text` cut to at most `max` characters, the last of them `…` when it was cut.
pub fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let cut = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
            let mut s = text[..cut].to_owned();
            s.push('…');
            s
        }
    }
}

/// A value of the caller's, as a message quotes it: in double quotes, control characters and
/// quotes escaped (nothing it holds can start a new line or move a terminal's cursor), at most
/// [`MAX_QUOTED_CHARS`] of its characters.
pub fn quote(value: &str) -> String {
    format!("{:?}", bounded(value, MAX_QUOTED_CHARS))
}

/// `text` as a message may carry it: every double-quoted or backquoted piece and every run
/// without a space cut to [`MAX_QUOTED_CHARS`] characters, then the whole to
/// [`MAX_MESSAGE_CHARS`]. The backstop for values that reach a message through other texts (an
/// I/O error naming a path, serde's own wording).
pub fn bound_message(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * MAX_MESSAGE_CHARS));
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match c {
            '"' => closing(&chars, i, '"', true),
            '`' => closing(&chars, i, '`', false),
            _ => None,
        };
        match end {
            Some(end) => {
                // The piece between the quotes, cut; the quotes stay.
                let inner: String = chars[i + 1..end].iter().collect();
                out.push(c);
                out.push_str(&bounded(&inner, MAX_QUOTED_CHARS));
                out.push(c);
                i = end + 1;
            }
            None if c.is_whitespace() => {
                out.push(c);
                i += 1;
            }
            None => {
                // A run without spaces (a path, a long word) up to the next space or quote.
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && (i == start || (chars[i] != '"' && chars[i] != '`'))
                {
                    i += 1;
                }
                let run: String = chars[start..i].iter().collect();
                out.push_str(&bounded(&run, MAX_QUOTED_CHARS));
            }
        }
    }
    bounded(&out, MAX_MESSAGE_CHARS)
}

/// Where the quote opened at `open` closes (`escapes`: a backslash escapes the next character,
/// as in Rust's and serde's `{:?}`), or `None` when it does not.
fn closing(chars: &[char], open: usize, quote: char, escapes: bool) -> Option<usize> {
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' if escapes => i += 2,
            c if c == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn longest_run(text: &str, c: char) -> usize {
        text.split(|x| x != c).map(str::len).max().unwrap_or(0)
    }

    #[test]
    fn bounded_counts_the_ellipsis() {
        assert_eq!(bounded("abc", 3), "abc");
        assert_eq!(bounded("abcd", 3), "ab…");
        assert_eq!(bounded(&"é".repeat(300), 256).chars().count(), 256);
    }

    #[test]
    fn quote_escapes_and_cuts() {
        assert_eq!(quote("a\nb\u{1b}[2J\""), r#""a\nb\u{1b}[2J\"""#);
        let q = quote(&"A".repeat(20_000));
        assert_eq!(longest_run(&q, 'A'), MAX_QUOTED_CHARS - 1);
    }

    #[test]
    fn long_values_are_cut_wherever_they_sit() {
        let long = "A".repeat(20_000);
        for text in [
            format!("invalid type: string \"{long}\", expected u64"),
            format!("unknown variant `{long}`, expected one of `cpu`, `audio`"),
            format!("cannot read /home/{long}/x: No such file or directory"),
            format!("say \"{}\"", "A ".repeat(5000)),
        ] {
            let m = bound_message(&text);
            assert!(m.chars().count() <= MAX_MESSAGE_CHARS, "{m}");
            assert!(
                m.chars().filter(|c| *c == 'A').count() < MAX_QUOTED_CHARS,
                "{m}"
            );
        }
        // Five values in a row: each cut, the whole held to the bound.
        let m = bound_message(&format!("{long} {long} {long} {long} {long}"));
        assert!(m.chars().count() <= MAX_MESSAGE_CHARS, "{m}");
        assert!(longest_run(&m, 'A') < MAX_QUOTED_CHARS, "{m}");
        let m = bound_message(&format!("invalid type: string \"{long}\", expected u64"));
        assert!(m.ends_with("…\", expected u64"), "{m}");
    }

    #[test]
    fn short_messages_stay_as_they_are() {
        for text in [
            "micoff-host sample: --window must be 0.1-600 s, give one in that range",
            "an \"unclosed quote, and a `stray backquote",
            "escaped \"a \\\" b\" quote",
        ] {
            assert_eq!(bound_message(text), text);
        }
    }
}
