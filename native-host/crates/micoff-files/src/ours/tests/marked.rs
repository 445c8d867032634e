//! The mark: where the seal goes, what the verdict says of a file as written, edited, or not ours.

use crate::ours::marked::{ownership_of, seal, Marked, MARKER, SEAL};
use crate::ours::{judge, sha256_hex, Ownership};

const NOTE: &str = "of this file without this line";

#[test]
fn the_seal_goes_after_the_header_and_records_the_rest() {
    let content = format!("#!/bin/sh\n{MARKER}\n# micoff-x: a=1\n# a comment\nexec true\n");
    let sealed = seal(&content, NOTE);
    assert_eq!(
        sealed,
        format!(
            "#!/bin/sh\n{MARKER}\n# micoff-x: a=1\n{SEAL}{} ({NOTE})\n# a comment\nexec true\n",
            sha256_hex(content.as_bytes())
        )
    );
    assert_eq!(ownership_of(&sealed), Ownership::AsWritten);
    let marked = Marked::read(&sealed).unwrap();
    assert_eq!(marked.marker_line(), MARKER);
    assert_eq!(marked.header().collect::<Vec<_>>(), ["# micoff-x: a=1"]);
    assert_eq!(marked.body(), "# a comment\nexec true\n");
    assert_eq!(marked.unsealed(), content);
    // Sealing is for marked text only.
    assert_eq!(seal("plain\n", NOTE), "plain\n");
    // A header with nothing after it and no final newline.
    let bare = seal(MARKER, NOTE);
    assert!(bare.starts_with(&format!("{MARKER}\n{SEAL}")), "{bare}");
    assert_eq!(ownership_of(&bare), Ownership::AsWritten);
}

#[test]
fn any_change_but_the_seals_note_is_an_edit() {
    let sealed = seal(&format!("{MARKER} fix x\nkey = 1\n"), NOTE);
    let edited = sealed.replace("key = 1", "key = 2");
    assert!(matches!(ownership_of(&edited), Ownership::Edited(_)));
    let appended = format!("{sealed}more\n");
    assert!(matches!(ownership_of(&appended), Ownership::Edited(_)));
    // The note is not part of the record.
    let renoted = sealed.replace(NOTE, "another note");
    assert_eq!(ownership_of(&renoted), Ownership::AsWritten);
    // Two seals: not what micoff writes.
    let seal_line = sealed.lines().nth(1).unwrap();
    let twice = sealed.replacen(seal_line, &format!("{seal_line}\n{seal_line}"), 1);
    assert!(
        matches!(ownership_of(&twice), Ownership::Edited(why) if why.contains("2 sha256")),
        "{twice}"
    );
}

#[test]
fn without_the_marker_on_top_it_is_not_ours() {
    for text in [
        "key = 1\n",
        "",
        &format!("\n{MARKER}\n"),
        &format!("# mine\n{MARKER}\n"),
    ] {
        assert!(
            matches!(ownership_of(text), Ownership::NotOurs(why) if why.contains(MARKER)),
            "{text:?}"
        );
    }
}

#[test]
fn judge_asks_whether_ours_first() {
    assert_eq!(
        judge(Err("not a manifest".into()), || unreachable!()),
        Ownership::NotOurs("not a manifest".into())
    );
    assert_eq!(
        judge(Ok(()), || Err("`type` differs".into())),
        Ownership::Edited("`type` differs".into())
    );
    assert_eq!(judge(Ok(()), || Ok(())), Ownership::AsWritten);
    assert!(Ownership::Edited(String::new()).is_ours());
    assert!(!Ownership::NotOurs(String::new()).is_ours());
}
