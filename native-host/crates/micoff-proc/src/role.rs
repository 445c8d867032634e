//! What a process is for: its [`Role`] (from its comm and command line) and its [`BrowserFamily`]
//! (its main executable's name, from the browser table in micoff-browsers).

use serde::{Deserialize, Serialize};

pub use micoff_browsers::BrowserFamily;

use crate::parse::arg_tokens;

/// The role of a process. Serialized as a stable snake_case string (open set: deserializing an
/// unknown string gives [`Role::Other`]); [`Role::label`] is the human name.
///
/// The strings follow native-host/PROTOCOL.md where it names the role (`browser`, `renderer`,
/// `audio_service`, `content`, `socket`, `audio_server`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The browser's main process (Chromium without `--type`, Firefox's parent process).
    Browser,
    /// Chromium `--type=renderer`.
    Renderer,
    /// Chromium renderer with `--extension-process`; Firefox `WebExtensions`.
    ExtensionRenderer,
    /// Chromium utility `audio.mojom.AudioService`.
    AudioService,
    /// Chromium utility `network.mojom.NetworkService`.
    NetworkService,
    /// Chromium utility `storage.mojom.StorageService`.
    StorageService,
    /// Chromium `--type=gpu-process`, Firefox `GPU Process`.
    Gpu,
    /// Chromium `--type=zygote`.
    Zygote,
    /// Any other Chromium utility process, Firefox `Utility Process`.
    Utility,
    /// `chrome_crashpad_handler`.
    Crashpad,
    /// Firefox `Web Content`, `Isolated Web Co`, `Privileged Cont`, `file:// Content`.
    Content,
    /// Firefox `Socket Process`.
    Socket,
    /// Firefox `RDD Process` (remote data decoder).
    Rdd,
    /// Firefox `forkserver`.
    Forkserver,
    /// PulseAudio (`pulseaudio`): the process holding the PulseAudio socket.
    AudioServer,
    /// `pipewire-pulse`: PipeWire's PulseAudio server.
    PipewirePulse,
    /// The `pipewire` daemon.
    Pipewire,
    /// The `wireplumber` session manager.
    Wireplumber,
    /// Anything else.
    #[serde(other)]
    Other,
}

impl Role {
    pub const ALL: [Role; 19] = [
        Role::Browser,
        Role::Renderer,
        Role::ExtensionRenderer,
        Role::AudioService,
        Role::NetworkService,
        Role::StorageService,
        Role::Gpu,
        Role::Zygote,
        Role::Utility,
        Role::Crashpad,
        Role::Content,
        Role::Socket,
        Role::Rdd,
        Role::Forkserver,
        Role::AudioServer,
        Role::PipewirePulse,
        Role::Pipewire,
        Role::Wireplumber,
        Role::Other,
    ];

