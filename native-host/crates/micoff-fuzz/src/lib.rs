//! micoff's fuzz targets, one home for both runners: `native-host/fuzz` (cargo-fuzz, nightly; each
//! `fuzz_targets/<name>.rs` calls [`run`]) and `micoff-fuzz` (this crate's binary, stable: a
//! bounded mutation loop over `native-host/fuzz/seeds/` and `dicts/`, what `npm test` runs without
//! nightly). A target panics on a bug and otherwise returns a small "behaviour signature" (which
//! parsers accepted the input, which error code...): the stable runner keeps a mutated input whose
//! signature is new, a crude stand-in for libFuzzer's coverage feedback.

pub mod bounded;
pub mod framing;
pub mod mutate;

use micoff_doctor::parse as doctor;
use micoff_install::firefox::policies::{self, FileRecord, Wanted};
use micoff_install::json_text;
use micoff_native::protocol::{decode_request, ErrorCode};
use micoff_proc::parse as procfs;

/// A target: panics on a bug, else returns a behaviour signature.
pub type Target = fn(&[u8]) -> u64;

/// Every target: (name, function). The names are the cargo-fuzz target names and the folder names
/// under `seeds/` and `dicts/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("proc_parsers", proc_parsers),
    ("doctor_parsers", doctor_parsers),
    ("request", request),
    ("framing", framing::framing),
    ("policies_json", policies_json),
];

/// Runs target `name` on `data` (cargo-fuzz entry point). Unknown names panic.
pub fn run(name: &str, data: &[u8]) -> u64 {
    match TARGETS.iter().find(|(n, _)| *n == name) {
        Some((_, f)) => f(data),
        None => panic!("no fuzz target {name}"),
    }
}

/// Folds a list of "did this part accept the input" bits into a signature.
fn bits(flags: &[bool]) -> u64 {
    flags
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &f)| acc | (u64::from(f) << i))
}

/// The `/proc` text parsers of micoff-proc (stat, schedstat, status, io, cmdline, net/unix, fd
/// links) on the same bytes. Checks: no panic; what they return lies inside the input.
pub fn proc_parsers(data: &[u8]) -> u64 {
    let args = procfs::parse_cmdline(data);
    assert!(args.iter().all(|a| !a.is_empty()));
    let tokens = procfs::arg_tokens(&args).count();
    let Ok(s) = std::str::from_utf8(data) else {
        return bits(&[false, tokens > 0]);
    };
    let stat = procfs::parse_stat(s);
    if let Some(st) = &stat {
        assert!(s.contains(st.comm));
    }
    // The socket path to look for: the first line's last field (so seeds can name one).
    let path = s
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or("");
    let listeners = procfs::parse_net_unix_listeners(s, path);
    bits(&[
        true,
        tokens > 0,
        stat.is_some(),
        procfs::parse_schedstat(s).is_some(),
        procfs::parse_status_ctxt(s).is_some(),
        procfs::parse_status_uid(s).is_some(),
        procfs::parse_io(s).is_some(),
        !listeners.is_empty(),
        procfs::parse_socket_link(s.trim_end()).is_some(),
    ])
}

/// The text parsers of micoff-doctor (`/proc/asound/*`, hw_params, interrupts, PulseAudio and
/// limits.conf files, kernel config and command line, cpuinfo) on the same text, plus the derived
/// values the doctor computes from them (periods in microseconds).
pub fn doctor_parsers(data: &[u8]) -> u64 {
    let s = String::from_utf8_lossy(data);
    let cards = doctor::asound_cards(&s);
    for c in &cards {
        let _ = doctor::irq_in_long_name(&c.long_name);
        if let Some(slot) = doctor::usb_controller_in_long_name(&c.long_name) {
            assert!(doctor::is_pci_slot(&slot));
        }
    }
    let hw = doctor::hw_params(&s);
    if let Some(hw) = &hw {
        let _ = (hw.period_us(), hw.buffer_us());
    }
    let _ = doctor::pcm_state(&s);
    let irqs = doctor::interrupts(&s);
    let pulse = doctor::pulse_conf(&s);
    for (_, v) in &pulse {
        let _ = doctor::pulse_bool(v);
    }
    let first_word = s.split_whitespace().next().unwrap_or("");
    bits(&[
        !cards.is_empty(),
        !doctor::asound_modules(&s).is_empty(),
        hw.is_some(),
        !irqs.is_empty(),
        !pulse.is_empty(),
        !doctor::limits_conf(&s).is_empty(),
        doctor::proc_limits(&s, "Max realtime priority").is_some(),
        !doctor::kernel_config(&s).is_empty(),
        !doctor::cmdline(&s).is_empty(),
        doctor::cpuinfo(&s).logical > 0,
        doctor::is_pci_slot(first_word),
        doctor::is_usb_bus(first_word),
    ])
}

