//! The doctor's report: a stable JSON document (`--json`, the `doctor` protocol request) and a
//! compact human listing.

use std::io::{self, Write};

use serde::Serialize;

use crate::facts::{self, Facts, UserEnv};
use crate::findings::{self, AudioInput, Finding, Status};
use crate::root::Root;

/// Bump when a field changes meaning or disappears (adding fields or findings does not).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub ok: usize,
    pub worth_changing: usize,
    pub not_applicable: usize,
    /// Checks that could not be made (no audio server reachable).
    pub failed: usize,
}

impl Summary {
    /// One more finding of `status`.
    fn count(&mut self, status: Status) {
        match status {
            Status::Ok => self.ok += 1,
            Status::WorthChanging => self.worth_changing += 1,
            Status::NotApplicable => self.not_applicable += 1,
            Status::Failed => self.failed += 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// The root the files were read from (`/` on a real machine).
    pub root: String,
    pub kernel_release: String,
    /// Upstream version the kernel checks used (`5.10.197`), when known.
    pub kernel_version: Option<String>,
    pub summary: Summary,
    pub findings: Vec<Finding>,
}

/// Reads `root` and judges it. `audio`: the server's facts, or why there are none.
pub fn build(root: &Root, env: &UserEnv, audio: AudioInput<'_>) -> Report {
    let facts = facts::gather(root, env);
    from_facts(root, &facts, audio)
}

pub fn from_facts(root: &Root, facts: &Facts, audio: AudioInput<'_>) -> Report {
    let findings = findings::diagnose(facts, audio);
    let mut summary = Summary::default();
    for f in &findings {
        summary.count(f.status);
    }
    Report {
        schema_version: SCHEMA_VERSION,
        root: root.base().display().to_string(),
        kernel_release: facts.kernel.release.clone(),
        kernel_version: facts.kernel.version.map(|v| v.to_string()),
        summary,
        findings,
    }
}

impl Report {
    /// The report with `extra` findings after its own (the host adds what micoff-doctor cannot
    /// see: which native messaging manifest each browser uses), the summary counting them.
    pub fn with(mut self, extra: Vec<Finding>) -> Self {
        for f in &extra {
            self.summary.count(f.status);
        }
        self.findings.extend(extra);
        self
    }

    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.id == id)
    }

    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self).map_err(io::Error::other)?;
        writeln!(out)
    }

    /// One line per finding; `why`, `fix` (the command) and `hint` under the ones worth
    /// changing; `details` when `verbose`.
    pub fn write_human(&self, out: &mut dyn Write, verbose: bool) -> io::Result<()> {
        writeln!(
            out,
            "micoff doctor: kernel {}{}",
            self.kernel_release,
            if self.root == "/" {
                String::new()
            } else {
                format!(" (root {})", self.root)
            }
        )?;
        let mut category = "";
        for f in &self.findings {
            if f.category != category {
                category = f.category;
                writeln!(out, "\n{}", category_title(category))?;
            }
            // ok / worth changing / not applicable.
            let tag = match f.status {
                Status::Ok => " ok ",
                Status::WorthChanging => "FIX ",
                Status::NotApplicable => " -- ",
                Status::Failed => "FAIL",
            };
            writeln!(out, "  [{tag}] {}: {}", f.title, f.current)?;
            let acts = matches!(f.status, Status::WorthChanging | Status::Failed);
            if acts || verbose {
                writeln!(out, "         why: {}", f.why)?;
            }
            if acts {
                if let Some(fix) = f.fix.as_deref() {
                    writeln!(out, "         fix: {fix}")?;
                }
                if let Some(hint) = f.hint.as_deref() {
                    writeln!(out, "         hint: {hint}")?;
                }
            }
            let show_details = verbose || acts || f.details.len() <= 4;
            if show_details {
                for d in &f.details {
                    writeln!(out, "         - {d}")?;
                }
            }
        }
        writeln!(
            out,
            "\n{} ok, {} worth changing, {} not applicable{}",
            self.summary.ok,
            self.summary.worth_changing,
            self.summary.not_applicable,
            match self.summary.failed {
                0 => String::new(),
                n => format!(", {n} failed"),
            }
        )
    }

    /// The findings that could not be checked (`doctor` exits 4 when there are any).
    pub fn failed(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.status == Status::Failed)
    }
}

fn category_title(c: &str) -> &'static str {
    match c {
        "audio_server" => "Audio server",
        "sound" => "Sound hardware",
        "intel_hda" => "Intel HD-audio",
        "cpu" => "CPU",
        "kernel" => "Kernel",
        "irq" => "Interrupts",
        "limits" => "Realtime limits",
        "native_messaging" => "Native messaging (the extension and micoff-host)",
        _ => "Other",
    }
}
