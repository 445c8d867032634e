//! micoff-audio-server: one answer to "where is the audio server, and which one is it", pure (the
//! environment comes in as [`ServerEnv`], ordered candidates come out), so micoff-pulse,
//! micoff-proc, the bench and the doctor cannot disagree. libpulse's order: `$PULSE_SERVER`, else
//! client.conf's `default-server` ([`client_conf_server`]), a list tried in order and nothing after
//! it; else the user's runtime socket (`$PULSE_RUNTIME_PATH/native`, else
//! `$XDG_RUNTIME_DIR/pulse/native`); else [`SYSTEM_SOCKET`]. client.conf is read through closures
//! ([`disk`] has the real ones), so the rules are tested without a file system.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The system-wide server's socket (PulseAudio's `--system` mode).
pub const SYSTEM_SOCKET: &str = "/var/run/pulse/native";

/// The environment variables the resolver reads. Empty or blank values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerEnv {
    pub pulse_server: Option<String>,
    pub pulse_runtime_path: Option<String>,
    pub xdg_runtime_dir: Option<String>,
    /// client.conf's `default-server` (see [`ServerEnv::with_client_conf`]); below `$PULSE_SERVER`.
    pub conf_server: Option<String>,
}

impl ServerEnv {
    /// From a lookup function (`std::env::var(k).ok()`, a map, a test table).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        Self {
            pulse_server: get("PULSE_SERVER"),
            pulse_runtime_path: get("PULSE_RUNTIME_PATH"),
            xdg_runtime_dir: get("XDG_RUNTIME_DIR"),
            conf_server: None,
        }
    }

    /// From this process's environment, with the client.conf it reads.
    pub fn from_process() -> Self {
        let lookup = |k: &str| std::env::var(k).ok();
        Self::from_lookup(lookup).with_client_conf(lookup, disk::read, disk::list)
    }

    /// From an environment captured as a map (another process's: its `HOME` and the variables of
    /// [`CONF_ENV`] too, for the client.conf it reads), with that client.conf.
    pub fn from_map(env: &HashMap<String, String>) -> Self {
        let lookup = |k: &str| env.get(k).cloned();
        Self::from_lookup(lookup).with_client_conf(lookup, disk::read, disk::list)
    }

    /// The same environment with client.conf's `default-server` as libpulse would read it for the
    /// environment `lookup` describes, through `read` (a file's text) and `list` (a folder's files).
    pub fn with_client_conf(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
        read: impl Fn(&Path) -> Option<String>,
        list: impl Fn(&Path) -> Vec<PathBuf>,
    ) -> Self {
        self.conf_server = client_conf_server(lookup, read, list);
        self
    }

    /// The same environment with an explicit server (a `--server` option) in place of
    /// `$PULSE_SERVER`; `None` keeps the environment's.
    pub fn with_server(mut self, server: Option<&str>) -> Self {
        if let Some(s) = server.filter(|s| !s.trim().is_empty()) {
            self.pulse_server = Some(s.to_owned());
        }
        self
    }
}

/// One place libpulse may find the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// A unix socket.
    Unix(PathBuf),
    /// A network server (`tcp:host`, a host name, ...), as written.
    Network(String),
}

impl Candidate {
    /// The socket path, for a unix candidate.
    pub fn socket(&self) -> Option<&Path> {
        match self {
            Candidate::Unix(p) => Some(p),
            Candidate::Network(_) => None,
        }
    }

    /// As a libpulse server string (`unix:/path`, or the network entry as written).
    pub fn server_string(&self) -> String {
        match self {
            Candidate::Unix(p) => format!("unix:{}", p.display()),
            Candidate::Network(s) => s.clone(),
        }
    }
}

/// One entry of a server string: `unix:/x/native`, `/x/native`, `{machine-id}unix:/x/native` are
/// unix sockets; anything else is a network server.
pub fn parse_entry(entry: &str) -> Candidate {
    let entry = entry.trim();
    // `{machine-id}` limits the entry to that machine; we take it regardless.
    let rest = match entry.strip_prefix('{') {
        Some(rest) => rest.split_once('}').map_or(rest, |(_, after)| after),
        None => entry,
    };
    let path = rest.strip_prefix("unix:").unwrap_or(rest);
    if path.starts_with('/') {
        Candidate::Unix(PathBuf::from(path))
    } else {
        Candidate::Network(entry.to_owned())
    }
}