/// A frame body through the request decoder. Checks: no panic, every error code is in the
/// protocol's table. Signature: the request type or the error code.
pub fn request(data: &[u8]) -> u64 {
    match decode_request(data) {
        Ok(r) => {
            // The request as the protocol writes it: the signature is its `"type"` and keys.
            let json = serde_json::to_string(&r).unwrap_or_default();
            let shape: String = json
                .split('"')
                .skip(1)
                .step_by(2)
                .filter(|k| k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
                .collect::<Vec<_>>()
                .join(",");
            1 << 32
                | shape
                    .bytes()
                    .fold(0u64, |h, b| h.wrapping_mul(31) ^ u64::from(b))
                    & 0xffff_ffff
        }
        Err(e) => {
            let code = e.code.code();
            assert!(ErrorCode::from_code(code).is_some(), "unknown code {code}");
            u64::from(code)
        }
    }
}

/// An administrator's `policies.json` (any text) through `install --system`'s merge and its two
/// uninstall steps, and the text editor under them. Checks: no panic; a refusal says why (the
/// installer then writes nothing: micoff-install's `tests/install_firefox.rs`); an accepted
/// install holds micoff's entries and keeps every other entry's meaning; installing again over it,
/// with its record, changes nothing; installing over micoff's block puts micoff's entry back; its
/// uninstall (blocking the add-on, then taking the block out) brings back the administrator's text
/// byte for byte.
pub fn policies_json(data: &[u8]) -> u64 {
    let Ok(text) = std::str::from_utf8(data) else {
        return 0;
    };
    let path = ["policies", "ExtensionSettings", "micoff@micoff.org"];
    let entry = serde_json::json!({"installation_mode": "blocked"});
    let set = json_text::set(text, &path, &entry);
    let _ = json_text::remove(text, &path);
    let _ = json_text::remove(text, &path[..2]);
    let wanted = Wanted {
        release_delay_ms: Some(3000),
        extension: Some((
            "micoff@micoff.org".to_owned(),
            "file:///usr/local/share/micoff/micoff.xpi".to_owned(),
        )),
    };
    let before: Option<serde_json::Value> = serde_json::from_str(text).ok();
    let installed = match policies::install(Some(text), &wanted, &FileRecord::new()) {
        Err(e) => {
            assert!(!e.is_empty());
            return bits(&[before.is_some(), set.is_some()]);
        }
        Ok(o) => o,
    };
    let Some(mut before) = before else {
        panic!("install accepted text JSON does not read: {text:?}");
    };
    // An add-on entry for micoff's id installing micoff's own copy is micoff's (from an install
    // before the record existed): uninstall takes it out too.
    let url = wanted.extension.as_ref().map(|(_, u)| u.as_str());
    let legacy =
        before["policies"]["ExtensionSettings"]["micoff@micoff.org"]["install_url"].as_str() == url
            && before["policies"]["ExtensionSettings"]["micoff@micoff.org"]["installation_mode"]
                == "force_installed";
    if legacy {
        let settings = before["policies"]["ExtensionSettings"]
            .as_object_mut()
            .expect("an object: install accepted it");
        settings.remove("micoff@micoff.org");
        if settings.is_empty() {
            before["policies"]
                .as_object_mut()
                .expect("an object")
                .remove("ExtensionSettings");
        }
    }
    let Some(Some(after)) = installed.text.clone() else {
        // Unchanged: everything micoff wants was there already (an administrator's own values).
        assert!(installed.record.is_empty());
        return bits(&[true, set.is_some(), true]);
    };
    let v: serde_json::Value = serde_json::from_str(&after).expect("install wrote JSON");
    let ours = &v["policies"]["ExtensionSettings"]["micoff@micoff.org"];
    assert!(ours.is_object(), "micoff's entry missing from {after:?}");
    for (k, val) in before.as_object().into_iter().flatten() {
        if k != "policies" {
            assert_eq!(&v[k], val, "{k} changed");
        }
    }
    let again = policies::install(Some(&after), &wanted, &installed.record)
        .expect("micoff's own output is accepted again");
    assert!(again.text.is_none(), "a second install changed {after:?}");
    let mut text_now = after.clone();
    let mut record = installed.record;
    let mut steps = 0;
    // Uninstall in a file Firefox reads: block first, then take the block out.
    loop {
        let out = policies::uninstall(&text_now, &wanted, &record, true)
            .expect("micoff's own output is read back");
        if let (true, Some(Some(blocked))) = (out.blocking, &out.text) {
            // Installed again before the block came out: micoff's entry installs micoff again.
            let re = policies::install(Some(blocked), &wanted, &out.record)
                .expect("an install over micoff's own block is accepted");
            let now = re.text.clone().flatten().unwrap_or_else(|| blocked.clone());
            let v: serde_json::Value = serde_json::from_str(&now).expect("install wrote JSON");
            assert_eq!(
                v["policies"]["ExtensionSettings"]["micoff@micoff.org"]["installation_mode"],
                "force_installed",
                "still blocked after installing over {blocked:?}"
            );
        }
        record = out.record;
        steps += 1;
        match out.text {
            None => break,
            Some(None) => {
                // Only a file that holds no policy at all goes (Firefox reads it as no file).
                assert_eq!(
                    firefox_reads(&before),
                    serde_json::json!({}),
                    "file removed, but the administrator's {text:?} had more"
                );
                text_now = String::new();
                break;
            }
            Some(Some(t)) => text_now = t,
        }
        assert!(steps <= 2, "uninstall does not settle: {text_now:?}");
    }
    assert!(record.is_empty(), "record left: {record:?}");
    if !text_now.is_empty() {
        let back: serde_json::Value =
            serde_json::from_str(&text_now).expect("uninstall wrote JSON");
        assert_eq!(
            firefox_reads(&back),
            firefox_reads(&before),
            "meaning lost: {text:?} -> {text_now:?}"
        );
    }
    // The administrator's own text back, byte for byte (micoff's entries went in and out as text
    // edits). Not where the administrator had an empty container micoff wrote into (`policies`
    // missing or empty, an empty `Preferences` / `ExtensionSettings`): micoff takes a container it
    // leaves empty out, as it cannot tell it from one it made.
    let byte_for_byte = text_now == text;
    let empty_container = firefox_reads(&before) != before;
    assert!(
        byte_for_byte || text_now.is_empty() || legacy || empty_container,
        "{text:?} came back as {text_now:?}"
    );
    bits(&[true, set.is_some(), false, byte_for_byte, steps == 2])
}

/// A policies document as Firefox takes it: an empty `Preferences` / `ExtensionSettings`, an empty
/// `policies` and a missing one say the same (no policy).
fn firefox_reads(doc: &serde_json::Value) -> serde_json::Value {
    let mut doc = doc.clone();
    if let Some(root) = doc.as_object_mut() {
        if let Some(p) = root
            .get_mut("policies")
            .and_then(serde_json::Value::as_object_mut)
        {
            p.retain(|k, v| {
                !(matches!(k.as_str(), "Preferences" | "ExtensionSettings")
                    && v.as_object().is_some_and(serde_json::Map::is_empty))
            });
        }
        if root
            .get("policies")
            .and_then(serde_json::Value::as_object)
            .is_some_and(serde_json::Map::is_empty)
        {
            root.remove("policies");
        }
    }
    doc
}
