//! Kernel version parsing and the one version-dependent fact the doctor needs: does the running
//! kernel still spin `udelay(20)` in `azx_get_pos_skl()` for every capture position query on
//! Intel Skylake+ HD-audio controllers? Pure functions, no I/O.

use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KernelVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl KernelVersion {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Leading `X.Y[.Z]` of a string such as `5.10.197-1`, `6.1.0-18-amd64`, `5.5.8-100.fc30`.
    pub fn parse_prefix(s: &str) -> Option<Self> {
        let s = s.trim();
        let end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let mut it = s[..end].split('.').filter(|p| !p.is_empty());
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(Self::new(major, minor, patch))
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Where the upstream version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    /// `/proc/version` `... Debian 5.10.197-1 (...)`: Debian's release string (`5.10.0-26-amd64`)
    /// keeps the sublevel at 0, the real one is only here.
    DebianProcVersion,
    /// `/proc/version_signature` `Ubuntu 5.4.0-91.102-generic 5.4.157`.
    UbuntuSignature,
    /// `/proc/sys/kernel/osrelease` (or the `Linux version X` in /proc/version).
    Release,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelIdent {
    /// `uname -r`.
    pub release: String,
    pub version: Option<KernelVersion>,
    pub source: VersionSource,
}

/// Picks the best upstream version from what the kernel says about itself.
pub fn identify(
    osrelease: Option<&str>,
    proc_version: Option<&str>,
    version_signature: Option<&str>,
) -> KernelIdent {
    let release = osrelease
        .map(|s| s.trim().to_owned())
        .or_else(|| {
            proc_version.and_then(|v| {
                v.strip_prefix("Linux version ")
                    .and_then(|r| r.split_whitespace().next())
                    .map(str::to_owned)
            })
        })
        .unwrap_or_default();
    if let Some(v) = proc_version.and_then(debian_upstream) {
        return KernelIdent {
            release,
            version: Some(v),
            source: VersionSource::DebianProcVersion,
        };
    }
    if let Some(v) = version_signature.and_then(ubuntu_upstream) {
        return KernelIdent {
            release,
            version: Some(v),
            source: VersionSource::UbuntuSignature,
        };
    }
    KernelIdent {
        version: KernelVersion::parse_prefix(&release),
        release,
        source: VersionSource::Release,
    }
}

/// The LAST `Debian X.Y.Z` in /proc/version: the compiler string earlier on the line says
/// `(Debian 10.2.1-6)` too.
fn debian_upstream(proc_version: &str) -> Option<KernelVersion> {
    // Only after the `#1 SMP ...` build tag: the compiler string before it says
    // `(Debian 10.2.1-6)` on Debian and on any kernel built with Debian's gcc.
    let tail = &proc_version[proc_version.rfind('#')?..];
    tail.match_indices("Debian ")
        .filter_map(|(i, m)| KernelVersion::parse_prefix(&tail[i + m.len()..]))
        .last()
}

fn ubuntu_upstream(sig: &str) -> Option<KernelVersion> {
    // "Ubuntu 5.4.0-91.102-generic 5.4.157": the last field is the upstream stable version.
    sig.split_whitespace()
        .next_back()
        .and_then(KernelVersion::parse_prefix)
}

/// Whether the running kernel has the Skylake+ capture `udelay(20)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UdelayState {
    /// Older than the code that added it.
    NotIntroduced,
    Present,
    Removed,
}

/// `azx_get_pos_skl()` with its `udelay(20)` came with "ALSA: hda - Improved position reporting
/// on SKL+" (f87e7f25893d, 2017). ASSUMPTION (not verified here): first released in 4.12.
pub const UDELAY_INTRODUCED: KernelVersion = KernelVersion::new(4, 12, 0);

/// Upstream removal: "ALSA: hda: Reduce udelay() at SKL+ position reporting"
/// (46243b85b0ec5d2cee7545e5ce18c015ce91957e), merged for 5.16.
pub const UDELAY_REMOVED_UPSTREAM: KernelVersion = KernelVersion::new(5, 16, 0);

/// First stable release of each series that carries the backport ("ALSA: hda: Reduce udelay() at
/// SKL+ position reporting", with "ALSA: hda: Use position buffer for SKL+ again" in 5.10 .. 5.15);
/// the series not listed were end-of-life and never got it. Where each number was read:
/// docs/design/security.md, "Which stable kernels carry the Skylake+ capture udelay's removal".
pub const UDELAY_FIXED_IN_STABLE: &[KernelVersion] = &[
    KernelVersion::new(5, 15, 3),
    KernelVersion::new(5, 14, 19),
    KernelVersion::new(5, 10, 80),
    KernelVersion::new(5, 4, 160),
    KernelVersion::new(4, 19, 218),
    KernelVersion::new(4, 14, 256),
];

/// "5.15.3, 5.14.19, 5.10.80, 5.4.160, 4.19.218, 4.14.256": the table above for the messages, so
/// the text and the gate cannot disagree.
pub fn udelay_fixed_in_stable_list() -> String {
    UDELAY_FIXED_IN_STABLE
        .iter()
        .map(KernelVersion::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn skl_capture_udelay(v: KernelVersion) -> UdelayState {
    if v < UDELAY_INTRODUCED {
        return UdelayState::NotIntroduced;
    }
    if v >= UDELAY_REMOVED_UPSTREAM {
        return UdelayState::Removed;
    }
    match UDELAY_FIXED_IN_STABLE
        .iter()
        .find(|f| f.major == v.major && f.minor == v.minor)
    {
        Some(fixed) if v >= *fixed => UdelayState::Removed,
        _ => UdelayState::Present,
    }
}

/// `Some(why)` when kernel `v` is known to have no Skylake+ capture udelay (fixed, or too old to
/// have the code), so LPIB saves nothing there: `fix hda` has nothing to do, and a file of ours
/// left over from before a kernel upgrade wants `--revert`, not a module reload that would make
/// it take effect.
pub fn no_skl_udelay(v: KernelVersion) -> Option<String> {
    match skl_capture_udelay(v) {
        UdelayState::Present => None,
        UdelayState::Removed => Some(format!(
            "kernel {v} no longer has the Skylake+ recording busy-wait (udelay); the option would \
             not save anything"
        )),
        UdelayState::NotIntroduced => Some(format!(
            "kernel {v} is older than the code with the busy-wait; there is nothing to avoid"
        )),
    }
}

/// The first release of `v`'s series without the udelay, for the advice text.
pub fn udelay_fixed_release_for(v: KernelVersion) -> String {
    match UDELAY_FIXED_IN_STABLE
        .iter()
        .find(|f| f.major == v.major && f.minor == v.minor)
    {
        Some(f) => format!("{f} or later (or any 5.16+)"),
        None => "5.16 or later (this series never got the fix)".into(),
    }
}

/// The preemption model from the `uname -v` part of /proc/version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PreemptBuild {
    Rt,
    /// `PREEMPT_DYNAMIC`: the model is chosen at boot (`preempt=`), distro default voluntary.
    Dynamic,
    Full,
    /// No PREEMPT at all in the version string: none or voluntary.
    NoneOrVoluntary,
}

pub fn preempt_build(proc_version: &str) -> PreemptBuild {
    let words: Vec<&str> = proc_version.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") {
        PreemptBuild::Rt
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        PreemptBuild::Dynamic
    } else if words.contains(&"PREEMPT") {
        PreemptBuild::Full
    } else {
        PreemptBuild::NoneOrVoluntary
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DEB11: &str = "Linux version 5.10.0-26-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.197-1 (2023-09-29)\n";
    const DEB11_OLD: &str = "Linux version 5.10.0-9-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.70-1 (2021-09-30)\n";
    const FEDORA: &str = "Linux version 5.5.8-100.fc30.x86_64 (mockbuild@bkernel03.phx2.fedoraproject.org) (gcc version 9.2.1 20190827 (Red Hat 9.2.1-1) (GCC)) #1 SMP Thu Mar 5 21:58:14 UTC 2020\n";

    #[test]
    fn debian_sublevel_from_proc_version() {
        let k = identify(Some("5.10.0-26-amd64\n"), Some(DEB11), None);
        assert_eq!(k.release, "5.10.0-26-amd64");
        assert_eq!(k.version, Some(KernelVersion::new(5, 10, 197)));
        assert_eq!(k.source, VersionSource::DebianProcVersion);
    }

    #[test]
    fn ubuntu_signature_and_plain_release() {
        let k = identify(
            Some("5.4.0-91-generic"),
            Some("Linux version 5.4.0-91-generic (buildd@lcy01) (gcc version 9.3.0 (Ubuntu 9.3.0-17ubuntu1~20.04)) #102-Ubuntu SMP Fri Nov 5 16:31:28 UTC 2021"),
            Some("Ubuntu 5.4.0-91.102-generic 5.4.157\n"),
        );
        assert_eq!(k.version, Some(KernelVersion::new(5, 4, 157)));
        assert_eq!(k.source, VersionSource::UbuntuSignature);
        let k = identify(Some("5.5.8-100.fc30.x86_64"), Some(FEDORA), None);
        assert_eq!(k.version, Some(KernelVersion::new(5, 5, 8)));
        assert_eq!(k.source, VersionSource::Release);
        let k = identify(None, Some(FEDORA), None);
        assert_eq!(k.release, "5.5.8-100.fc30.x86_64");
        // Built with Debian's gcc, not a Debian kernel.
        let k = identify(
            Some("6.6.1-custom"),
            Some("Linux version 6.6.1-custom (me@x) (gcc (Debian 12.2.0-14) 12.2.0) #3 SMP Mon"),
            None,
        );
        assert_eq!(k.version, Some(KernelVersion::new(6, 6, 1)));
        assert_eq!(identify(Some("garbage"), None, None).version, None);
    }

    #[test]
    fn udelay_table() {
        use UdelayState::*;
        let cases = [
            ((4, 9, 300), NotIntroduced),
            ((4, 14, 255), Present),
            ((4, 14, 256), Removed),
            ((4, 19, 217), Present),
            ((4, 19, 218), Removed),
            ((5, 4, 159), Present),
            ((5, 4, 160), Removed),
            ((5, 5, 8), Present),
            ((5, 10, 70), Present),
            ((5, 10, 79), Present),
            ((5, 10, 80), Removed),
            ((5, 10, 197), Removed),
            ((5, 13, 19), Present),
            ((5, 14, 18), Present),
            ((5, 14, 19), Removed),
            ((5, 15, 2), Present),
            ((5, 15, 3), Removed),
            ((5, 16, 0), Removed),
            ((6, 1, 76), Removed),
        ];
        for ((a, b, c), want) in cases {
            assert_eq!(
                skl_capture_udelay(KernelVersion::new(a, b, c)),
                want,
                "{a}.{b}.{c}"
            );
        }
        assert_eq!(
            udelay_fixed_in_stable_list(),
            "5.15.3, 5.14.19, 5.10.80, 5.4.160, 4.19.218, 4.14.256"
        );
        let old = identify(None, Some(DEB11_OLD), None).version;
        assert_eq!(old.map(skl_capture_udelay), Some(Present));
    }

    #[test]
    fn preempt_models() {
        assert_eq!(preempt_build(DEB11), PreemptBuild::NoneOrVoluntary);
        assert_eq!(
            preempt_build(
                "Linux version 6.1.0-18-amd64 (x) #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"
            ),
            PreemptBuild::Dynamic
        );
        assert_eq!(
            preempt_build("Linux version 6.1.0-18-rt-amd64 (x) #1 SMP PREEMPT_RT Debian 6.1.76-1"),
            PreemptBuild::Rt
        );
        assert_eq!(
            preempt_build("Linux version 5.15.0-1-lowlatency (x) #1 SMP PREEMPT Tue"),
            PreemptBuild::Full
        );
    }
}
