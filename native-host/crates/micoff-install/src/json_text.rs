//! Edits of a JSON document's text that leave every other byte as it was: an administrator's
//! `policies.json` keeps its indentation, key order and spacing when micoff adds its entries, and
//! is back byte for byte once they are taken out. Only objects along a path of keys are looked
//! into; the caller checks the result against the document it meant (`firefox::policies`) and
//! falls back to a fresh rendering when they differ, so a misread document is never written wrong.

use std::ops::Range;

use serde_json::Value;

/// One `"key": value` of an object.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    /// The key's opening quote.
    start: usize,
    value: Range<usize>,
}

/// An object: its braces and members, in text order.
#[derive(Debug, Clone)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

impl Object {
    /// The member named `key`: the last one, as a JSON parser keeps the last of duplicate keys.
    fn member(&self, key: &str) -> Option<(usize, &Member)> {
        self.members
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| m.key == key)
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End of the string starting at `i` (its opening quote), past the closing quote.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// End of the value starting at `i`.
fn value_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    match *b.get(i)? {
        b'{' => Some(object_at(text, i)?.close + 1),
        b'[' => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            loop {
                j = skip_ws(b, value_end(text, j)?);
                match *b.get(j)? {
                    b',' => j = skip_ws(b, j + 1),
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'"' => string_end(b, i),
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The object whose `{` is at `open`.
fn object_at(text: &str, open: usize) -> Option<Object> {
    let b = text.as_bytes();
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return Some(Object {
            open,
            close: i,
            members,
        });
    }
    loop {
        let start = i;
        let key_end = string_end(b, start).filter(|_| b.get(start) == Some(&b'"'))?;
        let key: String = serde_json::from_str(text.get(start..key_end)?).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(b, i + 1);
        let end = value_end(text, value_start)?;
        members.push(Member {
            key,
            start,
            value: value_start..end,
        });
        i = skip_ws(b, end);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => {
                return Some(Object {
                    open,
                    close: i,
                    members,
                })
            }
            _ => return None,
        }
    }
}

/// The document's root object.
fn root(text: &str) -> Option<Object> {
    object_at(text, skip_ws(text.as_bytes(), 0))
}

/// The whitespace that starts the line holding byte `i`, and whether only whitespace precedes `i`
/// on that line.
fn line_indent(text: &str, i: usize) -> (&str, bool) {
    let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
    let before = &text[line_start..i];
    let indent_len = before.len() - before.trim_start_matches([' ', '\t']).len();
    (&before[..indent_len], indent_len == before.len())
}

/// The document's indentation step: the indent of the first member of the root object when it
/// starts a line of its own (two spaces otherwise).
fn indent_unit(text: &str, root: &Object) -> String {
    root.members
        .first()
        .map(|m| line_indent(text, m.start))
        .filter(|(indent, alone)| *alone && !indent.is_empty())
        .map_or_else(|| "  ".to_owned(), |(indent, _)| indent.to_owned())
}

/// `value` as text placed at a line indented by `indent` (multi-line), or on one line.
fn render(value: &Value, multiline: bool, unit: &str, indent: &str) -> Option<String> {
    if !multiline {
        return serde_json::to_string(value).ok();
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(value, &mut ser).ok()?;
    let pretty = String::from_utf8(buf).ok()?;
    Some(pretty.replace('\n', &format!("\n{indent}")))
}

/// `{"<path[0]>": {"<path[1]>": … value}}` for the keys still missing below an existing object.
fn nested(path: &[&str], value: &Value) -> Value {
    path.iter().rev().fold(value.clone(), |v, k| {
        let mut m = serde_json::Map::new();
        m.insert((*k).to_owned(), v);
        Value::Object(m)
    })
}

/// `text` with `path` (keys from the root) set to `value`: the member's value replaced where it is,
/// else a new member after the object's last one (objects missing on the way are added with it).
/// `None` when the text cannot be read along the path (not an object there).
pub fn set(text: &str, path: &[&str], value: &Value) -> Option<String> {
    let top = root(text)?;
    let multiline = text[top.open..=top.close].contains('\n');
    let unit = indent_unit(text, &top);
    let mut obj = top;
    for (depth, key) in path.iter().enumerate() {
        match obj.member(key).map(|(_, m)| m.clone()) {
            Some(m) if depth + 1 == path.len() => {
                let (indent, _) = line_indent(text, m.start);
                let new = render(value, multiline, &unit, indent)?;
                return Some(format!(
                    "{}{new}{}",
                    &text[..m.value.start],
                    &text[m.value.end..]
                ));
            }
            Some(m) => obj = object_at(text, m.value.start)?,
            None => {
                let member_value = nested(&path[depth + 1..], value);
                return Some(insert(text, &obj, key, &member_value, multiline, &unit));
            }
        }
    }
    None
}

/// `text` with a new member `key: value` after the last member of `obj`.
fn insert(
    text: &str,
    obj: &Object,
    key: &str,
    value: &Value,
    multiline: bool,
    unit: &str,
) -> String {
    let key_text = serde_json::to_string(key).unwrap_or_default();
    match obj.members.last() {
        Some(last) => {
            let (indent, alone) = line_indent(text, last.start);
            let (sep, indent) = if multiline && alone {
                (format!(",\n{indent}"), indent.to_owned())
            } else {
                (", ".to_owned(), indent.to_owned())
            };
            let v = render(value, multiline && alone, unit, &indent).unwrap_or_default();
            format!(
                "{}{sep}{key_text}: {v}{}",
                &text[..last.value.end],
                &text[last.value.end..]
            )
        }
        None => {
            let (outer, _) = line_indent(text, obj.open);
            if multiline {
                let inner = format!("{outer}{unit}");
                let v = render(value, true, unit, &inner).unwrap_or_default();
                format!(
                    "{}\n{inner}{key_text}: {v}\n{outer}{}",
                    &text[..=obj.open],
                    &text[obj.close..]
                )
            } else {
                let v = render(value, false, unit, "").unwrap_or_default();
                format!(
                    "{}{key_text}: {v}{}",
                    &text[..=obj.open],
                    &text[obj.close..]
                )
            }
        }
    }
}

/// `text` without the member at `path`: with the separator before it (or, for an object's first
/// member, the one after it), the exact inverse of [`set`] adding it. `None` when it is not there.
pub fn remove(text: &str, path: &[&str]) -> Option<String> {
    let (last, parents) = path.split_last()?;
    let mut obj = root(text)?;
    for key in parents {
        let (_, m) = obj.member(key)?;
        obj = object_at(text, m.value.start)?;
    }
    let (i, m) = obj.member(last)?;
    let cut = if obj.members.len() == 1 {
        obj.open + 1..obj.close
    } else if i > 0 {
        obj.members[i - 1].value.end..m.value.end
    } else {
        m.start..obj.members[1].start
    };
    Some(format!("{}{}", &text[..cut.start], &text[cut.end..]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const ADMIN: &str = "{\n    \"policies\": {\n        \"DisableTelemetry\": true,\n        \"Preferences\": {\n            \"browser.x\": { \"Value\": false, \"Status\": \"locked\" }\n        },\n        \"DisableFirefoxStudies\": true\n    }\n}\n";

    fn parsed(t: &str) -> Value {
        serde_json::from_str(t).unwrap()
    }

    #[test]
    fn added_members_come_out_byte_for_byte() {
        let v = json!({"installation_mode": "force_installed", "install_url": "file:///x.xpi"});
        // Into an existing object, into a new section, and a new section inside it.
        let a = set(
            ADMIN,
            &["policies", "Preferences", "media.a"],
            &json!({"Value": true}),
        )
        .unwrap();
        let b = set(&a, &["policies", "ExtensionSettings", "m@x"], &v).unwrap();
        let mut want = parsed(ADMIN);
        want["policies"]["Preferences"]["media.a"] = json!({"Value": true});
        want["policies"]["ExtensionSettings"] = json!({"m@x": v});
        assert_eq!(parsed(&b), want);
        // Their own indentation: 4 spaces, 12 for a member of Preferences.
        assert!(
            b.contains(
                "\n            \"media.a\": {\n                \"Value\": true\n            }"
            ),
            "{b}"
        );
        let back = remove(&b, &["policies", "ExtensionSettings"]).unwrap();
        assert_eq!(
            remove(&back, &["policies", "Preferences", "media.a"]).unwrap(),
            ADMIN
        );
        // Taken out in the other order, and a value replaced and set back.
        let c = set(&b, &["policies", "Preferences", "media.a"], &json!(3)).unwrap();
        assert_eq!(parsed(&c)["policies"]["Preferences"]["media.a"], json!(3));
        let d = remove(&c, &["policies", "Preferences", "media.a"]).unwrap();
        assert_eq!(
            remove(&d, &["policies", "ExtensionSettings"]).unwrap(),
            ADMIN
        );
    }

    #[test]
    fn first_and_only_members_one_line_documents_and_odd_text() {
        // A first member goes with the separator after it.
        let t = "{\"policies\": {\"A\": 1, \"B\": 2}}";
        assert_eq!(
            remove(t, &["policies", "A"]).unwrap(),
            "{\"policies\": {\"B\": 2}}"
        );
        // One-line documents stay on one line.
        let one = set(t, &["policies", "C"], &json!({"x": [1, 2]})).unwrap();
        assert_eq!(
            one,
            "{\"policies\": {\"A\": 1, \"B\": 2, \"C\": {\"x\":[1,2]}}}"
        );
        assert_eq!(remove(&one, &["policies", "C"]).unwrap(), t);
        // An empty object, and a missing `policies`.
        let e = set("{\n  \"policies\": {}\n}\n", &["policies", "K"], &json!(1)).unwrap();
        assert_eq!(e, "{\n  \"policies\": {\n    \"K\": 1\n  }\n}\n");
        assert_eq!(
            remove(&e, &["policies", "K"]).unwrap(),
            "{\n  \"policies\": {}\n}\n"
        );
        let p = set("{}", &["policies", "S", "k"], &json!(true)).unwrap();
        assert_eq!(parsed(&p), json!({"policies": {"S": {"k": true}}}));
        // Strings with escapes, braces and commas inside; arrays; duplicate keys (the last counts).
        let s = "{\"a\": \"}\\\",{\", \"l\": [{\"x\": \"]\"}, []], \"a\": {\"k\": 1}}";
        let r = set(s, &["a", "k"], &json!(2)).unwrap();
        assert_eq!(parsed(&r)["a"], json!({"k": 2}));
        assert!(r.starts_with("{\"a\": \"}\\\",{\", \"l\": [{\"x\": \"]\"}, []], "));
        // Not an object on the way: no text edit.
        assert_eq!(
            set("{\"policies\": []}", &["policies", "x"], &json!(1)),
            None
        );
        assert_eq!(set("[1]", &["policies"], &json!(1)), None);
        assert_eq!(remove("{\"a\": 1}", &["b"]), None);
        assert_eq!(set("{\"a\": ", &["a"], &json!(1)), None);
    }

    /// What `firefox::policies` does with an edit: used only when it parses to the document meant.
    fn checked(edited: Option<String>, meant: &Value) -> Option<String> {
        edited.filter(|t| serde_json::from_str::<Value>(t).ok().as_ref() == Some(meant))
    }

    #[test]
    fn broken_and_mangled_text_never_panics_and_a_valid_document_round_trips() {
        let v = json!({"installation_mode": "force_installed", "install_url": "file:///m.xpi"});
        let path = ["policies", "ExtensionSettings", "m@x"];
        let samples = [
            ADMIN,
            "{\"policies\": {\"A\": [1, {\"b\": \"}\\\"\"}], \"ExtensionSettings\": {}}}",
            "\t{ \"policies\" :{\r\n\"x\":-1.5e3 ,\"y\":null}\r\n}  ",
            "{\"policies\": {\"é\": \"ü\\u00e9\", \"ExtensionSettings\": {\"a@b\": {}}}}",
        ];
        let mut mangled = 0usize;
        let mut round_trips = 0usize;
        for sample in samples {
            let bytes = sample.as_bytes();
            let mut inputs: Vec<Vec<u8>> = Vec::new();
            for i in 0..=bytes.len() {
                // Cut short (a file written half), a byte gone, a byte replaced by a structural one.
                inputs.push(bytes[..i].to_vec());
                if i < bytes.len() {
                    inputs.push([&bytes[..i], &bytes[i + 1..]].concat());
                    for c in b"{}[],:\"\\ x0" {
                        let mut b = bytes.to_vec();
                        b[i] = *c;
                        inputs.push(b);
                    }
                }
            }
            for input in inputs {
                let Ok(text) = String::from_utf8(input) else {
                    continue;
                };
                mangled += 1;
                let parsed = serde_json::from_str::<Value>(&text).ok();
                let added = set(&text, &path, &v);
                let _ = remove(&text, &path);
                let _ = remove(&text, &path[..2]);
                let Some(mut meant) = parsed.filter(|p| {
                    p.get("policies").is_some_and(Value::is_object)
                        && p["policies"]
                            .get("ExtensionSettings")
                            .is_none_or(Value::is_object)
                }) else {
                    continue;
                };
                // A document JSON reads: micoff's entry goes in as meant, and out to the same bytes.
                meant["policies"]
                    .as_object_mut()
                    .unwrap()
                    .entry("ExtensionSettings")
                    .or_insert_with(|| json!({}))["m@x"] = v.clone();
                let added = checked(added, &meant).unwrap_or_else(|| panic!("set: {text:?}"));
                let back = remove(&added, &path).unwrap();
                let had_section = serde_json::from_str::<Value>(&text).unwrap()["policies"]
                    .get("ExtensionSettings")
                    .is_some();
                let back = if had_section {
                    back
                } else {
                    remove(&back, &path[..2]).unwrap()
                };
                assert_eq!(back, text, "round trip");
                round_trips += 1;
            }
        }
        assert!(
            mangled > 1000 && round_trips > 20,
            "{mangled} {round_trips}"
        );
    }
}
