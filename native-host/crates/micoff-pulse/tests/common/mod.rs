//! Private audio servers for tests: each test gets its own PulseAudio (or PipeWire +
//! pipewire-pulse) in a temp dir, with its own runtime dir and socket, stopped by PID on drop.
//! The e2e rig follows the same recipe (docs: /work/shared/notes/test-rig.md).
#![allow(dead_code, clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use micoff_pulse::PulseEvent;
use tempfile::TempDir;
use tokio::sync::broadcast;

/// Polls `cond` every 20 ms until it is true; panics with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fails (never skips) when a tool the rig needs is missing.
pub fn require(tool: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed; these tests need a real audio server: apt-get install {package}"
    );
}

/// Kills a child we started, by its PID, and reaps it.
pub fn kill_child(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A process we started that is killed on drop (e.g. `parec`).
pub struct Proc(pub Child);

impl Proc {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        kill_child(&mut self.0);
    }
}

/// Waits for the first event matching `pred` (other events are skipped).
pub async fn next_event(
    rx: &mut broadcast::Receiver<PulseEvent>,
    limit: Duration,
    what: &str,
    mut pred: impl FnMut(&PulseEvent) -> bool,
) -> PulseEvent {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => panic!("timed out after {limit:?} waiting for event: {what}"),
            Ok(Err(broadcast::error::RecvError::Lagged(n))) => eprintln!("lagged {n} events"),
            Ok(Err(e)) => panic!("event channel closed while waiting for {what}: {e}"),
            Ok(Ok(ev)) if pred(&ev) => return ev,
            Ok(Ok(_)) => {}
        }
    }
}

/// A private PulseAudio: runtime/state/home under a temp dir, socket `<dir>/pulse.sock`, a null
/// sink `spk` and a remapped source `mic` over its monitor (defaults).
pub struct PulseRig {
    pub dir: TempDir,
    pub socket: PathBuf,
    server: Option<Child>,
}