/// The first unix socket in a server string (a list of entries), e.g. the string libpulse reports
/// for the server it is connected to. `None` for a network server.
pub fn socket_of(server: &str) -> Option<PathBuf> {
    server
        .split_ascii_whitespace()
        .find_map(|entry| match parse_entry(entry) {
            Candidate::Unix(p) => Some(p),
            Candidate::Network(_) => None,
        })
}

/// Every server libpulse would try, in its order (see the crate documentation).
pub fn candidates(env: &ServerEnv) -> Vec<Candidate> {
    if let Some(servers) = env.pulse_server.as_ref().or(env.conf_server.as_ref()) {
        return servers.split_ascii_whitespace().map(parse_entry).collect();
    }
    let mut out = Vec::new();
    if let Some(d) = &env.pulse_runtime_path {
        out.push(Candidate::Unix(Path::new(d.trim()).join("native")));
    } else if let Some(d) = &env.xdg_runtime_dir {
        out.push(Candidate::Unix(
            Path::new(d.trim()).join("pulse").join("native"),
        ));
    }
    out.push(Candidate::Unix(PathBuf::from(SYSTEM_SOCKET)));
    out
}

/// The unix sockets among [`candidates`], in order.
pub fn socket_candidates(env: &ServerEnv) -> Vec<PathBuf> {
    candidates(env)
        .into_iter()
        .filter_map(|c| match c {
            Candidate::Unix(p) => Some(p),
            Candidate::Network(_) => None,
        })
        .collect()
}

/// The socket libpulse would connect to: the first candidate socket that `exists` (libpulse moves
/// on when a socket cannot be connected), else the first candidate socket. `None` when every
/// candidate is a network server.
pub fn first_socket(env: &ServerEnv, exists: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let sockets = socket_candidates(env);
    sockets
        .iter()
        .find(|p| exists(p))
        .or_else(|| sockets.first())
        .cloned()
}

/// The sockets libpulse would try, when none of them is there (`exists`) and no candidate is a
/// network server: no audio server is running at all, whatever libpulse's own error for it says
/// ("Access denied", "Connection refused"). `None` when a socket is there or a candidate is
/// reached over the network.
pub fn missing_sockets(env: &ServerEnv, exists: impl Fn(&Path) -> bool) -> Option<Vec<PathBuf>> {
    let all = candidates(env);
    let sockets = socket_candidates(env);
    (sockets.len() == all.len() && !sockets.iter().any(|p| exists(p))).then_some(sockets)
}

