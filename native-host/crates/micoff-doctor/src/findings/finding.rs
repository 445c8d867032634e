//! What a finding is ([`Finding`], its [`Status`]), how each check makes one ([`F`]), and the
//! helpers every category's checks share.

use serde::Serialize;

use crate::audio::AudioServerFacts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    WorthChanging,
    NotApplicable,
    /// The doctor could not check what it had to (no audio server reachable): `doctor` exits 4.
    Failed,
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
    pub(crate) fn with_fix(mut self, command: impl Into<String>) -> Self {
        self.fix = Some(command.into());
        self
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub(crate) fn with_details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }
}

/// Why there are no audio server facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAudio<'a> {
    /// Not asked, on purpose (`--no-audio`, a `--root` that is not this machine).
    NotQueried(&'a str),
    /// Asked, and no server answered: a failure the report shows and `doctor` exits 4 for.
    Unreachable(&'a str),
}

impl std::fmt::Display for NoAudio<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoAudio::NotQueried(why) | NoAudio::Unreachable(why) => f.write_str(why),
        }
    }
}

/// The audio server's facts, or why there are none.
pub type AudioInput<'a> = Result<&'a AudioServerFacts, NoAudio<'a>>;

/// A check's header: its finding's stable id, category and title.
pub(crate) struct F {
    id: &'static str,
    category: &'static str,
    title: &'static str,
}

impl F {
    pub(crate) const fn new(id: &'static str, category: &'static str, title: &'static str) -> Self {
        Self {
            id,
            category,
            title,
        }
    }

    pub(crate) fn make(
        &self,
        status: Status,
        current: impl Into<String>,
        why: impl Into<String>,
    ) -> Finding {
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

/// Microseconds as milliseconds for a finding's line (`12 ms`, `2.5 ms`).
pub(crate) fn fmt_ms(us: u64) -> String {
    if us >= 10_000 {
        format!("{} ms", us / 1000)
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}

/// Why the checks of sound hardware and of the kernel's audio settings do not apply here: no
/// sound card (`/proc/asound/cards` lists none, or `/proc/asound` is missing), so nothing the
/// kernel does for a card's interrupts or timing touches this machine's audio. `None` with a card.
pub(crate) fn no_sound_card(facts: &crate::facts::Facts) -> Option<String> {
    if !facts.cards.is_empty() {
        return None;
    }
    Some(if facts.asound_present {
        "no sound card (/proc/asound/cards lists none)".to_owned()
    } else {
        "no sound card (/proc/asound is missing)".to_owned()
    })
}

/// The `current` of a sound-hardware or kernel finding on a machine without a sound card.
pub(crate) fn not_for_no_card(no_card: &str) -> String {
    format!("{no_card}: nothing to tune for audio here")
}