impl PulseRig {
    pub fn start() -> Self {
        require("pulseaudio", "pulseaudio");
        require("pactl", "pulseaudio-utils");
        let dir = tempfile::Builder::new()
            .prefix("micoff-pulse-rig")
            .tempdir()
            .unwrap();
        for sub in ["runtime", "state", "home"] {
            fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let socket = dir.path().join("pulse.sock");
        let script = format!(
            "load-module module-native-protocol-unix auth-anonymous=1 socket={}\n\
             load-module module-null-sink sink_name=spk\n\
             load-module module-remap-source source_name=mic master=spk.monitor\n\
             set-default-sink spk\n\
             set-default-source mic\n",
            socket.display()
        );
        fs::write(dir.path().join("rig.pa"), script).unwrap();
        let mut rig = Self {
            dir,
            socket,
            server: None,
        };
        rig.start_server();
        rig
    }

    /// `unix:<socket>`: what the client and the tools connect to.
    pub fn server(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    fn env(&self, cmd: &mut Command) {
        let d = self.dir.path();
        cmd.env("XDG_RUNTIME_DIR", d.join("runtime"))
            .env("PULSE_RUNTIME_PATH", d.join("runtime"))
            .env("PULSE_STATE_PATH", d.join("state"))
            .env("HOME", d.join("home"))
            .env("PULSE_SERVER", self.server());
    }

    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Starts the daemon and waits until `pactl info` answers on the socket.
    pub fn start_server(&mut self) {
        assert!(self.server.is_none(), "server already running");
        let d = self.dir.path();
        let log = d.join("pulse.log");
        let mut cmd = Command::new("pulseaudio");
        cmd.args(["--daemonize=no", "--exit-idle-time=-1", "-n", "-F"])
            .arg(d.join("rig.pa"))
            .args(["--disallow-exit=yes", "--use-pid-file=no"])
            .arg(format!("--log-target=file:{}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.env(&mut cmd);
        cmd.env_remove("PULSE_SERVER");
        let child = cmd.spawn().expect("cannot start pulseaudio");
        self.server = Some(child);
        let start = Instant::now();
        loop {
            if self.socket.exists() && self.pactl_ok(&["info"]) {
                break;
            }
            if let Some(status) = self
                .server
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "pulseaudio exited ({status}); log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "pulseaudio did not come up; log:\n{}",
                fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the daemon by its PID (SIGKILL: as abrupt as a crash) and reaps it.
    pub fn kill_server(&mut self) {
        if let Some(mut child) = self.server.take() {
            kill_child(&mut child);
        }
    }

    fn pactl_ok(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("pactl");
        cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
        self.env(&mut cmd);
        cmd.status().map(|s| s.success()).unwrap_or(false)
    }

    /// Runs pactl against the rig; panics with its stderr on failure.
    pub fn pactl(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("pactl");
        cmd.args(args);
        self.env(&mut cmd);
        let out = cmd.output().expect("cannot run pactl");
        assert!(
            out.status.success(),
            "pactl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `parec --latency-msec=<ms> -d <source>` writing to /dev/null.
    pub fn parec(&self, source: &str, latency_ms: u32) -> Proc {
        spawn_parec(source, latency_ms, |cmd| self.env(cmd))
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("pulse.log")).unwrap_or_default()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PulseRig {
    fn drop(&mut self) {
        self.kill_server();
    }
}

pub fn spawn_parec(source: &str, latency_ms: u32, env: impl FnOnce(&mut Command)) -> Proc {
    require("parec", "pulseaudio-utils");
    let mut cmd = Command::new("parec");
    cmd.arg(format!("--latency-msec={latency_ms}"))
        .args(["-d", source, "--client-name=micoff-test-parec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    env(&mut cmd);
    Proc(cmd.spawn().expect("cannot start parec"))
}

/// A private PipeWire + WirePlumber + pipewire-pulse under `dbus-run-session`, runtime dir in a
/// temp dir, pulse socket `<dir>/run/pulse/native`, with a null sink `spk` and a remapped
/// source `mic` loaded through pactl (the same layout as [`PulseRig`]). On drop the three
/// daemons are stopped by the PIDs the start script wrote; dbus-run-session then stops its bus.
pub struct PipeWireRig {
    pub dir: TempDir,
    pub socket: PathBuf,
    session: Option<Child>,
}

impl PipeWireRig {
    pub fn start() -> Self {
        for (tool, package) in [
            ("pipewire", "pipewire-bin"),
            ("pipewire-pulse", "pipewire-pulse"),
            ("wireplumber", "wireplumber"),
            ("dbus-run-session", "dbus"),
            ("pactl", "pulseaudio-utils"),
        ] {
            require(tool, package);
        }
        let dir = tempfile::Builder::new()
            .prefix("micoff-pw-rig")
            .tempdir()
            .unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("run")).unwrap();
        fs::create_dir_all(d.join("home")).unwrap();
        // WirePlumber wants the PipeWire socket up first: wait for it (tiny polling, no fixed
        // sleep). Each daemon's PID goes to `pids` so the rig can stop exactly those.
        let script = "pipewire & echo $! > \"$1/pids\"\n\
                      while [ ! -S \"$XDG_RUNTIME_DIR/pipewire-0\" ]; do sleep 0.02; done\n\
                      wireplumber & echo $! >> \"$1/pids\"\n\
                      pipewire-pulse & echo $! >> \"$1/pids\"\n\
                      wait\n";
        fs::write(d.join("start.sh"), script).unwrap();
        let log = fs::File::create(d.join("pipewire.log")).unwrap();
        let mut cmd = Command::new("dbus-run-session");
        cmd.args(["--", "sh"])
            .arg(d.join("start.sh"))
            .arg(d)
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("HOME", d.join("home"))
            .env_remove("PULSE_SERVER")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let session = cmd.spawn().expect("cannot start dbus-run-session");
        let socket = d.join("run/pulse/native");
        let rig = Self {
            dir,
            socket,
            session: Some(session),
        };
        let limit = Duration::from_secs(20);
        let start = Instant::now();
        while !(rig.socket.exists() && rig.pactl_ok(&["info"])) {
            if start.elapsed() > limit {
                panic!("pipewire-pulse did not come up; log:\n{}", rig.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        rig.pactl(&["load-module", "module-null-sink", "sink_name=spk"]);
        rig.pactl(&[
            "load-module",
            "module-remap-source",
            "source_name=mic",
            "master=spk.monitor",
        ]);
        rig.pactl(&["set-default-source", "mic"]);
        rig
    }

    pub fn server(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    fn env(&self, cmd: &mut Command) {
        let d = self.dir.path();
        cmd.env("XDG_RUNTIME_DIR", d.join("run"))
            .env("HOME", d.join("home"))
            .env("PULSE_SERVER", self.server());
    }

    fn pactl_ok(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("pactl");
        cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
        self.env(&mut cmd);
        cmd.status().map(|s| s.success()).unwrap_or(false)
    }

    pub fn pactl(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("pactl");
        cmd.args(args);
        self.env(&mut cmd);
        let out = cmd.output().expect("cannot run pactl");
        assert!(
            out.status.success(),
            "pactl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn parec(&self, source: &str, latency_ms: u32) -> Proc {
        spawn_parec(source, latency_ms, |cmd| self.env(cmd))
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("pipewire.log")).unwrap_or_default()
    }

    /// PIDs of pipewire, wireplumber and pipewire-pulse, as the start script wrote them.
    pub fn daemon_pids(&self) -> Vec<u32> {
        fs::read_to_string(self.dir.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for PipeWireRig {
    fn drop(&mut self) {
        let pids: Vec<String> = self.daemon_pids().iter().map(u32::to_string).collect();
        if !pids.is_empty() {
            let _ = Command::new("kill").args(&pids).status();
        }
        if let Some(mut session) = self.session.take() {
            // With its children gone the script exits and dbus-run-session stops its bus.
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = session.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            kill_child(&mut session);
        }
    }
}