/// All candidates as one server string, for messages (`unix:/run/user/1/pulse/native
/// unix:/var/run/pulse/native`).
pub fn describe(env: &ServerEnv) -> String {
    candidates(env)
        .iter()
        .map(Candidate::server_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The environment variables that say which client.conf libpulse reads (with `HOME`).
pub const CONF_ENV: [&str; 4] = [
    "PULSE_CLIENTCONFIG",
    "PULSE_CONFIG_PATH",
    "XDG_CONFIG_HOME",
    "HOME",
];

/// The system-wide client configuration.
pub const SYSTEM_CLIENT_CONF: &str = "/etc/pulse/client.conf";

/// The client.conf files libpulse may read, in its order; it reads the first that opens and no
/// other (pulsecore/core-util.c `pa_open_config_file`): `$PULSE_CLIENTCONFIG` alone when set; else
/// `$PULSE_CONFIG_PATH/client.conf` when that is set, else `~/.pulse/client.conf` then
/// `$XDG_CONFIG_HOME/pulse/client.conf` (`~/.config/pulse/client.conf`); then
/// [`SYSTEM_CLIENT_CONF`].
pub fn client_conf_paths(lookup: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
    if let Some(f) = get("PULSE_CLIENTCONFIG") {
        return vec![PathBuf::from(f)];
    }
    let mut out = Vec::new();
    if let Some(d) = get("PULSE_CONFIG_PATH") {
        out.push(Path::new(&d).join("client.conf"));
    } else if let Some(home) = get("HOME") {
        out.push(Path::new(&home).join(".pulse").join("client.conf"));
        let config = get("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(&home).join(".config"));
        out.push(config.join("pulse").join("client.conf"));
    }
    out.push(PathBuf::from(SYSTEM_CLIENT_CONF));
    out
}

/// client.conf's `default-server` for the environment `lookup` describes: the first file of
/// [`client_conf_paths`] that `read` opens, after the `*.conf` files of its `<file>.d/` folder in
/// name order (libpulse reads those first, so the file itself has the last word); the last
/// assignment wins; None when none sets it or it is blank.
pub fn client_conf_server(
    lookup: impl Fn(&str) -> Option<String>,
    read: impl Fn(&Path) -> Option<String>,
    list: impl Fn(&Path) -> Vec<PathBuf>,
) -> Option<String> {
    let (file, text) = client_conf_paths(lookup)
        .into_iter()
        .find_map(|p| read(&p).map(|t| (p, t)))?;
    let mut dot_d = list(Path::new(&format!("{}.d", file.display())));
    dot_d.retain(|p| p.extension().is_some_and(|e| e == "conf"));
    dot_d.sort();
    let mut server = None;
    for text in dot_d.iter().filter_map(|p| read(p)).chain([text]) {
        if let Some(v) = default_server_in(&text) {
            server = Some(v);
        }
    }
    server.filter(|v| !v.trim().is_empty())
}

/// The last `default-server = ...` of a client.conf's text (`;` and `#` start comments).
fn default_server_in(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with(';') && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == "default-server")
        .map(|(_, v)| v.trim().to_owned())
        .next_back()
}

/// The files of the real file system, for [`ServerEnv::with_client_conf`].
pub mod disk {
    use std::path::{Path, PathBuf};

    /// A file's text; None when it cannot be read.
    pub fn read(path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    /// A folder's entries; empty when it cannot be listed.
    pub fn list(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    }
}

/// Whether the server is pipewire-pulse, from its `server_name` (or `server_version`): it names
/// itself `PulseAudio (on PipeWire 0.3.65)`.
pub fn is_pipewire(server_name: &str) -> bool {
    server_name.contains("PipeWire")
}

/// pipewire-pulse's version from its server name (`PulseAudio (on PipeWire 0.3.65)` -> `0.3.65`).
pub fn pipewire_version(server_name: &str) -> Option<String> {
    let start = server_name.find("on PipeWire")? + "on PipeWire".len();
    let rest = server_name[start..].trim_start();
    let version: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    Some(version)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ServerEnv {
        ServerEnv::from_lookup(|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    fn unix(p: &str) -> Candidate {
        Candidate::Unix(PathBuf::from(p))
    }

    #[test]
    fn pulse_server_is_the_whole_list_and_nothing_else() {
        let all = [
            ("PULSE_RUNTIME_PATH", "/rt"),
            ("XDG_RUNTIME_DIR", "/run/user/1"),
        ];
        let with = |server: &str| {
            let mut pairs = all.to_vec();
            pairs.push(("PULSE_SERVER", server));
            candidates(&env(&pairs))
        };
        assert_eq!(
            with("unix:/tmp/rig/pulse.sock"),
            vec![unix("/tmp/rig/pulse.sock")]
        );
        assert_eq!(with("/tmp/a.sock"), vec![unix("/tmp/a.sock")]);
        assert_eq!(
            with("{abc}unix:/a tcp:host:4713 /b"),
            vec![
                unix("/a"),
                Candidate::Network("tcp:host:4713".into()),
                unix("/b")
            ]
        );
        assert_eq!(
            with("tcp:10.0.0.1"),
            vec![Candidate::Network("tcp:10.0.0.1".into())]
        );
        assert!(socket_candidates(&env(&[("PULSE_SERVER", "tcp:10.0.0.1")])).is_empty());
        // Blank counts as unset.
        assert_eq!(
            candidates(&env(&[("PULSE_SERVER", "  ")])),
            vec![unix(SYSTEM_SOCKET)]
        );
    }

    #[test]
    fn pulse_runtime_path_beats_xdg_runtime_dir() {
        assert_eq!(
            candidates(&env(&[
                ("PULSE_RUNTIME_PATH", "/tmp/rt"),
                ("XDG_RUNTIME_DIR", "/run/user/1000"),
            ])),
            vec![unix("/tmp/rt/native"), unix(SYSTEM_SOCKET)]
        );
    }

    #[test]
    fn xdg_runtime_dir_then_the_system_socket() {
        assert_eq!(
            candidates(&env(&[("XDG_RUNTIME_DIR", "/run/user/1000/")])),
            vec![unix("/run/user/1000/pulse/native"), unix(SYSTEM_SOCKET)]
        );
    }

    #[test]
    fn system_wide_socket_alone() {
        assert_eq!(candidates(&env(&[])), vec![unix("/var/run/pulse/native")]);
        assert_eq!(describe(&env(&[])), "unix:/var/run/pulse/native");
    }

    #[test]
    fn explicit_server_replaces_the_environment() {
        let e = env(&[("PULSE_SERVER", "unix:/env"), ("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(
            socket_candidates(&e.clone().with_server(Some("unix:/cli"))),
            vec![PathBuf::from("/cli")]
        );
        assert_eq!(
            socket_candidates(&e.with_server(None)),
            vec![PathBuf::from("/env")]
        );
    }

    #[test]
    fn first_socket_prefers_one_that_exists() {
        let e = env(&[("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(
            first_socket(&e, |_| false),
            Some(PathBuf::from("/r/pulse/native"))
        );
        assert_eq!(
            first_socket(&e, |p| p == Path::new(SYSTEM_SOCKET)),
            Some(PathBuf::from(SYSTEM_SOCKET))
        );
        assert_eq!(
            first_socket(&env(&[("PULSE_SERVER", "tcp:x")]), |_| true),
            None
        );
    }

    #[test]
    fn missing_sockets_only_when_no_place_has_one() {
        let e = env(&[("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(
            missing_sockets(&e, |_| false),
            Some(vec![
                PathBuf::from("/r/pulse/native"),
                PathBuf::from(SYSTEM_SOCKET)
            ])
        );
        assert_eq!(missing_sockets(&e, |p| p == Path::new(SYSTEM_SOCKET)), None);
        // A network server may be running anywhere.
        assert_eq!(
            missing_sockets(&env(&[("PULSE_SERVER", "unix:/a tcp:x")]), |_| false),
            None
        );
        assert_eq!(
            missing_sockets(&env(&[("PULSE_SERVER", "unix:/a")]), |_| false),
            Some(vec![PathBuf::from("/a")])
        );
    }

    #[test]
    fn server_string_sockets() {
        for (server, path) in [
            (
                "unix:/run/user/0/pulse/native",
                Some("/run/user/0/pulse/native"),
            ),
            ("/tmp/x/native", Some("/tmp/x/native")),
            ("{0123abcd}unix:/tmp/y", Some("/tmp/y")),
            ("tcp:localhost:4713", None),
            ("localhost", None),
            ("tcp:a unix:/b", Some("/b")),
        ] {
            assert_eq!(
                socket_of(server).as_deref(),
                path.map(Path::new),
                "{server}"
            );
        }
    }

    #[test]
    fn pipewire_from_the_server_name() {
        for (name, pw, version) in [
            ("PulseAudio (on PipeWire 0.3.65)", true, Some("0.3.65")),
            ("PulseAudio (on PipeWire 1.2.7)", true, Some("1.2.7")),
            ("pulseaudio", false, None),
        ] {
            assert_eq!(is_pipewire(name), pw, "{name}");
            assert_eq!(pipewire_version(name).as_deref(), version, "{name}");
        }
    }

    /// A file system of a few files: (path, text).
    fn files(
        table: &'static [(&'static str, &'static str)],
    ) -> (
        impl Fn(&Path) -> Option<String>,
        impl Fn(&Path) -> Vec<PathBuf>,
    ) {
        let read = move |p: &Path| {
            table
                .iter()
                .find(|(f, _)| Path::new(f) == p)
                .map(|(_, t)| (*t).to_owned())
        };
        let list = move |d: &Path| {
            table
                .iter()
                .map(|(f, _)| PathBuf::from(f))
                .filter(|f| f.parent() == Some(d))
                .collect()
        };
        (read, list)
    }

    fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn client_conf_default_server_comes_after_pulse_server_and_before_the_runtime_dir() {
        let (read, list) = files(&[(
            "/home/u/.config/pulse/client.conf",
            "; a comment\n# default-server = unix:/commented\ndefault-server = unix:/conf/native\n",
        )]);
        let vars: &[(&str, &str)] = &[("HOME", "/home/u"), ("XDG_RUNTIME_DIR", "/run/user/1")];
        let e = ServerEnv::from_lookup(lookup(vars)).with_client_conf(lookup(vars), &read, &list);
        assert_eq!(e.conf_server.as_deref(), Some("unix:/conf/native"));
        assert_eq!(candidates(&e), vec![unix("/conf/native")]);
        let with_env = e.clone().with_server(Some("unix:/env"));
        assert_eq!(candidates(&with_env), vec![unix("/env")]);
        assert_eq!(describe(&e), "unix:/conf/native");
    }

    #[test]
    fn client_conf_paths_follow_libpulse() {
        let home: &[(&str, &str)] = &[("HOME", "/h")];
        assert_eq!(
            client_conf_paths(lookup(home)),
            vec![
                PathBuf::from("/h/.pulse/client.conf"),
                PathBuf::from("/h/.config/pulse/client.conf"),
                PathBuf::from(SYSTEM_CLIENT_CONF)
            ]
        );
        let xdg: &[(&str, &str)] = &[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")];
        assert_eq!(
            client_conf_paths(lookup(xdg))[1],
            PathBuf::from("/x/pulse/client.conf")
        );
        let path: &[(&str, &str)] = &[("HOME", "/h"), ("PULSE_CONFIG_PATH", "/p")];
        assert_eq!(
            client_conf_paths(lookup(path)),
            vec![
                PathBuf::from("/p/client.conf"),
                PathBuf::from(SYSTEM_CLIENT_CONF)
            ]
        );
        let only: &[(&str, &str)] = &[("HOME", "/h"), ("PULSE_CLIENTCONFIG", "/c.conf")];
        assert_eq!(
            client_conf_paths(lookup(only)),
            vec![PathBuf::from("/c.conf")]
        );
    }

    #[test]
    fn the_first_file_that_opens_is_the_only_one_and_its_dot_d_comes_first() {
        // The user's file exists without the key: the system file is not read at all.
        let (read, list) = files(&[
            ("/h/.config/pulse/client.conf", "autospawn = no\n"),
            ("/etc/pulse/client.conf", "default-server = unix:/system\n"),
        ]);
        let home: &[(&str, &str)] = &[("HOME", "/h")];
        assert_eq!(client_conf_server(lookup(home), &read, &list), None);
        // The system file's .d folder, in name order, then the file itself has the last word.
        let (read, list) = files(&[
            (
                "/etc/pulse/client.conf.d/20-b.conf",
                "default-server = unix:/b\n",
            ),
            (
                "/etc/pulse/client.conf.d/10-a.conf",
                "default-server = unix:/a\n",
            ),
            (
                "/etc/pulse/client.conf.d/30-c.txt",
                "default-server = unix:/not-conf\n",
            ),
            ("/etc/pulse/client.conf", "; default-server =\n"),
        ]);
        assert_eq!(
            client_conf_server(lookup(home), &read, &list).as_deref(),
            Some("unix:/b")
        );
        let (read, list) = files(&[
            (
                "/etc/pulse/client.conf.d/10-a.conf",
                "default-server = unix:/a\n",
            ),
            ("/etc/pulse/client.conf", "default-server = tcp:host\n"),
        ]);
        assert_eq!(
            client_conf_server(lookup(home), &read, &list).as_deref(),
            Some("tcp:host")
        );
        // Blank is unset; nothing readable is None.
        let (read, list) = files(&[("/etc/pulse/client.conf", "default-server =  \n")]);
        assert_eq!(client_conf_server(lookup(home), &read, &list), None);
        let (read, list) = files(&[]);
        assert_eq!(client_conf_server(lookup(home), &read, &list), None);
    }
}
