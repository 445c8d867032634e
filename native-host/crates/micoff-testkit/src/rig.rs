//! Private audio servers for tests: each rig is its own PulseAudio (or PipeWire + WirePlumber +
//! pipewire-pulse) in a temp dir, with its own runtime dir, home and socket, stopped by PID on
//! drop. The desktop's server is never touched. The devices and the recipe are those of the e2e
//! rig (`e2e/rig/audio-rig.ts`); both are described in `docs/test-rig.md`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::{kill_child, require, wait_for, Proc};

/// The null sink a test signal is played into; its monitor feeds [`MIC`].
pub const SIGNAL_SINK: &str = "spk";
/// A second null sink, the default sink: what a client plays never loops back into [`MIC`].
pub const OUTPUT_SINK: &str = "out";
/// `module-remap-source` over `spk.monitor`, the default source. A real source, not a `.monitor`:
/// Chromium opens no record stream on a monitor as the default source.
pub const MIC: &str = "mic";

/// The pactl commands (as argument lists) that give a fresh server the rig's devices.
fn device_commands() -> Vec<Vec<String>> {
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    vec![
        args(&[
            "load-module",
            "module-null-sink",
            &format!("sink_name={SIGNAL_SINK}"),
        ]),
        args(&[
            "load-module",
            "module-null-sink",
            &format!("sink_name={OUTPUT_SINK}"),
        ]),
        args(&[
            "load-module",
            "module-remap-source",
            &format!("source_name={MIC}"),
            &format!("master={SIGNAL_SINK}.monitor"),
        ]),
        args(&["set-default-sink", OUTPUT_SINK]),
        args(&["set-default-source", MIC]),
    ]
}

/// What both rigs offer: the tools (`pactl`, `parec`, the program under test) run in the rig's
/// own environment against its socket.
pub trait AudioRig {
    /// The rig's temp dir.
    fn path(&self) -> &Path;
    /// The pulse-protocol socket clients connect to.
    fn socket(&self) -> &Path;
    /// The server's log file, relative to [`AudioRig::path`].
    fn log_file(&self) -> &'static str;
    /// The rig's runtime dir, home, etc. (no `PULSE_SERVER`: see [`AudioRig::env`]).
    fn private_env(&self, cmd: &mut Command);

    /// `unix:<socket>`: what the client and the tools connect to.
    fn server(&self) -> String {
        format!("unix:{}", self.socket().display())
    }

    /// The rig's environment on `cmd`, pointed at its server. A client config from the
    /// environment could redirect the client, so it is dropped.
    fn env(&self, cmd: &mut Command) {
        self.private_env(cmd);
        cmd.env("PULSE_SERVER", self.server())
            .env_remove("PULSE_CLIENTCONFIG");
    }

