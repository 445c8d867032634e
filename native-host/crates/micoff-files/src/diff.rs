//! What a write would change, for a dry run to show: a line diff of a file's text now and the text
//! micoff would write, in the unified format (`-` lines go, `+` lines come, two lines of context).
//! Pure: text in, text out.

/// Lines of context around each change.
const CONTEXT: usize = 2;
/// Beyond this many lines on either side, the diff says so instead of being computed.
const MAX_LINES: usize = 4000;

/// A unified diff of `old` (`None`: no file yet) and `new`, headed by `label` (the file's path as
/// printed). Empty when nothing changes.
pub fn unified(label: &str, old: Option<&str>, new: &str) -> String {
    let old_text = old.unwrap_or("");
    if old == Some(new) {
        return String::new();
    }
    let a: Vec<&str> = old_text.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut out = format!(
        "--- {}\n+++ {label} (as micoff would write it)\n",
        if old.is_some() { label } else { "/dev/null" }
    );
    if a.len() > MAX_LINES || b.len() > MAX_LINES {
        out.push_str(&format!(
            "@@ {} lines now, {} lines after: too long to show line by line @@\n",
            a.len(),
            b.len()
        ));
        return out;
    }
    let ops = line_ops(&a, &b);
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    if changed.is_empty() {
        // Only the final newline differs.
        out.push_str("@@ the end of the last line changes (a newline) @@\n");
        return out;
    }
    // Hunks: runs of changes closer than 2 * CONTEXT lines, with CONTEXT lines around.
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let start = i.saturating_sub(CONTEXT);
        let end = (i + CONTEXT + 1).min(ops.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }
    for (start, end) in hunks {
        let (mut a_at, mut b_at) = (0usize, 0usize);
        for op in &ops[..start] {
            match op {
                Op::Same(..) => {
                    a_at += 1;
                    b_at += 1;
                }
                Op::Gone(_) => a_at += 1,
                Op::Come(_) => b_at += 1,
            }
        }
        let a_len = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Come(_)))
            .count();
        let b_len = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Gone(_)))
            .count();
        out.push_str(&format!(
            "@@ -{},{a_len} +{},{b_len} @@\n",
            a_at + usize::from(a_len > 0),
            b_at + usize::from(b_len > 0)
        ));
        for op in &ops[start..end] {
            match op {
                Op::Same(l) => out.push_str(&format!(" {l}\n")),
                Op::Gone(l) => out.push_str(&format!("-{l}\n")),
                Op::Come(l) => out.push_str(&format!("+{l}\n")),
            }
        }
    }
    out
}

/// One line of the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op<'a> {
    Same(&'a str),
    Gone(&'a str),
    Come(&'a str),
}

/// The lines of `a` and `b` as kept, removed and added, by a longest common subsequence.
fn line_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            // What goes before what comes, as diff(1) shows it.
            ops.push(Op::Gone(a[i]));
            i += 1;
        } else {
            ops.push(Op::Come(b[j]));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_all_additions() {
        let d = unified("/x/user.js", None, "a\nb\n");
        assert_eq!(
            d,
            "--- /dev/null\n+++ /x/user.js (as micoff would write it)\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
    }

    #[test]
    fn a_change_shows_with_two_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n";
        let new = "1\n2\n3\nfour\n5\n6\n7\nend\n";
        let d = unified("f", Some(old), new);
        assert_eq!(
            d,
            "--- f\n+++ f (as micoff would write it)\n@@ -2,6 +2,7 @@\n 2\n 3\n-4\n+four\n 5\n 6\n 7\n+end\n"
        );
        assert_eq!(unified("f", Some(old), old), "");
    }

    #[test]
    fn removing_everything_is_all_removals() {
        let d = unified("f", Some("a\n"), "");
        assert!(d.ends_with("@@ -1,1 +0,0 @@\n-a\n"), "{d}");
    }
}
