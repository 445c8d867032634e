//! Turns [`Facts`] (and the audio server's facts) into findings. Pure: no I/O.

use serde::Serialize;

use crate::audio::{AudioServerFacts, DeviceLatency};
use crate::facts::{self, Card, Facts};
use crate::hda;
use crate::kernel::{self, PreemptBuild, UdelayState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    WorthChanging,
    NotApplicable,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id (`hda_udelay`); the popup keys on it.
    pub id: &'static str,
    /// `audio_server`, `sound`, `intel_hda`, `cpu`, `kernel`, `irq`, `limits`.
    pub category: &'static str,
    pub title: &'static str,
    pub status: Status,
    /// What the machine has now, one line.
    pub current: String,
    /// Why it matters for audio CPU or latency.
    pub why: String,
    /// A shell command that changes it, runnable as it is (the popup offers it for copying);
    /// `None` when there is none (nothing to do, or the change is an edit only a person can
    /// make: then `hint` says what to do).
    pub fix: Option<String>,
    /// What to do, for a person: the edit to make, what else to consider, when it takes effect.
    pub hint: Option<String>,
    /// Extra lines (per card, per core, per IRQ).
    pub details: Vec<String>,
}

impl Finding {
    fn with_fix(mut self, command: impl Into<String>) -> Self {
        self.fix = Some(command.into());
        self
    }

    fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn with_details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }
}

/// Below this a client keeps the server waking up at least every 20 ms.
pub const LOW_LATENCY_US: u64 = 20_000;
/// A hardware period this short means that many interrupts/wakeups per second.
pub const SHORT_PERIOD_US: u64 = 5_000;

pub const FIX_HDA: &str = "sudo micoff-host fix hda --apply";
pub const FIX_CLIENT_SHM: &str = "micoff-host fix client-shm --apply";
pub const FIX_GOVERNOR: &str = "sudo micoff-host fix governor --apply";
pub const REVERT_HDA: &str = "sudo micoff-host fix hda --revert";
pub const RELOAD_HDA: &str = "sudo modprobe -r snd_hda_intel && sudo modprobe snd_hda_intel";
pub const LARGER_LATENCY: &str = "PULSE_LATENCY_MSEC=60 chromium";
pub const PIPEWIRE_QUANTUM: &str = "pw-metadata -n settings 0 clock.min-quantum 1024";
pub const SMT_OFF: &str = "echo off | sudo tee /sys/devices/system/cpu/smt/control";

/// The audio server's facts, or why there are none.
pub type AudioInput<'a> = Result<&'a AudioServerFacts, &'a str>;

struct F {
    id: &'static str,
    category: &'static str,
    title: &'static str,
}

impl F {
    fn make(&self, status: Status, current: impl Into<String>, why: impl Into<String>) -> Finding {
        Finding {
            id: self.id,
            category: self.category,
            title: self.title,
            status,
            current: current.into(),
            why: why.into(),
            fix: None,
            hint: None,
            details: Vec::new(),
        }
    }
}