    /// `program` with the rig's environment.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        self.env(&mut cmd);
        cmd
    }

    fn pactl_ok(&self, args: &[&str]) -> bool {
        self.command("pactl")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs pactl against the rig; panics with its stderr on failure.
    fn pactl(&self, args: &[&str]) -> String {
        let out = self
            .command("pactl")
            .args(args)
            .output()
            .expect("cannot run pactl");
        assert!(
            out.status.success(),
            "pactl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Record streams opened by clients: `pactl list short source-outputs` rows whose client
    /// column is not `-` (the remap source's own stream is module-owned and not counted).
    fn client_record_streams(&self) -> usize {
        self.pactl(&["list", "short", "source-outputs"])
            .lines()
            .filter(|l| l.split('\t').nth(2).is_some_and(|client| client != "-"))
            .count()
    }

    /// Waits until at least `n` client record streams exist (see
    /// [`AudioRig::client_record_streams`]).
    fn wait_for_client_record_streams(&self, what: &str, n: usize) {
        wait_for(what, Duration::from_secs(10), || {
            self.client_record_streams() >= n
        });
    }

    /// `parec --latency-msec=<ms> -d <source>` writing to /dev/null.
    fn parec(&self, source: &str, latency_ms: u32) -> Proc {
        spawn_parec(source, latency_ms, |cmd| self.env(cmd))
    }

    fn log(&self) -> String {
        fs::read_to_string(self.path().join(self.log_file())).unwrap_or_default()
    }
}

/// Polls until the rig's socket exists and `pactl info` answers on it; panics with the server's
/// log after `limit`, or as soon as `exited` reports that the server is gone.
fn wait_until_up(
    rig: &impl AudioRig,
    what: &str,
    limit: Duration,
    mut exited: impl FnMut() -> Option<std::process::ExitStatus>,
) {
    let start = Instant::now();
    while !(rig.socket().exists() && rig.pactl_ok(&["info"])) {
        if let Some(status) = exited() {
            panic!("{what} exited ({status}); log:\n{}", rig.log());
        }
        assert!(
            start.elapsed() < limit,
            "{what} did not come up; log:\n{}",
            rig.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A private PulseAudio: runtime/state/home under a temp dir, socket `<dir>/pulse.sock`, the rig's
/// devices from its startup script, log in `<dir>/pulse.log`.
pub struct PulseRig {
    pub dir: TempDir,
    pub socket: PathBuf,
    server: Option<Proc>,
    debug_log: bool,
}

impl PulseRig {
    pub fn start() -> Self {
        Self::start_with(false)
    }

    /// Like [`PulseRig::start`], with the server logging at debug level (without the
    /// file/line/function prefix), for tests that read what the server itself did.
    pub fn start_with_debug_log() -> Self {
        Self::start_with(true)
    }

    fn start_with(debug_log: bool) -> Self {
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
        // The same devices as the PipeWire rig loads through pactl, as a startup script (`-n -F`:
        // no default.pa, so no hardware and no desktop modules).
        let mut script = format!(
            "load-module module-native-protocol-unix auth-anonymous=1 socket={}\n",
            socket.display()
        );
        for command in device_commands() {
            script.push_str(&command.join(" "));
            script.push('\n');
        }
        fs::write(dir.path().join("rig.pa"), script).unwrap();
        let mut rig = Self {
            dir,
            socket,
            server: None,
            debug_log,
        };
        rig.start_server();
        rig
    }

    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(Proc::pid)
    }

    /// Starts the daemon and waits until `pactl info` answers on the socket.
    pub fn start_server(&mut self) {
        assert!(self.server.is_none(), "server already running");
        let d = self.dir.path();
        let mut cmd = self.command("pulseaudio");
        cmd.args(["--daemonize=no", "--exit-idle-time=-1", "-n", "-F"])
            .arg(d.join("rig.pa"))
            .args(["--disallow-exit=yes", "--use-pid-file=no"])
            .arg(format!(
                "--log-target=file:{}",
                d.join(self.log_file()).display()
            ))
            .env_remove("PULSE_SERVER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if self.debug_log {
            cmd.args(["--log-level=debug", "--log-meta=no"]);
        }
        // Killed on drop should the wait fail.
        let mut child = Proc(cmd.spawn().expect("cannot start pulseaudio"));
        wait_until_up(&*self, "pulseaudio", Duration::from_secs(20), || {
            child.0.try_wait().ok().flatten()
        });
        self.server = Some(child);
    }

    /// Kills the daemon by its PID (SIGKILL: as abrupt as a crash) and reaps it.
    pub fn kill_server(&mut self) {
        drop(self.server.take());
    }
}

impl AudioRig for PulseRig {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn socket(&self) -> &Path {
        &self.socket
    }

    fn log_file(&self) -> &'static str {
        "pulse.log"
    }

    fn private_env(&self, cmd: &mut Command) {
        let d = self.dir.path();
        cmd.env("XDG_RUNTIME_DIR", d.join("runtime"))
            .env("PULSE_RUNTIME_PATH", d.join("runtime"))
            .env("PULSE_STATE_PATH", d.join("state"))
            .env("HOME", d.join("home"));
    }
}

impl Drop for PulseRig {
    fn drop(&mut self) {
        self.kill_server();
    }
}

/// `parec` reading `source` into /dev/null, in the environment `env` sets up.
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
/// temp dir, pulse socket `<dir>/run/pulse/native`, the rig's devices loaded through pactl. On
/// drop the three daemons are stopped by the PIDs the start script wrote; dbus-run-session then
/// stops its bus.
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
        wait_until_up(&rig, "pipewire-pulse", Duration::from_secs(30), || None);
        for command in device_commands() {
            let args: Vec<&str> = command.iter().map(String::as_str).collect();
            if args[0].starts_with("set-default-") {
                // pipewire-pulse answers `load-module` before the node exists, and setting a
                // default to a node it does not know yet fails with "Not supported" (a fresh-clone
                // run beside the e2e lanes, 2026-11-30): try again until the node is there.
                wait_for(
                    &format!("pactl {}", args.join(" ")),
                    Duration::from_secs(10),
                    || rig.pactl_ok(&args),
                );
            } else {
                rig.pactl(&args);
            }
        }
        // WirePlumber creates the nodes and applies defaults asynchronously.
        wait_for(
            "the rig's default sink and source",
            Duration::from_secs(10),
            || {
                let info = rig.pactl(&["info"]);
                info.contains(&format!("Default Sink: {OUTPUT_SINK}\n"))
                    && info.contains(&format!("Default Source: {MIC}\n"))
            },
        );
        rig
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

impl AudioRig for PipeWireRig {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn socket(&self) -> &Path {
        &self.socket
    }

    fn log_file(&self) -> &'static str {
        "pipewire.log"
    }

    fn private_env(&self, cmd: &mut Command) {
        let d = self.dir.path();
        cmd.env("XDG_RUNTIME_DIR", d.join("run"))
            .env("HOME", d.join("home"));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The e2e rig must name its devices the same way (one naming for every test).
    #[test]
    fn device_names_match_the_e2e_rig() {
        let ts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../e2e/rig/audio-rig.ts");
        let text = fs::read_to_string(&ts).unwrap();
        for (name, value) in [
            ("SIGNAL_SINK", SIGNAL_SINK),
            ("OUTPUT_SINK", OUTPUT_SINK),
            ("MIC", MIC),
        ] {
            let line = format!("export const {name} = '{value}';");
            assert!(text.contains(&line), "{} lacks `{line}`", ts.display());
        }
    }
}
