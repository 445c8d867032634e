//! micoff's fuzz targets, one home for both runners:
//! - `native-host/fuzz` (cargo-fuzz, nightly): each `fuzz_targets/<name>.rs` calls [`run`];
//! - `micoff-fuzz` (this crate's binary, stable): a bounded mutation loop over the committed seed
//!   corpus (`native-host/fuzz/seeds/<name>/`) and dictionaries (`native-host/fuzz/dicts/`), what
//!   `npm test` runs when there is no nightly toolchain with cargo-fuzz.
//!
//! A target panics on a bug (a crash, or an invariant it checks failing) and otherwise returns a
//! small "behaviour signature" (which parsers accepted the input, which error code the decoder
//! gave...): the stable runner keeps a mutated input that shows a signature not seen before, a
//! crude stand-in for libFuzzer's coverage feedback.

pub mod framing;
pub mod mutate;

use micoff_doctor::parse as doctor;
use micoff_host::protocol::{decode_request, ErrorCode};
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