/// `s` as one shell word (single-quoted unless it is plainly safe).
pub fn shell_word(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if safe {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub fn diagnose(facts: &Facts, audio: AudioInput<'_>) -> Vec<Finding> {
    vec![
        audio_server(audio),
        device_latency(audio, true),
        device_latency(audio, false),
        srbchannel(facts, audio),
        client_shm(facts, audio),
        sound_cards(facts),
        pcm_periods(facts, audio),
        hda_controller(facts),
        hda_udelay(facts),
        hda_position_fix(facts),
        hda_power_save(facts),
        cpu_model(facts),
        cpu_governor(facts),
        cpu_smt(facts),
        kernel_preempt(facts),
        kernel_threadirqs(facts),
        kernel_isolation(facts),
        kernel_config(facts),
        irq_sharing(facts),
        rt_limits(facts),
        cpu_dma_latency(facts),
    ]
}

// ---- audio server -------------------------------------------------------------------------

fn server_label(a: &AudioServerFacts) -> String {
    if a.is_pipewire {
        format!(
            "PipeWire {} (pipewire-pulse, protocol {})",
            a.pipewire_version.as_deref().unwrap_or("?"),
            a.server_version
        )
    } else {
        format!("{} {}", a.server_name, a.server_version)
    }
}

fn audio_server(audio: AudioInput<'_>) -> Finding {
    let f = F {
        id: "audio_server",
        category: "audio_server",
        title: "Audio server",
    };
    let why = "The browser's microphone stream goes through this server; its version decides \
               which of the latency and shared-memory settings below apply.";
    match audio {
        Ok(a) => f.make(
            Status::Ok,
            format!("{} via {}", server_label(a), a.gathered_by),
            why,
        ),
        Err(e) => f.make(
            Status::NotApplicable,
            format!("no audio server reachable ({e})"),
            why,
        ),
    }
}

fn fmt_ms(us: u64) -> String {
    if us >= 10_000 {
        format!("{} ms", us / 1000)
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}

fn device_latency(audio: AudioInput<'_>, source: bool) -> Finding {
    let f = if source {
        F {
            id: "default_source_latency",
            category: "audio_server",
            title: "Default source (microphone) latency",
        }
    } else {
        F {
            id: "default_sink_latency",
            category: "audio_server",
            title: "Default sink (output) latency",
        }
    };
    let why = "The configured latency is the smallest any client asked for; the server wakes up \
               about that often. The seeds measured PulseAudio at 4 % of a core with 1000 ms, \
               16 % with 10 ms. Chromium asks 10 ms for processed (call) capture.";
    let dev: Option<&DeviceLatency> = match audio {
        Ok(a) if source => a.default_source.as_ref(),
        Ok(a) => a.default_sink.as_ref(),
        Err(_) => None,
    };
    let Some(dev) = dev else {
        let cur = match audio {
            Ok(_) => "no default device".to_owned(),
            Err(_) => "no audio server reachable".to_owned(),
        };
        return f.make(Status::NotApplicable, cur, why);
    };
    let state = dev.state.as_deref().unwrap_or("unknown");
    let cur = format!(
        "{}: {state}, latency {}, configured {}",
        dev.description.as_deref().unwrap_or(&dev.name),
        dev.latency_us.map(fmt_ms).unwrap_or_else(|| "?".into()),
        dev.configured_latency_us
            .map(fmt_ms)
            .unwrap_or_else(|| "?".into()),
    );
    let low = state == "running"
        && dev
            .configured_latency_us
            .is_some_and(|c| c > 0 && c < LOW_LATENCY_US);
    if low {
        f.make(Status::WorthChanging, cur, why)
            .with_fix(LARGER_LATENCY)
            .with_hint(
                "Start the browser with a larger client latency (PULSE_LATENCY_MSEC works for \
                 any libpulse client, on PulseAudio and on pipewire-pulse; put your browser's \
                 command in place of chromium).",
            )
    } else {
        f.make(Status::Ok, cur, why)
    }
}

/// ` (enable-memfd = no: POSIX shared memory instead)` when memfd is off somewhere.
fn memfd_note(facts: &Facts) -> String {
    let off: Vec<&str> = [
        ("client", &facts.client_conf),
        ("server", &facts.daemon_conf),
    ]
    .iter()
    .filter(|(_, c)| c.memfd_off())
    .map(|(who, _)| *who)
    .collect();
    if off.is_empty() {
        String::new()
    } else {
        format!(
            " ({} enable-memfd = no: POSIX shared memory instead of memfd, srbchannel still works)",
            off.join(" and ")
        )
    }
}

fn srbchannel(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F {
        id: "srbchannel",
        category: "audio_server",
        title: "srbchannel (shared-memory control channel)",
    };
    let why =
        "With srbchannel, stream control messages go through a shared ring buffer instead of \
         the socket; the seeds measured 25 % less CPU for a 10 ms recording client. It needs \
         PulseAudio >= 6, a local unix socket and shared memory (enable-shm) on both ends.";
    let a = match audio {
        Ok(a) => a,
        Err(_) => return f.make(Status::NotApplicable, "no audio server reachable", why),
    };
    if a.is_pipewire {
        return f.make(
            Status::NotApplicable,
            format!(
                "{}: pipewire-pulse has no shared memory or srbchannel",
                server_label(a)
            ),
            why,
        );
    }
    let mut problems = Vec::new();
    let mut hints = Vec::new();
    let mut fix = None;
    if a.unix_socket == Some(false) {
        problems.push(format!(
            "connected over {} (srbchannel is unix-socket only)",
            a.server_string.as_deref().unwrap_or("a non-unix transport")
        ));
        hints.push(
            "unset PULSE_SERVER (and default-server in client.conf) so clients use the local \
             unix socket"
                .to_owned(),
        );
    }
    if let Some(p) = a.server_protocol_version.filter(|p| *p < 30) {
        problems.push(format!("server protocol {p} < 30"));
        hints.push("upgrade PulseAudio to 6.0 or later".to_owned());
    }
    if a.srbchannel_module_arg == Some(false) {
        problems.push("module-native-protocol-unix loaded with srbchannel off".into());
        hints.push(
            "remove the srbchannel= argument from module-native-protocol-unix in default.pa, \
             then restart the server (systemctl --user restart pulseaudio)"
                .to_owned(),
        );
    }
    if !facts.daemon_conf.shm_on() {
        problems.push(format!(
            "server shared memory off ({})",
            facts.daemon_conf.shm_off_lines()
        ));
        hints.push(format!(
            "set enable-shm = yes in {}, then restart the server (systemctl --user restart \
             pulseaudio)",
            facts
                .daemon_conf
                .file
                .as_deref()
                .unwrap_or("/etc/pulse/daemon.conf")
        ));
    }
    if !facts.client_conf.shm_on() {
        problems.push(format!(
            "client shared memory off ({})",
            facts.client_conf.shm_off_lines()
        ));
        let (cmd, hint) = client_shm_fix(&facts.client_conf);
        fix = cmd;
        hints.push(hint);
    }
    if problems.is_empty() {
        f.make(
            Status::Ok,
            format!(
                "{}: usable by local clients{}",
                server_label(a),
                memfd_note(facts)
            ),
            why,
        )
    } else {
        let mut finding = f
            .make(Status::WorthChanging, problems.join("; "), why)
            .with_hint(hints.join("; "));
        finding.fix = fix;
        finding
    }
}

/// The command and hint that turn client shared memory back on.
fn client_shm_fix(c: &facts::ShmConf) -> (Option<String>, String) {
    if c.fixable_by_user_conf() {
        (
            Some(FIX_CLIENT_SHM.to_owned()),
            "writes enable-shm = yes into your ~/.config/pulse/client.conf (run as your user, \
             not root), then restart the browser"
                .to_owned(),
        )
    } else if c.from_env {
        (
            None,
            format!(
                "$PULSE_CLIENTCONFIG points clients at {}: set enable-shm = yes there (or unset \
                 the variable), then restart the browser",
                c.file.as_deref().unwrap_or("?")
            ),
        )
    } else {
        (
            None,
            format!(
                "set enable-shm = yes in {} (micoff does not edit client.conf.d files), then \
                 restart the browser",
                c.disabled_in().collect::<Vec<_>>().join(", ")
            ),
        )
    }
}

fn client_shm(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F {
        id: "client_shm",
        category: "audio_server",
        title: "Client shared memory (client.conf)",
    };
    let why = "Clients with `enable-shm = no` copy every audio block through the socket and \
               cannot use srbchannel. (`enable-memfd = no` alone only makes them use POSIX \
               shared memory instead of memfd; srbchannel still works.)";
    if let Ok(a) = audio {
        if a.is_pipewire {
            return f.make(
                Status::NotApplicable,
                "pipewire-pulse does not use client shared memory",
                why,
            );
        }
    }
    let c = &facts.client_conf;
    let file = c.file.as_deref().unwrap_or("no client.conf (defaults: on)");
    if c.shm_on() {
        let memfd = if c.memfd_off() {
            format!(
                "; memfd off ({}): POSIX shared memory is used instead",
                c.memfd_off_lines()
            )
        } else {
            String::new()
        };
        f.make(Status::Ok, format!("on ({file}){memfd}"), why)
    } else {
        let (cmd, hint) = client_shm_fix(c);
        let mut finding = f
            .make(
                Status::WorthChanging,
                format!("off: {}", c.shm_off_lines()),
                why,
            )
            .with_hint(hint);
        finding.fix = cmd;
        finding
    }
}

// ---- sound hardware -----------------------------------------------------------------------

fn card_label(c: &Card) -> String {
    format!(
        "card{} {} ({}, {})",
        c.index,
        c.id,
        c.driver,
        c.module.as_deref().unwrap_or("module ?")
    )
}

fn sound_cards(facts: &Facts) -> Finding {
    let f = F {
        id: "sound_cards",
        category: "sound",
        title: "Sound cards",
    };
    let why = "Which driver serves the microphone decides which of the driver checks below apply.";
    if facts.cards.is_empty() {
        let cur = if facts.asound_present {
            "no sound card"
        } else {
            "no sound card (/proc/asound missing)"
        };
        return f.make(Status::NotApplicable, cur, why);
    }
    let details = facts
        .cards
        .iter()
        .map(|c| {
            let mut s = format!("{}: {}", card_label(c), c.name);
            if let Some(p) = &c.pci {
                s.push_str(&format!(" [{:04x}:{:04x}]", p.vendor, p.device));
            }
            if let Some(u) = &c.usb_controller {
                s.push_str(&format!(" on the USB host controller at {u}"));
            }
            s
        })
        .collect::<Vec<_>>();
    let cur = facts
        .cards
        .iter()
        .map(card_label)
        .collect::<Vec<_>>()
        .join(", ");
    f.make(Status::Ok, cur, why).with_details(details)
}

fn pcm_periods(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F {
        id: "pcm_periods",
        category: "sound",
        title: "Open PCMs: period and buffer (the real wakeup interval)",
    };
    let why = "Each hardware period is an interrupt and a wakeup of the audio thread; periods \
               under 5 ms cost CPU in the driver, the server and the client.";
    let mut details = Vec::new();
    let mut short = false;
    for c in &facts.cards {
        for p in c.pcms.iter().filter(|p| p.state != "closed") {
            let dir = if p.capture { "capture" } else { "playback" };
            let line = match &p.hw_params {
                Some(hw) => {
                    if hw.period_us().is_some_and(|us| us < SHORT_PERIOD_US) {
                        short = true;
                    }
                    format!(
                        "card{} {}/{} {dir} {}: period {} frames ({}), buffer {} frames ({}) at {} Hz",
                        c.index,
                        p.name,
                        p.sub,
                        p.state,
                        hw.period_size_frames.unwrap_or(0),
                        hw.period_us().map(fmt_ms).unwrap_or_else(|| "?".into()),
                        hw.buffer_size_frames.unwrap_or(0),
                        hw.buffer_us().map(fmt_ms).unwrap_or_else(|| "?".into()),
                        hw.rate_hz.unwrap_or(0)
                    )
                }
                None => format!("card{} {}/{} {dir} {}", c.index, p.name, p.sub, p.state),
            };
            details.push(line);
        }
    }
    if details.is_empty() {
        return f.make(Status::NotApplicable, "no PCM open", why);
    }
    let cur = format!("{} open", details.len());
    let finding = if short {
        let pipewire = audio.is_ok_and(|a| a.is_pipewire);
        f.make(
            Status::WorthChanging,
            format!("{cur}, a period under {}", fmt_ms(SHORT_PERIOD_US)),
            why,
        )
        .with_fix(if pipewire {
            PIPEWIRE_QUANTUM
        } else {
            LARGER_LATENCY
        })
        .with_hint(format!(
            "raise the latency the client asks for (`{LARGER_LATENCY}`, with your browser's \
             command), or on PipeWire the quantum floor (`{PIPEWIRE_QUANTUM}`, until the \
             server restarts)"
        ))
    } else {
        f.make(Status::Ok, cur, why)
    };
    finding.with_details(details)
}

// ---- Intel HDA ----------------------------------------------------------------------------

fn dev_label(c: &Card) -> String {
    match c.hda_dev {
        Some(d) => format!("card{} (snd_hda_intel #{d})", c.index),
        None => format!("card{}", c.index),
    }
}

fn hda_controller(facts: &Facts) -> Finding {
    let f = F {
        id: "hda_controller",
        category: "intel_hda",
        title: "HD-audio controller",
    };
    let why = "On Intel Skylake and later, snd_hda_intel reads the capture position through \
               azx_get_pos_skl(), which on older kernels busy-waits 20 us per query.";
    let hda: Vec<&Card> = facts.cards.iter().filter(|c| c.is_hda_intel()).collect();
    if hda.is_empty() {
        return f.make(Status::NotApplicable, "snd_hda_intel not in use", why);
    }
    let details: Vec<String> = hda
        .iter()
        .map(|c| match &c.pci {
            Some(p) => format!(
                "{} {}: PCI {:04x}:{:04x}{} -> {}",
                dev_label(c),
                c.id,
                p.vendor,
                p.device,
                p.slot
                    .as_deref()
                    .map(|s| format!(" at {s}"))
                    .unwrap_or_default(),
                c.skylake_plus
                    .as_deref()
                    .map(|n| format!("Intel {n} (Skylake or later)"))
                    .unwrap_or_else(|| "not an Intel Skylake+ controller".into())
            ),
            None => format!("{} {}: PCI id unknown", dev_label(c), c.id),
        })
        .collect();
    let skl = hda.iter().filter(|c| c.skylake_plus.is_some()).count();
    let cur = format!(
        "{} card(s) on snd_hda_intel, {skl} Intel Skylake or later",
        hda.len()
    );
    f.make(Status::Ok, cur, why).with_details(details)
}

/// `position_fix=1 (LPIB)`.
fn pf_label(v: i32) -> String {
    format!("position_fix={v} ({})", hda::position_fix_name(v))
}

fn hda_udelay(facts: &Facts) -> Finding {
    let f = F {
        id: "hda_udelay",
        category: "intel_hda",
        title: "Skylake+ capture udelay in the kernel",
    };
    let why = format!(
        "Kernels before 5.16 spin udelay(20) in azx_get_pos_skl() on every capture position \
         query, unless they carry the November 2021 stable backport ({} or later in those \
         series). PulseAudio queries constantly, so recording burns CPU in the kernel (the \
         seeds: up to 29 % of the source thread in delay_tsc). position_fix values 0-4 and 6 \
         (1 = LPIB) avoid that path; -1 (the default) and 5 (SKL+) take it.",
        kernel::udelay_fixed_in_stable_list()
    );
    let skl: Vec<&Card> = facts
        .cards
        .iter()
        .filter(|c| c.is_intel_skl_hda())
        .collect();
    if skl.is_empty() {
        return f.make(
            Status::NotApplicable,
            "no Intel Skylake+ controller on snd_hda_intel",
            why,
        );
    }
    let k = &facts.kernel;
    let Some(v) = k.version else {
        return f.make(
            Status::NotApplicable,
            format!("kernel version unreadable ({:?})", k.release),
            why,
        );
    };
    let kdesc = if k.release.starts_with(&v.to_string()) {
        format!("kernel {v}")
    } else {
        format!("kernel {v} ({})", k.release)
    };
    match kernel::skl_capture_udelay(v) {
        UdelayState::Removed => f.make(Status::Ok, format!("{kdesc}: udelay removed"), why),
        UdelayState::NotIntroduced => f.make(
            Status::Ok,
            format!("{kdesc}: older than azx_get_pos_skl()"),
            why,
        ),
        UdelayState::Present => {
            let live = |c: &Card| facts.live_position_fix(c.position_fix_index());
            let unfixed: Vec<&Card> = skl
                .iter()
                .copied()
                .filter(|c| !hda::bypasses_skl_udelay(live(c)))
                .collect();
            if unfixed.is_empty() {
                let by: Vec<String> = skl
                    .iter()
                    .map(|c| format!("{} {}", dev_label(c), pf_label(live(c))))
                    .collect();
                return f.make(
                    Status::Ok,
                    format!("{kdesc} has the udelay, bypassed: {}", by.join(", ")),
                    why,
                );
            }
            let names = unfixed
                .iter()
                .map(|c| format!("{} {}", dev_label(c), pf_label(live(c))))
                .collect::<Vec<_>>()
                .join(", ");
            let cur = format!("{kdesc} still has the udelay; used by {names}");
            // Already configured (by anyone) for the next load: only the reload is missing.
            let pending = facts
                .next_position_fix(&unfixed, None)
                .filter(|next| next.on_udelay.is_empty());
            match pending {
                Some(facts::NextPositionFix { file, .. }) => f
                    .make(
                        Status::WorthChanging,
                        format!("{cur} until snd_hda_intel is reloaded"),
                        why,
                    )
                    .with_fix(RELOAD_HDA)
                    .with_hint(format!(
                        "{file} already sets a position_fix that avoids it; it takes effect \
                         when the module is reloaded with no stream open on the card, or after \
                         a reboot"
                    )),
                None => f
                    .make(Status::WorthChanging, cur, why)
                    .with_fix(FIX_HDA)
                    .with_hint(format!(
                        "writes position_fix=1 (LPIB) for the Skylake+ controllers into \
                         /etc/modprobe.d/micoff-hda.conf and offers the module reload; or \
                         upgrade the kernel to {}",
                        kernel::udelay_fixed_release_for(v)
                    )),
            }
        }
    }
}

fn hda_position_fix(facts: &Facts) -> Finding {
    let f = F {
        id: "hda_position_fix",
        category: "intel_hda",
        title: "snd_hda_intel position_fix",
    };
    let why = "position_fix is a per-controller array (entry n is the n-th controller \
               snd_hda_intel drives, not ALSA card n), read when the module loads; a value in \
               /etc/modprobe.d only takes effect after the module is reloaded or the machine \
               rebooted.";
    let cards: Vec<&Card> = facts.cards.iter().filter(|c| c.is_hda_intel()).collect();
    let (Some(params), false) = (facts.hda_params.as_ref(), cards.is_empty()) else {
        return f.make(Status::NotApplicable, "snd_hda_intel not in use", why);
    };
    let live: Vec<String> = cards
        .iter()
        .map(|c| {
            let v = hda::position_fix_for(&params.position_fix, c.position_fix_index());
            format!("{}={v} ({})", dev_label(c), hda::position_fix_name(v))
        })
        .collect();
    let mut details: Vec<String> = facts
        .modprobe_hda
        .iter()
        .map(|o| format!("{}: {}", o.file, o.line))
        .collect();
    // What modprobe would pass on the next load (the last position_fix= wins).
    let pending: Vec<String> = match facts.configured_position_fix(None) {
        Some((conf, _)) => cards
            .iter()
            .filter(|c| {
                hda::position_fix_for(&conf, c.position_fix_index())
                    != hda::position_fix_for(&params.position_fix, c.position_fix_index())
            })
            .map(|c| dev_label(c))
            .collect(),
        None => Vec::new(),
    };
    let cur = format!("live: {}", live.join(", "));
    // micoff's own file on a kernel that no longer needs it (upgraded since `fix hda`): the way
    // out is removing it, never a reload that would make a stale value take effect.
    if let Some(why_useless) = facts
        .micoff_hda_conf
        .then(|| crate::fix::hda::useless_on_this_kernel(facts))
        .flatten()
    {
        if !pending.is_empty() {
            details.push(format!(
                "configured value differs from the live one for {}",
                pending.join(", ")
            ));
        }
        return f
            .make(
                Status::WorthChanging,
                format!(
                    "{cur}; {} (written by micoff-host fix hda) is no longer needed",
                    crate::fix::hda::CONF_PATH
                ),
                why,
            )
            .with_fix(REVERT_HDA)
            .with_hint(format!(
                "{why_useless}: revert it; do not reload the module to make it take effect \
                 (the kernel default returns at the next module load or reboot)"
            ))
            .with_details(details);
    }
    if pending.is_empty() {
        f.make(Status::Ok, cur, why).with_details(details)
    } else {
        details.push(format!(
            "configured value differs from the live one for {}",
            pending.join(", ")
        ));
        f.make(
            Status::WorthChanging,
            format!("{cur}; modprobe.d sets another value (reload pending)"),
            why,
        )
        .with_fix(RELOAD_HDA)
        .with_hint(
            "reload with no stream open on the card (close the programs using it), or reboot",
        )
        .with_details(details)
    }
}

fn hda_power_save(facts: &Facts) -> Finding {
    let f = F {
        id: "hda_power_save",
        category: "intel_hda",
        title: "snd_hda_intel power_save",
    };
    let why = "With power_save > 0 the codec powers down after that many idle seconds; reopening \
               the microphone then takes longer and may click. It costs no CPU while recording.";
    match facts.hda_params.as_ref() {
        Some(p) if facts.cards.iter().any(|c| c.is_hda_intel()) => {
            let ps = p.power_save.as_deref().unwrap_or("?");
            let cur = if ps == "0" {
                "0 (codec always on)".to_owned()
            } else {
                format!("{ps} s (codec powers down when idle)")
            };
            f.make(Status::Ok, cur, why)
        }
        _ => f.make(Status::NotApplicable, "snd_hda_intel not in use", why),
    }
}

// ---- CPU ----------------------------------------------------------------------------------

fn cpu_model(facts: &Facts) -> Finding {
    let f = F {
        id: "cpu_model",
        category: "cpu",
        title: "CPU",
    };
    let c = &facts.cpu;
    let cur = format!(
        "{}: {} logical CPUs, {} cores",
        c.model.as_deref().unwrap_or("unknown model"),
        c.logical,
        c.physical_cores
    );
    let status = if c.logical == 0 {
        Status::NotApplicable
    } else {
        Status::Ok
    };
    f.make(
        status,
        cur,
        "Per-thread CPU figures are in % of one of these CPUs.",
    )
}

fn cpu_governor(facts: &Facts) -> Finding {
    let f = F {
        id: "cpu_governor",
        category: "cpu",
        title: "CPU frequency governor",
    };
    let why = "Frequency changes pause the core and slow governors ramp up late: short audio \
               wakeups run at low clock and take longer. `performance` avoids both (at some power cost).";
    if facts.governors.is_empty() {
        return f.make(
            Status::NotApplicable,
            "no cpufreq (virtual machine or fixed frequency)",
            why,
        );
    }
    let mut by_gov: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (cpu, g) in &facts.governors {
        by_gov.entry(g).or_default().push(cpu);
    }
    let cur = by_gov
        .iter()
        .map(|(g, cpus)| format!("{g} on {}", cpus.join(",")))
        .collect::<Vec<_>>()
        .join("; ");
    if facts.governors.iter().all(|(_, g)| g == "performance") {
        f.make(Status::Ok, cur, why)
    } else {
        f.make(Status::WorthChanging, cur, why)
            .with_fix(FIX_GOVERNOR)
            .with_hint(
                "until reboot, revertible with --revert; --cpus LIST sets only some cores (e.g. \
                 the ones the audio threads run on)",
            )
    }
}

fn cpu_smt(facts: &Facts) -> Finding {
    let f = F {
        id: "cpu_smt",
        category: "cpu",
        title: "SMT (hyper-threading)",
    };
    let why = "A sibling hyper-thread shares the core's execution units, so the audio thread's \
               wakeup time varies; it matters for sub-5 ms real-time work, little for calls.";
    match facts.smt_active {
        None => f.make(Status::NotApplicable, "not supported", why),
        Some(false) => f.make(Status::Ok, "off", why),
        Some(true) => f
            .make(Status::WorthChanging, "on", why)
            .with_fix(SMT_OFF)
            .with_hint(
                "until reboot (it halves the logical CPUs); add nosmt to the kernel command line \
                 to keep it off",
            ),
    }
}

// ---- kernel -------------------------------------------------------------------------------

fn has_arg(facts: &Facts, key: &str) -> Option<Option<String>> {
    let cmdline = facts.cmdline.as_deref()?;
    Some(
        crate::parse::cmdline(cmdline)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.unwrap_or_default()),
    )
}

fn grub_hint(arg: &str) -> String {
    format!(
        "add {arg} to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run sudo update-grub \
         (grub2-mkconfig or grubby on Fedora-like systems) and reboot"
    )
}

fn kernel_preempt(facts: &Facts) -> Finding {
    let f = F {
        id: "kernel_preempt",
        category: "kernel",
        title: "Kernel preemption model",
    };
    let why = "With full preemption a waking audio thread runs as soon as it is runnable instead \
               of waiting for the kernel to reach a preemption point (lower, steadier latency).";
    let Some(pv) = facts.proc_version.as_deref() else {
        return f.make(Status::NotApplicable, "/proc/version unreadable", why);
    };
    let preempt_arg = has_arg(facts, "preempt").flatten();
    match kernel::preempt_build(pv) {
        PreemptBuild::Rt => f.make(Status::Ok, "PREEMPT_RT", why),
        PreemptBuild::Full => f.make(Status::Ok, "PREEMPT (full)", why),
        PreemptBuild::Dynamic => match preempt_arg.as_deref() {
            Some("full") => f.make(Status::Ok, "PREEMPT_DYNAMIC, preempt=full", why),
            other => f
                .make(
                    Status::WorthChanging,
                    format!(
                        "PREEMPT_DYNAMIC, preempt={}",
                        other.unwrap_or("(default, usually voluntary)")
                    ),
                    why,
                )
                .with_hint(grub_hint("preempt=full")),
        },
        PreemptBuild::NoneOrVoluntary => f
            .make(
                Status::WorthChanging,
                "no preemption or voluntary (no PREEMPT in the build string)",
                why,
            )
            .with_hint(
                "install a lowlatency or PREEMPT_DYNAMIC kernel (Debian 12 and Ubuntu 22.04+ \
                 kernels are PREEMPT_DYNAMIC), then add preempt=full to the kernel command line",
            ),
    }
}

fn kernel_threadirqs(facts: &Facts) -> Finding {
    let f = F {
        id: "kernel_threadirqs",
        category: "kernel",
        title: "Threaded interrupt handlers",
    };
    let why = "With `threadirqs` interrupt handlers run as threads whose priority can be raised \
               for the sound card (rtirq), so other devices' interrupts do not delay audio.";
    let rt = facts
        .proc_version
        .as_deref()
        .is_some_and(|v| kernel::preempt_build(v) == PreemptBuild::Rt);
    match has_arg(facts, "threadirqs") {
        None => f.make(Status::NotApplicable, "/proc/cmdline unreadable", why),
        Some(Some(_)) => f.make(Status::Ok, "threadirqs on the command line", why),
        Some(None) if rt => f.make(Status::Ok, "PREEMPT_RT (always threaded)", why),
        Some(None) => f
            .make(Status::WorthChanging, "not set", why)
            .with_hint(grub_hint("threadirqs")),
    }
}

fn kernel_isolation(facts: &Facts) -> Finding {
    let f = F {
        id: "kernel_isolation",
        category: "kernel",
        title: "Core isolation (isolcpus, nohz_full, irqaffinity)",
    };
    let why = "Isolating a core for audio (isolcpus + nohz_full + irqaffinity) is for sub-ms \
               round trips; calls do not need it. Shown so the IRQ affinities below make sense.";
    let Some(_) = facts.cmdline.as_deref() else {
        return f.make(Status::NotApplicable, "/proc/cmdline unreadable", why);
    };
    let set: Vec<String> = ["isolcpus", "nohz_full", "irqaffinity", "rcu_nocbs"]
        .iter()
        .filter_map(|k| has_arg(facts, k).flatten().map(|v| format!("{k}={v}")))
        .collect();
    let cur = if set.is_empty() {
        "none".to_owned()
    } else {
        set.join(" ")
    };
    f.make(Status::Ok, cur, why)
}

fn kernel_config(facts: &Facts) -> Finding {
    let f = F {
        id: "kernel_config",
        category: "kernel",
        title: "Kernel config (timers, tickless, RT)",
    };
    let why = "High-resolution timers let PulseAudio's timer-based scheduling wake exactly when \
               the buffer needs it; without them wakeups round to the tick.";
    let Some(cfg) = facts.config.as_ref() else {
        return f.make(
            Status::NotApplicable,
            "no readable kernel config (/boot/config-*, /proc/config.gz)",
            why,
        );
    };
    let get = |k: &str| cfg.get(k).map(String::as_str).unwrap_or("n");
    let cur = format!(
        "HIGH_RES_TIMERS={} NO_HZ_IDLE={} NO_HZ_FULL={} PREEMPT_RT={} HZ={} ({})",
        get("CONFIG_HIGH_RES_TIMERS"),
        get("CONFIG_NO_HZ_IDLE"),
        get("CONFIG_NO_HZ_FULL"),
        get("CONFIG_PREEMPT_RT"),
        cfg.get("CONFIG_HZ").map(String::as_str).unwrap_or("?"),
        facts.config_file.as_deref().unwrap_or("?")
    );
    if get("CONFIG_HIGH_RES_TIMERS") == "y" {
        f.make(Status::Ok, cur, why)
    } else {
        f.make(Status::WorthChanging, cur, why)
            .with_hint("use a distribution kernel (built with CONFIG_HIGH_RES_TIMERS=y)")
    }
}

// ---- IRQs ---------------------------------------------------------------------------------

fn irq_line_label(i: &facts::IrqInfo) -> String {
    format!(
        "IRQ {} {}{} cpus {}",
        i.line.irq,
        i.line.actions.join(", "),
        if i.line.actions.len() > 1 {
            " [shared]"
        } else {
            ""
        },
        i.affinity_list.as_deref().unwrap_or("?")
    )
}

fn irq_sharing(facts: &Facts) -> Finding {
    let f = F {
        id: "irq_sharing",
        category: "irq",
        title: "Sound card interrupts",
    };
    let why = "A sound card's interrupt (a USB card's is its USB host controller's) shared with \
               another device runs both handlers on every interrupt and delays audio behind the \
               other device; smp_affinity_list shows which cores take it.";
    let mut details: Vec<String> = facts
        .irqs
        .iter()
        .map(|i| format!("{} ({} interrupts)", irq_line_label(i), i.line.count))
        .collect();
    if facts.cards.is_empty() {
        return f
            .make(Status::NotApplicable, "no sound card interrupt", why)
            .with_details(details);
    }
    // (who, line) for every line that carries a card's audio.
    let mut relevant: Vec<(String, &facts::IrqInfo)> = Vec::new();
    for c in &facts.cards {
        let who = match &c.usb_controller {
            Some(slot) => format!("card{} {} via USB {slot}", c.index, c.id),
            None => format!("card{} {}", c.index, c.id),
        };
        let irqs = c.audio_irqs();
        if irqs.is_empty() {
            if c.is_usb() {
                details.push(format!(
                    "card{}: the interrupt of its USB host controller is unknown",
                    c.index
                ));
            }
            continue;
        }
        for irq in irqs {
            if let Some(i) = facts.irqs.iter().find(|i| i.line.irq == irq) {
                relevant.push((who.clone(), i));
            }
        }
    }
    // Lines of snd_* handlers no card claimed (a card whose IRQ is not in its long name).
    let unclaimed: Vec<&facts::IrqInfo> = facts
        .irqs
        .iter()
        .filter(|i| {
            i.line.actions.iter().any(|a| a.starts_with("snd_"))
                && !relevant.iter().any(|(_, r)| r.line.irq == i.line.irq)
        })
        .collect();
    for i in unclaimed {
        relevant.push((i.line.actions.join(", "), i));
    }
    if relevant.is_empty() {
        return f
            .make(
                Status::NotApplicable,
                "no sound card interrupt found in /proc/interrupts",
                why,
            )
            .with_details(details);
    }
    let shared: Vec<String> = relevant
        .iter()
        .filter(|(_, i)| i.line.actions.len() > 1)
        .map(|(who, i)| format!("{who}: IRQ {} ({})", i.line.irq, i.line.actions.join(", ")))
        .collect();
    let cur = relevant
        .iter()
        .map(|(who, i)| format!("{who}: {}", irq_line_label(i)))
        .collect::<Vec<_>>()
        .join("; ");
    let finding = if shared.is_empty() {
        f.make(Status::Ok, format!("not shared: {cur}"), why)
    } else {
        f.make(
            Status::WorthChanging,
            format!("shared: {}", shared.join("; ")),
            why,
        )
        .with_hint(
            "no software switch unshares a legacy IRQ: move the other device (or the USB \
             headset) to a port on another controller (lsusb -t shows which), or enable MSI for \
             it",
        )
    };
    finding.with_details(details)
}

// ---- limits -------------------------------------------------------------------------------

fn rt_limits(facts: &Facts) -> Finding {
    let f = F {
        id: "rt_limits",
        category: "limits",
        title: "Realtime limits (RTPRIO, MEMLOCK)",
    };
    let why = "Audio threads get realtime priority only within RLIMIT_RTPRIO (PulseAudio and \
               PipeWire also ask rtkit); MEMLOCK lets them lock their buffers against page faults.";
    let l = &facts.limits;
    let Some(user) = l.user.as_deref() else {
        return f.make(Status::NotApplicable, "user unknown", why);
    };
    let rtprio = l
        .rtprio
        .as_ref()
        .map(|(v, _)| v.clone())
        .or_else(|| l.process_rtprio.as_ref().map(|(s, _)| s.clone()));
    let memlock = l
        .memlock
        .as_ref()
        .map(|(v, _)| v.clone())
        .or_else(|| l.process_memlock.as_ref().map(|(s, _)| s.clone()));
    let cur = format!(
        "{user}: rtprio {}, memlock {}{}",
        rtprio.as_deref().unwrap_or("0 (default)"),
        memlock.as_deref().unwrap_or("default"),
        l.rtprio
            .as_ref()
            .map(|(_, f)| format!(" ({f})"))
            .unwrap_or_default()
    );
    if user == "root" {
        return f.make(
            Status::Ok,
            format!("{cur}; root may use any RT priority"),
            why,
        );
    }
    let rt_ok = rtprio
        .as_deref()
        .is_some_and(|v| v == "unlimited" || v.parse::<u32>().is_ok_and(|n| n > 0));
    if rt_ok {
        f.make(Status::Ok, cur, why)
    } else {
        f.make(Status::WorthChanging, cur, why)
            .with_fix(format!(
                "printf '@audio - rtprio 95\\n@audio - memlock unlimited\\n' | sudo tee \
                 /etc/security/limits.d/95-audio.conf && sudo usermod -aG audio {}",
                shell_word(user)
            ))
            .with_hint("log in again afterwards: limits and group membership apply to new sessions")
    }
}

fn cpu_dma_latency(facts: &Facts) -> Finding {
    let f = F {
        id: "cpu_dma_latency",
        category: "limits",
        title: "/dev/cpu_dma_latency",
    };
    let why = "Holding this device open with a small value keeps CPUs out of deep idle states, \
               whose exit latency otherwise delays audio wakeups (JACK and PipeWire can use it).";
    if facts.cpu_dma_latency {
        f.make(Status::Ok, "present", why)
    } else {
        f.make(Status::NotApplicable, "missing (container?)", why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("tommi"), "tommi");
        assert_eq!(shell_word("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