    /// The stable string (the serde form).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Browser => "browser",
            Role::Renderer => "renderer",
            Role::ExtensionRenderer => "extension_renderer",
            Role::AudioService => "audio_service",
            Role::NetworkService => "network_service",
            Role::StorageService => "storage_service",
            Role::Gpu => "gpu",
            Role::Zygote => "zygote",
            Role::Utility => "utility",
            Role::Crashpad => "crashpad",
            Role::Content => "content",
            Role::Socket => "socket",
            Role::Rdd => "rdd",
            Role::Forkserver => "forkserver",
            Role::AudioServer => "audio_server",
            Role::PipewirePulse => "pipewire_pulse",
            Role::Pipewire => "pipewire",
            Role::Wireplumber => "wireplumber",
            Role::Other => "other",
        }
    }

    /// A human name for tables ("audio service", "web content", "PulseAudio").
    pub fn label(self) -> &'static str {
        match self {
            Role::Browser => "browser",
            Role::Renderer => "renderer",
            Role::ExtensionRenderer => "extension renderer",
            Role::AudioService => "audio service",
            Role::NetworkService => "network service",
            Role::StorageService => "storage service",
            Role::Gpu => "gpu",
            Role::Zygote => "zygote",
            Role::Utility => "utility",
            Role::Crashpad => "crashpad",
            Role::Content => "web content",
            Role::Socket => "socket process",
            Role::Rdd => "rdd",
            Role::Forkserver => "forkserver",
            Role::AudioServer => "audio server (PulseAudio)",
            Role::PipewirePulse => "audio server (pipewire-pulse)",
            Role::Pipewire => "audio server (pipewire)",
            Role::Wireplumber => "audio server (wireplumber)",
            Role::Other => "other",
        }
    }

    /// Whether the role is part of the audio server (PulseAudio or the PipeWire family).
    pub fn is_audio_server(self) -> bool {
        matches!(
            self,
            Role::AudioServer | Role::PipewirePulse | Role::Pipewire | Role::Wireplumber
        )
    }

    /// Names a process from its comm and its command line (see [`crate::parse::parse_cmdline`]).
    ///
    /// Order matters: audio servers and Firefox children are named by comm (Firefox content processes
    /// keep the fork server's command line); Chromium children by their `--type=` flag (their comm is
    /// the browser's, e.g. `chromium`).
    pub fn classify(comm: &str, args: &[String]) -> Role {
        if let Some(role) = audio_server_role(comm) {
            return role;
        }
        let argv0 = args.first().and_then(|a| a.split(' ').next()).unwrap_or("");
        if comm.starts_with("chrome_crashpad") || basename(argv0).contains("crashpad_handler") {
            return Role::Crashpad;
        }
        if let Some(role) = firefox_child_role(comm) {
            return role;
        }
        let mut kind = None;
        let mut sub_type = "";
        let mut extension = false;
        for tok in arg_tokens(args) {
            if let Some(t) = tok.strip_prefix("--type=") {
                kind = Some(t);
            } else if let Some(t) = tok.strip_prefix("--utility-sub-type=") {
                sub_type = t;
            } else if tok == "--extension-process" {
                extension = true;
            }
        }
        match kind {
            Some("renderer") if extension => Role::ExtensionRenderer,
            Some("renderer") => Role::Renderer,
            Some("gpu-process") => Role::Gpu,
            Some("zygote") => Role::Zygote,
            Some("crashpad-handler") => Role::Crashpad,
            Some("utility") => match sub_type {
                "audio.mojom.AudioService" => Role::AudioService,
                "network.mojom.NetworkService" => Role::NetworkService,
                "storage.mojom.StorageService" => Role::StorageService,
                _ => Role::Utility,
            },
            Some(_) => Role::Other,
            None if browser_family_of_name(comm).is_some()
                || browser_family_of_name(basename(argv0)).is_some() =>
            {
                Role::Browser
            }
            None => Role::Other,
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn audio_server_role(comm: &str) -> Option<Role> {
    Some(match comm {
        "pulseaudio" => Role::AudioServer,
        "pipewire-pulse" => Role::PipewirePulse,
        "pipewire" => Role::Pipewire,
        "wireplumber" => Role::Wireplumber,
        _ => return None,
    })
}

/// Firefox child processes are recognisable by the comm Gecko gives them (15-byte truncated).
fn firefox_child_role(comm: &str) -> Option<Role> {
    Some(match comm {
        "Web Content" | "Isolated Web Co" | "Privileged Cont" | "file:// Content"
        | "Isolated Servic" | "Privileged Mozi" => Role::Content,
        "WebExtensions" => Role::ExtensionRenderer,
        "Socket Process" => Role::Socket,
        "RDD Process" => Role::Rdd,
        "GPU Process" => Role::Gpu,
        "Utility Process" => Role::Utility,
        "forkserver" => Role::Forkserver,
        _ => return None,
    })
}

/// The longest comm the kernel keeps (`TASK_COMM_LEN` 16, with the NUL): longer names are cut.
const COMM_MAX_BYTES: usize = 15;

/// The browser family whose main executable has this name (a comm, or an exe/argv0 basename): a
/// process name of a browser of the table ([`micoff_browsers::Browser::process_names`]).
/// A comm is cut to 15 bytes, so a 15-byte name that begins a longer one matches it too
/// (`chromium-browse`).
pub fn browser_family_of_name(name: &str) -> Option<BrowserFamily> {
    let is = |full: &str| full == name || (name.len() == COMM_MAX_BYTES && full.starts_with(name));
    micoff_browsers::Browser::ALL
        .into_iter()
        .find(|b| b.process_names().any(is))
        .map(micoff_browsers::Browser::family)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_cmdline;

    fn nul(args: &[&str]) -> Vec<String> {
        let mut v = Vec::new();
        for a in args {
            v.extend_from_slice(a.as_bytes());
            v.push(0);
        }
        parse_cmdline(&v)
    }

    #[test]
    fn chromium_roles() {
        let exe = "/usr/lib/chromium/chromium";
        let cases: &[(&str, &[&str], Role)] = &[
            ("chromium", &[exe, "--user-data-dir=/tmp/x"], Role::Browser),
            (
                "chromium",
                &[exe, "--type=renderer", "--lang=en"],
                Role::Renderer,
            ),
            (
                "chromium",
                &[exe, "--type=renderer", "--extension-process", "--lang=en"],
                Role::ExtensionRenderer,
            ),
            (
                "chromium",
                &[
                    exe,
                    "--type=utility",
                    "--utility-sub-type=audio.mojom.AudioService",
                ],
                Role::AudioService,
            ),
            (
                "chromium",
                &[
                    exe,
                    "--type=utility",
                    "--utility-sub-type=network.mojom.NetworkService",
                ],
                Role::NetworkService,
            ),
            (
                "chromium",
                &[
                    exe,
                    "--type=utility",
                    "--utility-sub-type=storage.mojom.StorageService",
                ],
                Role::StorageService,
            ),
            (
                "chromium",
                &[
                    exe,
                    "--type=utility",
                    "--utility-sub-type=data_decoder.mojom.DataDecoderService",
                ],
                Role::Utility,
            ),
            ("chromium", &[exe, "--type=gpu-process"], Role::Gpu),
            (
                "chromium",
                &[exe, "--type=zygote", "--no-zygote-sandbox"],
                Role::Zygote,
            ),
            (
                "chrome_crashpad",
                &[
                    "/usr/lib/chromium/chrome_crashpad_handler",
                    "--monitor-self",
                ],
                Role::Crashpad,
            ),
            ("chromium", &[exe, "--type=broker"], Role::Other),
            ("chrome", &["/opt/google/chrome/chrome"], Role::Browser),
            (
                "msedge",
                &["/opt/microsoft/msedge/msedge", "--type=renderer"],
                Role::Renderer,
            ),
            // Debian's wrapper exec'd: comm is the binary's name.
            ("chromium", &[], Role::Browser),
        ];
        for (comm, args, want) in cases {
            assert_eq!(Role::classify(comm, &nul(args)), *want, "{comm} {args:?}");
        }
    }

    #[test]
    fn chromium_rewritten_title() {
        // Chromium children rewrite argv into one space-separated string.
        let args = parse_cmdline(
            b"/usr/lib/chromium/chromium --type=utility --utility-sub-type=audio.mojom.AudioService --lang=en-US\0\0\0\0",
        );
        assert_eq!(Role::classify("chromium", &args), Role::AudioService);
        let args =
            parse_cmdline(b"/usr/lib/chromium/chromium --type=renderer --extension-process\0");
        assert_eq!(Role::classify("chromium", &args), Role::ExtensionRenderer);
    }

    #[test]
    fn firefox_roles_by_comm() {
        // Content processes keep the fork server's command line; only comm tells them apart.
        let fork = nul(&[
            "/usr/lib/firefox-esr/firefox-esr",
            "-contentproc",
            "-forkserver",
        ]);
        let cases: &[(&str, Role)] = &[
            ("Web Content", Role::Content),
            ("Isolated Web Co", Role::Content),
            ("Privileged Cont", Role::Content),
            ("WebExtensions", Role::ExtensionRenderer),
            ("Socket Process", Role::Socket),
            ("RDD Process", Role::Rdd),
            ("GPU Process", Role::Gpu),
            ("Utility Process", Role::Utility),
            ("forkserver", Role::Forkserver),
        ];
        for (comm, want) in cases {
            assert_eq!(Role::classify(comm, &fork), *want, "{comm}");
        }
        let main = nul(&[
            "/usr/lib/firefox-esr/firefox-esr",
            "--headless",
            "-profile",
            "/tmp/p",
        ]);
        assert_eq!(Role::classify("firefox-esr", &main), Role::Browser);
        assert_eq!(
            Role::classify("firefox", &nul(&["/usr/lib/firefox/firefox"])),
            Role::Browser
        );
    }

    #[test]
    fn audio_server_roles() {
        let cases: &[(&str, Role)] = &[
            ("pulseaudio", Role::AudioServer),
            ("pipewire-pulse", Role::PipewirePulse),
            ("pipewire", Role::Pipewire),
            ("wireplumber", Role::Wireplumber),
            ("bash", Role::Other),
        ];
        for (comm, want) in cases {
            assert_eq!(Role::classify(comm, &nul(&[comm])), *want, "{comm}");
            assert_eq!(want.is_audio_server(), *want != Role::Other);
        }
    }

    #[test]
    fn role_strings_round_trip() {
        for role in Role::ALL {
            let json = serde_json::to_string(&role).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", role.as_str()));
            let back: Role = serde_json::from_str(&json).unwrap_or(Role::Other);
            assert_eq!(back, role);
            assert!(!role.label().is_empty());
        }
        let unknown: Role = serde_json::from_str("\"something_new\"").unwrap_or(Role::Browser);
        assert_eq!(unknown, Role::Other);
        assert_eq!(
            serde_json::to_string(&BrowserFamily::Firefox).unwrap_or_default(),
            "\"firefox\""
        );
    }

    #[test]
    fn family_names() {
        for n in [
            "chromium",
            "chrome",
            "google-chrome",
            "msedge",
            "brave",
            "vivaldi",
            "vivaldi-bin",
        ] {
            assert_eq!(
                browser_family_of_name(n),
                Some(BrowserFamily::Chromium),
                "{n}"
            );
        }
        for n in ["firefox", "firefox-esr", "firefox-bin"] {
            assert_eq!(
                browser_family_of_name(n),
                Some(BrowserFamily::Firefox),
                "{n}"
            );
        }
        for n in [
            "chromium-wrapper",
            "sh",
            "node",
            "chrome_crashpad",
            "Web Content",
        ] {
            assert_eq!(browser_family_of_name(n), None, "{n}");
        }
    }

    #[test]
    fn family_names_cut_to_a_comm() {
        for (n, f) in [
            ("chromium-browse", BrowserFamily::Chromium),
            ("chromium-freewo", BrowserFamily::Chromium),
            ("google-chrome-s", BrowserFamily::Chromium),
            ("google-chrome-b", BrowserFamily::Chromium),
            ("google-chrome-u", BrowserFamily::Chromium),
            ("firefox-develop", BrowserFamily::Firefox),
            ("firefox-nightly", BrowserFamily::Firefox),
        ] {
            assert_eq!(browser_family_of_name(n), Some(f), "{n}");
        }
        // Only a comm-length name is taken as cut: shorter beginnings are other programs.
        for n in [
            "chromium-brows",
            "google-chrome-",
            "firefox-dev",
            "google-chrome-x",
        ] {
            assert_eq!(browser_family_of_name(n), None, "{n}");
        }
    }
}
