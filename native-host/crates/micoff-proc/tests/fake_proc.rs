//! ProcFs over fake /proc trees built in a temp dir.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use micoff_proc::{
    rates, BrowserFamily, ColdThreads, CpuReport, Pid, ProcFs, Role, Sampler, Snapshot,
    ThreadRates, ThreadSample,
};

struct FakeProc {
    dir: tempfile::TempDir,
}

fn stat_text(pid: Pid, comm: &str, ppid: Pid, utime: u64, stime: u64, starttime: u64) -> String {
    stat_text_threads(pid, comm, ppid, utime, stime, starttime, 1)
}

fn stat_text_threads(
    pid: Pid,
    comm: &str,
    ppid: Pid,
    utime: u64,
    stime: u64,
    starttime: u64,
    num_threads: usize,
) -> String {
    format!(
        "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 1197 0 0 0 {utime} {stime} 0 0 20 0 \
         {num_threads} 0 {starttime} 1000000 100 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 \
         17 1 0 0 0 0 0\n"
    )
}

#[derive(Clone, Copy)]
struct T {
    utime: u64,
    stime: u64,
    run_ns: u64,
    vol: u64,
    inv: u64,
    io: Option<(u64, u64)>,
}

const T0: T = T {
    utime: 0,
    stime: 0,
    run_ns: 0,
    vol: 0,
    inv: 0,
    io: Some((0, 0)),
};

impl FakeProc {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Non-process entries every /proc has.
        fs::create_dir_all(dir.path().join("net")).unwrap();
        fs::create_dir_all(dir.path().join("sys")).unwrap();
        fs::write(dir.path().join("uptime"), "1.0 1.0\n").unwrap();
        Self { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn fs(&self) -> ProcFs {
        ProcFs::with_clk_tck(self.root(), 100)
    }

    fn pdir(&self, pid: Pid) -> PathBuf {
        self.root().join(pid.to_string())
    }

    fn process(&self, pid: Pid, ppid: Pid, comm: &str, cmdline: &[&str]) {
        self.process_times(pid, ppid, comm, cmdline, 0, 0);
        self.status(pid, 1000);
    }

    fn process_times(
        &self,
        pid: Pid,
        ppid: Pid,
        comm: &str,
        cmdline: &[&str],
        utime: u64,
        stime: u64,
    ) {
        let d = self.pdir(pid);
        fs::create_dir_all(d.join("task")).unwrap();
        fs::create_dir_all(d.join("fd")).unwrap();
        fs::write(
            d.join("stat"),
            stat_text(pid, comm, ppid, utime, stime, 1000 + u64::from(pid)),
        )
        .unwrap();
        let mut cl = Vec::new();
        for a in cmdline {
            cl.extend_from_slice(a.as_bytes());
            cl.push(0);
        }
        fs::write(d.join("cmdline"), cl).unwrap();
    }

    fn status(&self, pid: Pid, uid: u32) {
        fs::write(
            self.pdir(pid).join("status"),
            format!("Name:\tx\nPid:\t{pid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
        )
        .unwrap();
    }

    fn thread(&self, pid: Pid, tid: Pid, comm: &str, t: T) {
        self.thread_started(pid, tid, comm, t, 2000 + u64::from(tid));
    }

    /// A thread with its start time given (a reused tid is told apart by it).
    fn thread_started(&self, pid: Pid, tid: Pid, comm: &str, t: T, starttime: u64) {
        let d = self.pdir(pid).join("task").join(tid.to_string());
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("stat"),
            stat_text(tid, comm, 1, t.utime, t.stime, starttime),
        )
        .unwrap();
        fs::write(d.join("schedstat"), format!("{} 0 1\n", t.run_ns)).unwrap();
        fs::write(
            d.join("status"),
            format!(
                "Name:\t{comm}\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t{}\nnonvoluntary_ctxt_switches:\t{}\n",
                t.vol, t.inv
            ),
        )
        .unwrap();
        let io = d.join("io");
        match t.io {
            Some((r, w)) => fs::write(
                io,
                format!("rchar: 1\nwchar: 1\nsyscr: {r}\nsyscw: {w}\nread_bytes: 0\n"),
            )
            .unwrap(),
            None => {
                let _ = fs::remove_file(io);
            }
        }
    }

    fn exe(&self, pid: Pid, target: &str) {
        std::os::unix::fs::symlink(target, self.pdir(pid).join("exe")).unwrap();
    }

    fn fd(&self, pid: Pid, fd: u32, target: &str) {
        std::os::unix::fs::symlink(target, self.pdir(pid).join("fd").join(fd.to_string())).unwrap();
    }
}

#[test]
fn list_pids_skips_non_numeric() {
    let p = FakeProc::new();
    p.process(10, 1, "a", &["a"]);
    p.process(2, 1, "b", &["b"]);
    fs::create_dir_all(p.root().join("self")).unwrap();
    fs::create_dir_all(p.root().join("12abc")).unwrap();
    assert_eq!(p.fs().list_pids().unwrap(), vec![2, 10]);
    assert!(ProcFs::new(p.root().join("missing")).list_pids().is_err());
}

#[test]
fn snapshot_awkward_names_vanished_threads_and_missing_io() {
    let p = FakeProc::new();
    p.process(
        100,
        1,
        "chromium",
        &["/usr/lib/chromium/chromium", "--type=renderer"],
    );
    let names = [
        (100, "chromium"),
        (101, "with space"),
        (102, "a) (b"),
        (103, ")"),
        (104, "AudioInputDevic"),
        (105, "AudioIP~allback"),
        (106, "ünïcødé🎤"),
    ];
    for (tid, comm) in names {
        p.thread(100, tid, comm, T0);
    }
    // A thread that vanished between readdir and the reads: its directory has no files.
    fs::create_dir_all(p.pdir(100).join("task/107")).unwrap();
    // A thread whose stat is empty (exiting).
    fs::create_dir_all(p.pdir(100).join("task/108")).unwrap();
    fs::write(p.pdir(100).join("task/108/stat"), "").unwrap();
    // io missing (not ours to read) / unreadable (a directory) / schedstat missing.
    p.thread(100, 109, "no io", T { io: None, ..T0 });
    p.thread(100, 110, "io is a dir", T { io: None, ..T0 });
    fs::create_dir_all(p.pdir(100).join("task/110/io")).unwrap();
    fs::remove_file(p.pdir(100).join("task/101/schedstat")).unwrap();
    // A 15-byte truncation that split a UTF-8 character.
    let d = p.pdir(100).join("task/111");
    fs::create_dir_all(&d).unwrap();
    let mut raw = b"111 (Audio\xc3) S 1".to_vec();
    raw.extend_from_slice(b" 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 999 0 0\n");
    fs::write(d.join("stat"), raw).unwrap();

    // Processes that are gone, or whose directory is empty.
    fs::create_dir_all(p.pdir(300)).unwrap();
    let s = p.fs().snapshot(&[100, 200, 300, 100]);
    assert_eq!(s.processes.len(), 1);
    let proc100 = &s.processes[0];
    assert_eq!(proc100.role, Role::Renderer);
    let got: Vec<(Pid, &str)> = proc100
        .threads
        .iter()
        .map(|t| (t.tid, t.comm.as_str()))
        .collect();
    let mut want: Vec<(Pid, &str)> = names.to_vec();
    want.extend([(109, "no io"), (110, "io is a dir"), (111, "Audio\u{fffd}")]);
    assert_eq!(got, want);
    let t = |tid: Pid| proc100.threads.iter().find(|t| t.tid == tid).unwrap();
    assert_eq!(t(109).syscr, None);
    assert_eq!(t(110).syscw, None);
    assert_eq!(t(104).syscr, Some(0));
    assert_eq!(t(101).run_time_ns, None);
    assert_eq!(t(102).run_time_ns, Some(0));
    assert_eq!(t(111).voluntary_ctxt, None);
    assert_eq!((t(111).utime, t(111).stime), (5, 6));
}

#[test]
fn rates_between_fake_snapshots() {
    let p = FakeProc::new();
    p.process_times(100, 1, "pulseaudio", &["pulseaudio", "-n"], 1000, 500);
    p.thread(
        100,
        100,
        "pulseaudio",
        T {
            utime: 900,
            stime: 400,
            run_ns: 0,
            vol: 0,
            inv: 0,
            io: Some((0, 0)),
        },
    );
    p.thread(
        100,
        101,
        "null-source",
        T {
            utime: 100,
            stime: 100,
            run_ns: 0,
            vol: 0,
            inv: 0,
            io: None,
        },
    );
    p.thread(100, 102, "dies", T0);
    let fs_ = p.fs();
    let mut a = fs_.snapshot(&[100]);

    p.process_times(100, 1, "pulseaudio", &["pulseaudio", "-n"], 1015, 510);
    p.thread(
        100,
        100,
        "pulseaudio",
        T {
            utime: 910,
            stime: 405,
            run_ns: 150_000_000,
            vol: 500,
            inv: 100,
            io: Some((600, 300)),
        },
    );
    p.thread(
        100,
        101,
        "null-source",
        T {
            utime: 102,
            stime: 101,
            run_ns: 30_000_000,
            vol: 100,
            inv: 0,
            io: None,
        },
    );
    fs::remove_dir_all(p.pdir(100).join("task/102")).unwrap();
    let mut b = fs_.snapshot(&[100]);

    // Make the window exactly one second (the real clock moved by microseconds).
    a.taken_at_ns = 0;
    a.processes[0].at_ns = 0;
    b.taken_at_ns = 1_000_000_000;
    b.processes[0].at_ns = 1_000_000_000;
    let r = rates(&a, &b);
    assert_eq!(r.window_ms, 1000.0);
    let pr = &r.processes[0];
    assert_eq!(pr.role, Role::AudioServer);
    assert_eq!(
        (pr.rates.cpu_pct, pr.rates.user_pct, pr.rates.system_pct),
        (25.0, 15.0, 10.0)
    );
    assert_eq!(pr.threads.len(), 2);
    let main = &pr.threads[0];
    assert_eq!(
        (
            main.tid,
            main.rates.cpu_pct,
            main.rates.user_pct,
            main.rates.system_pct
        ),
        (100, 15.0, 10.0, 5.0)
    );
    assert_eq!(main.rates.run_time_ns, Some(150_000_000));
    assert_eq!(main.rates.run_time_pct, Some(15.0));
    assert_eq!(main.rates.wakeups_per_s, Some(600.0));
    assert_eq!(main.rates.involuntary_ctxt_per_s, Some(100.0));
    assert_eq!(main.rates.read_syscalls_per_s, Some(600.0));
    assert_eq!(main.rates.write_syscalls_per_s, Some(300.0));
    let src = &pr.threads[1];
    assert_eq!((src.comm.as_str(), src.rates.cpu_pct), ("null-source", 3.0));
    assert_eq!(src.rates.read_syscalls_per_s, None);
    assert_eq!(pr.rates.wakeups_per_s, Some(700.0));
    assert_eq!(pr.rates.read_syscalls_per_s, Some(600.0));
    assert_eq!(pr.rates.run_time_ns, Some(180_000_000));
    assert_eq!(r.roles.len(), 1);
    assert_eq!(r.roles[0].role, Role::AudioServer);
    assert_eq!(r.roles[0].cpu_pct, 25.0);

    // The process vanishes: reported as gone.
    fs::remove_dir_all(p.pdir(100)).unwrap();
    let c = fs_.snapshot(&[100]);
    let r = rates(&b, &c);
    assert!(r.processes.is_empty());
    assert_eq!(r.gone_pids, vec![100]);
}

/// node (launcher) -> chromium browser -> {zygote -> renderers, gpu, utility..., crashpad, host}
fn chromium_tree(p: &FakeProc) {
    let exe = "/usr/lib/chromium/chromium";
    p.process(1, 0, "init", &["/sbin/init"]);
    p.process(50, 1, "node", &["node", "playwright.js"]);
    p.process(
        100,
        50,
        "chromium",
        &[exe, "--headless=new", "--user-data-dir=/tmp/u"],
    );
    p.exe(100, exe);
    p.process(
        101,
        100,
        "chrome_crashpad",
        &[
            "/usr/lib/chromium/chrome_crashpad_handler",
            "--monitor-self",
        ],
    );
    p.process(
        102,
        100,
        "chromium",
        &[exe, "--type=zygote", "--no-zygote-sandbox"],
    );
    p.process(103, 100, "chromium", &[exe, "--type=zygote"]);
    p.process(
        104,
        100,
        "chromium",
        &[exe, "--type=gpu-process", "--headless=new"],
    );
    p.process(
        105,
        100,
        "chromium",
        &[&format!(
            "{exe} --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US"
        )],
    );
    p.process(
        106,
        100,
        "chromium",
        &[
            exe,
            "--type=utility",
            "--utility-sub-type=storage.mojom.StorageService",
        ],
    );
    p.process(
        107,
        100,
        "chromium",
        &[
            exe,
            "--type=utility",
            "--utility-sub-type=audio.mojom.AudioService",
        ],
    );
    p.process(
        108,
        103,
        "chromium",
        &[&format!("{exe} --type=renderer --lang=en-US")],
    );
    p.process(
        109,
        103,
        "chromium",
        &[&format!("{exe} --type=renderer --extension-process")],
    );
    p.process(
        110,
        100,
        "micoff-host",
        &["/usr/bin/micoff-host", "chrome-extension://abc/"],
    );
    p.process(200, 1, "pulseaudio", &["pulseaudio", "-n"]);
}

#[test]
fn chromium_tree_and_browser_ancestor() {
    let p = FakeProc::new();
    chromium_tree(&p);
    let fs_ = p.fs();
    let tree = fs_.process_tree(100).unwrap();
    let got: Vec<(Pid, Role)> = tree.iter().map(|i| (i.pid, i.role)).collect();
    assert_eq!(
        got,
        vec![
            (100, Role::Browser),
            (101, Role::Crashpad),
            (102, Role::Zygote),
            (103, Role::Zygote),
            (104, Role::Gpu),
            (105, Role::NetworkService),
            (106, Role::StorageService),
            (107, Role::AudioService),
            (110, Role::Other),
            (108, Role::Renderer),
            (109, Role::ExtensionRenderer),
        ]
    );
    assert!(
        tree.iter()
            .all(|i| i.family == Some(BrowserFamily::Chromium)),
        "{tree:?}"
    );
    assert_eq!(tree[0].ppid, 50);
    assert!(tree[0].cmdline_summary(20).chars().count() <= 20);

    // From the host's parent, from the host itself, from a renderer: the browser's main process.
    for start in [100, 110, 108] {
        let b = fs_.find_browser_ancestor(start).unwrap();
        assert_eq!(
            (b.pid, b.role, b.family),
            (100, Role::Browser, Some(BrowserFamily::Chromium)),
            "{start}"
        );
    }
    assert!(fs_.find_browser_ancestor(200).is_none());
    assert!(fs_.find_browser_ancestor(50).is_none());
    assert!(fs_.find_browser_ancestor(9999).is_none());
    assert!(fs_.process_tree(9999).unwrap().is_empty());

    // default_targets: browser tree + the audio server (none listening here).
    let t = fs_.default_targets(100, &HashMap::new());
    assert_eq!(t.browser.as_ref().map(|b| b.pid), Some(100));
    assert_eq!(t.pids().len(), 11);
    assert!(t.audio_server.is_empty());
}

#[test]
fn browser_found_by_exe_when_comm_is_odd() {
    let p = FakeProc::new();
    p.process(1, 0, "init", &["/sbin/init"]);
    // e.g. a renamed main thread: comm says nothing, exe does.
    p.process(100, 1, "MainThread", &["/opt/google/chrome/chrome"]);
    p.exe(100, "/opt/google/chrome/chrome");
    p.process(101, 100, "host", &["host"]);
    let b = p.fs().find_browser_ancestor(100).unwrap();
    assert_eq!((b.pid, b.family), (100, Some(BrowserFamily::Chromium)));
    assert_eq!(b.role, Role::Browser);
}

#[test]
fn firefox_tree_named_by_comm() {
    let p = FakeProc::new();
    let exe = "/usr/lib/firefox-esr/firefox-esr";
    p.process(1, 0, "init", &["/sbin/init"]);
    p.process(
        300,
        1,
        "firefox-esr",
        &[exe, "--headless", "--profile", "/tmp/p"],
    );
    p.exe(300, exe);
    p.process(
        301,
        300,
        "forkserver",
        &[exe, "-contentproc", "-forkserver"],
    );
    let fork_cmd = [exe, "-contentproc", "-forkserver"];
    for (pid, comm) in [
        (302, "Socket Process"),
        (303, "RDD Process"),
        (304, "Web Content"),
        (305, "Isolated Web Co"),
        (306, "WebExtensions"),
        (307, "Utility Process"),
    ] {
        p.process(pid, 301, comm, &fork_cmd);
    }
    p.process(
        308,
        300,
        "micoff-host",
        &[
            "/usr/bin/micoff-host",
            "/x/org.micoff.host.json",
            "micoff@micoff.org",
        ],
    );
    let fs_ = p.fs();
    let b = fs_.find_browser_ancestor(300).unwrap();
    assert_eq!(
        (b.pid, b.role, b.family),
        (300, Role::Browser, Some(BrowserFamily::Firefox))
    );
    let tree = fs_.process_tree(300).unwrap();
    let got: Vec<(Pid, Role)> = tree.iter().map(|i| (i.pid, i.role)).collect();
    assert_eq!(
        got,
        vec![
            (300, Role::Browser),
            (301, Role::Forkserver),
            (308, Role::Other),
            (302, Role::Socket),
            (303, Role::Rdd),
            (304, Role::Content),
            (305, Role::Content),
            (306, Role::ExtensionRenderer),
            (307, Role::Utility),
        ]
    );
    assert!(tree
        .iter()
        .all(|i| i.family == Some(BrowserFamily::Firefox)));
}

#[test]
fn running_browsers_are_the_main_processes_only() {
    let p = FakeProc::new();
    chromium_tree(&p);
    // A Firefox run through a launcher script that starts the real binary as its child.
    p.process(300, 1, "firefox", &["/bin/sh", "/usr/bin/firefox"]);
    p.process(301, 300, "firefox", &["/usr/lib/firefox/firefox"]);
    p.process(
        302,
        301,
        "Web Content",
        &["/usr/lib/firefox/firefox", "-contentproc"],
    );
    // Ubuntu's old chromium-browser: the comm is cut to 15 bytes.
    p.process(
        400,
        1,
        "chromium-browse",
        &["/usr/lib/chromium-browser/chromium-browser"],
    );
    p.process(
        401,
        400,
        "chromium-browse",
        &["/usr/lib/chromium-browser/chromium-browser --type=renderer"],
    );
    // Not browsers: a process named like one with a --type of its own and no browser parent
    // (an orphaned renderer), and an unrelated process.
    p.process(
        500,
        1,
        "chromium",
        &["/usr/lib/chromium/chromium", "--type=renderer"],
    );
    p.process(501, 1, "node", &["node"]);
    let got: Vec<(Pid, Option<BrowserFamily>)> = p
        .fs()
        .running_browsers()
        .unwrap()
        .iter()
        .map(|b| (b.pid, b.family))
        .collect();
    assert_eq!(
        got,
        vec![
            (100, Some(BrowserFamily::Chromium)),
            (300, Some(BrowserFamily::Firefox)),
            (400, Some(BrowserFamily::Chromium)),
        ]
    );
}

const NET_UNIX_HEADER: &str = "Num       RefCount Protocol Flags    Type St Inode Path\n";

#[test]
fn pulseaudio_socket_owner() {
    let p = FakeProc::new();
    p.process(1, 0, "init", &["/sbin/init"]);
    p.process(
        200,
        1,
        "pulseaudio",
        &["pulseaudio", "-n", "-F", "/tmp/rig/rig.pa"],
    );
    p.process(201, 1, "parec", &["parec", "-d", "mic"]);
    p.process(202, 1, "bash", &["bash"]);
    // (PULSE_SERVER is whitespace-separated, so the rig socket path has no space; parse.rs tests spaces.)
    let sock = "/tmp/rig/pulse.sock";
    fs::write(
        p.root().join("net/unix"),
        format!(
            "{NET_UNIX_HEADER}\
             0000000000000000: 00000003 00000000 00000000 0001 03 7001 {sock}\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 7000 {sock}\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 7100 /run/other\n"
        ),
    )
    .unwrap();
    // The client holds the connected socket (7001), the server the listening one (7000).
    p.fd(201, 3, "socket:[7001]");
    p.fd(200, 0, "/dev/null");
    p.fd(200, 5, "pipe:[55]");
    p.fd(200, 6, "socket:[7000]");
    // An unreadable fd entry (not a link) is skipped.
    fs::write(p.pdir(202).join("fd/9"), "").unwrap();
    p.fd(202, 4, "socket:[7100]");
    let fs_ = p.fs();
    assert_eq!(fs_.socket_owner(Path::new(sock)), Some(200));
    assert_eq!(fs_.socket_owner(Path::new("/run/other")), Some(202));
    assert_eq!(fs_.socket_owner(Path::new("/nope")), None);

    let env: HashMap<String, String> =
        [("PULSE_SERVER".to_string(), format!("unix:{sock}"))].into();
    let servers = fs_.audio_server_processes(&env);
    let got: Vec<(Pid, Role)> = servers.iter().map(|i| (i.pid, i.role)).collect();
    assert_eq!(got, vec![(200, Role::AudioServer)]);
    let env: HashMap<String, String> =
        [("XDG_RUNTIME_DIR".to_string(), "/run/user/5".to_string())].into();
    assert!(fs_.audio_server_processes(&env).is_empty());
}

#[test]
fn socket_activated_server_is_not_systemd() {
    let p = FakeProc::new();
    p.process(1, 0, "systemd", &["/sbin/init"]);
    p.process(900, 1, "systemd", &["/lib/systemd/systemd", "--user"]);
    let sock = "/run/user/1000/pulse/native";
    fs::write(
        p.root().join("net/unix"),
        format!(
            "{NET_UNIX_HEADER}\
             0000000000000000: 00000002 00000000 00010000 0001 01 8000 {sock}\n"
        ),
    )
    .unwrap();
    // Idle socket activation: only `systemd --user` holds the listening socket.
    p.fd(900, 40, "socket:[8000]");
    let fs_ = p.fs();
    let env: HashMap<String, String> =
        [("XDG_RUNTIME_DIR".to_string(), "/run/user/1000".to_string())].into();
    assert_eq!(fs_.socket_owner(Path::new(sock)), None);
    assert!(fs_.audio_server_processes(&env).is_empty());

    // The first client started the server: it holds the same socket (handed over by systemd),
    // and it is the one sampled, whatever order the scan meets them in.
    p.process(950, 900, "pipewire-pulse", &["/usr/bin/pipewire-pulse"]);
    p.fd(950, 3, "socket:[8000]");
    assert_eq!(fs_.socket_owner(Path::new(sock)), Some(950));
    let got: Vec<(Pid, Role)> = fs_
        .audio_server_processes(&env)
        .iter()
        .map(|i| (i.pid, i.role))
        .collect();
    assert_eq!(got, vec![(950, Role::PipewirePulse)]);

    // A server under an unknown name still counts (it is not a service manager).
    fs::remove_dir_all(p.pdir(950)).unwrap();
    p.process(960, 900, "my-audiod", &["my-audiod"]);
    p.fd(960, 3, "socket:[8000]");
    assert_eq!(fs_.socket_owner(Path::new(sock)), Some(960));
}

#[test]
fn pipewire_pulse_with_companions_of_same_uid() {
    let p = FakeProc::new();
    p.process(1, 0, "init", &["/sbin/init"]);
    p.process(400, 1, "pipewire", &["pipewire"]);
    p.process(401, 1, "wireplumber", &["wireplumber"]);
    p.process(402, 1, "pipewire-pulse", &["pipewire-pulse"]);
    // Another user's PipeWire: not a companion.
    p.process(500, 1, "pipewire", &["pipewire"]);
    p.status(500, 2000);
    // Whose pipewire-pulse is not the one listening on our socket.
    p.process(501, 1, "pipewire-pulse", &["pipewire-pulse"]);
    p.status(501, 2000);
    fs::write(
        p.root().join("net/unix"),
        format!(
            "{NET_UNIX_HEADER}\
             0000000000000000: 00000002 00000000 00010000 0001 01 8000 /run/user/1000/pulse/native\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 8001 /run/user/1000/pipewire-0\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 9000 /run/user/2000/pulse/native\n"
        ),
    )
    .unwrap();
    p.fd(400, 3, "socket:[8001]");
    p.fd(402, 7, "socket:[8000]");
    p.fd(501, 7, "socket:[9000]");
    let env: HashMap<String, String> =
        [("XDG_RUNTIME_DIR".to_string(), "/run/user/1000".to_string())].into();
    let servers = p.fs().audio_server_processes(&env);
    let got: Vec<(Pid, Role)> = servers.iter().map(|i| (i.pid, i.role)).collect();
    assert_eq!(
        got,
        vec![
            (402, Role::PipewirePulse),
            (400, Role::Pipewire),
            (401, Role::Wireplumber)
        ]
    );
    assert!(servers.iter().all(|s| s.family.is_none()));
}

#[test]
fn pipewire_companions_of_another_instance_of_the_same_user_are_not_counted() {
    // Two PipeWire instances of one user (a private one on other sockets, as the e2e rigs run): the
    // companions are those with the listening pipewire-pulse's runtime dirs.
    let p = FakeProc::new();
    p.process(1, 0, "init", &["/sbin/init"]);
    p.process(400, 1, "pipewire", &["pipewire"]);
    p.process(401, 1, "wireplumber", &["wireplumber"]);
    p.process(402, 1, "pipewire-pulse", &["pipewire-pulse"]);
    p.process(600, 1, "pipewire", &["pipewire"]);
    p.process(601, 1, "wireplumber", &["wireplumber"]);
    p.process(602, 1, "pipewire-pulse", &["pipewire-pulse"]);
    // A companion whose environment cannot be read is kept (uid alone decides, as before).
    p.process(403, 1, "wireplumber", &["wireplumber"]);
    for pid in [400, 401, 402] {
        fs::write(
            p.pdir(pid).join("environ"),
            "HOME=/home/u\0XDG_RUNTIME_DIR=/run/user/1000\0LANG=C\0",
        )
        .unwrap();
    }
    for pid in [600, 601, 602] {
        fs::write(
            p.pdir(pid).join("environ"),
            "XDG_RUNTIME_DIR=/tmp/rig/run\0PIPEWIRE_RUNTIME_DIR=/tmp/rig/run\0",
        )
        .unwrap();
    }
    fs::write(
        p.root().join("net/unix"),
        format!(
            "{NET_UNIX_HEADER}\
             0000000000000000: 00000002 00000000 00010000 0001 01 8000 /run/user/1000/pulse/native\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 9000 /tmp/rig/run/pulse/native\n"
        ),
    )
    .unwrap();
    p.fd(402, 7, "socket:[8000]");
    p.fd(602, 7, "socket:[9000]");
    let pids = |xdg: &str| -> Vec<Pid> {
        let env: HashMap<String, String> =
            [("XDG_RUNTIME_DIR".to_string(), xdg.to_string())].into();
        p.fs()
            .audio_server_processes(&env)
            .iter()
            .map(|i| i.pid)
            .collect()
    };
    assert_eq!(pids("/run/user/1000"), vec![402, 400, 401, 403]);
    assert_eq!(pids("/tmp/rig/run"), vec![602, 403, 600, 601]);
}

#[test]
fn sampler_matches_snapshot_and_rereads_only_threads_that_ran() {
    let p = FakeProc::new();
    p.process(
        100,
        1,
        "chromium",
        &["/usr/lib/chromium/chromium", "--type=renderer"],
    );
    p.thread(100, 100, "chromium", T { run_ns: 10, ..T0 });
    p.thread(100, 101, "AudioInputDevic", T { run_ns: 10, ..T0 });
    p.thread(100, 102, "idle", T { run_ns: 10, ..T0 });
    let fs_ = p.fs();
    let mut sampler = micoff_proc::Sampler::new(fs_.clone(), vec![100]);
    assert!(sampler.tick().is_none());
    assert_eq!(sampler.last_full_reads(), 3);

    // 101 ran; 102 did not run (its stat is rewritten anyway, to show it is not re-read).
    p.thread(
        100,
        101,
        "AudioInputDevic",
        T {
            utime: 10,
            stime: 5,
            run_ns: 150_000_000,
            vol: 100,
            inv: 1,
            io: Some((100, 0)),
        },
    );
    p.thread(
        100,
        102,
        "idle",
        T {
            utime: 99,
            run_ns: 10,
            ..T0
        },
    );
    let s = sampler.snapshot();
    assert_eq!(sampler.last_full_reads(), 1);
    let t = |tid: Pid| {
        s.processes[0]
            .threads
            .iter()
            .find(|t| t.tid == tid)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            t(101).utime,
            t(101).stime,
            t(101).voluntary_ctxt,
            t(101).syscr
        ),
        (10, 5, Some(100), Some(100))
    );
    assert_eq!(t(102).utime, 0);

    // Equal to a stateless snapshot for every thread that ran.
    let fresh = fs_.snapshot(&[100]);
    assert_eq!(fresh.processes[0].threads[1], t(101));
    assert_eq!(s.processes[0].role, Role::Renderer);

    // A thread vanishes and another appears: the task dir is listed again.
    fs::remove_dir_all(p.pdir(100).join("task/102")).unwrap();
    p.thread(100, 103, "new one", T { run_ns: 5, ..T0 });
    let s = sampler.snapshot();
    let tids: Vec<Pid> = s.processes[0].threads.iter().map(|t| t.tid).collect();
    assert_eq!(tids, vec![100, 101, 103]);

    // Without kept fds (cap 0) the result is the same.
    let mut by_path = micoff_proc::Sampler::new(fs_.clone(), vec![100]).with_max_open_fds(0);
    let s2 = by_path.snapshot();
    let strip = |s: &micoff_proc::Snapshot| s.processes[0].threads.clone();
    assert_eq!(strip(&s2), strip(&fs_.snapshot(&[100])));

    // The process goes away.
    fs::remove_dir_all(p.pdir(100)).unwrap();
    let r = sampler.tick().unwrap();
    assert_eq!(r.gone_pids, vec![100]);
    assert!(sampler.snapshot().processes.is_empty());
}

#[test]
fn a_thread_that_keeps_running_is_read_through_kept_fds_with_the_same_figures() {
    let p = FakeProc::new();
    p.process(
        100,
        1,
        "chromium",
        &["/usr/lib/chromium/chromium", "--type=renderer"],
    );
    p.thread(100, 100, "chromium", T { run_ns: 10, ..T0 });
    p.thread(100, 101, "AudioInputDevic", T { run_ns: 10, ..T0 });
    let fs_ = p.fs();
    let mut sampler = micoff_proc::Sampler::new(fs_.clone(), vec![100]);
    sampler.snapshot();
    assert_eq!(sampler.open_fds(), 2); // one schedstat each

    let audio = |n: u64| T {
        utime: n,
        stime: n / 2,
        run_ns: 10 + n * 1_000_000,
        vol: 100 * n,
        inv: n,
        io: Some((3 * n, 2 * n)),
    };
    let thread = |s: &micoff_proc::Snapshot, tid: Pid| {
        s.processes[0]
            .threads
            .iter()
            .find(|t| t.tid == tid)
            .unwrap()
            .clone()
    };
    // Ticks 1..=4: 101 runs every time. From its second run on it keeps stat/status/io open,
    // and what it reads through them is what a stateless snapshot reads by path.
    for n in 1..=4 {
        p.thread(100, 101, "AudioInputDevic", audio(n));
        let s = sampler.snapshot();
        assert_eq!(sampler.last_full_reads(), 1, "tick {n}");
        assert_eq!(
            thread(&s, 101),
            thread(&fs_.snapshot(&[100]), 101),
            "tick {n}"
        );
        assert_eq!(thread(&s, 101).syscw, Some(2 * n));
        assert_eq!(sampler.open_fds(), if n >= 2 { 5 } else { 2 }, "tick {n}");
    }

    // It exits: its four fds close with it.
    fs::remove_dir_all(p.pdir(100).join("task/101")).unwrap();
    let s = sampler.snapshot();
    assert_eq!(s.processes[0].threads.len(), 1);
    assert_eq!(sampler.open_fds(), 1);

    // Under a cap that leaves no room for them, the same figures come by path.
    let mut capped = micoff_proc::Sampler::new(fs_.clone(), vec![100]).with_max_open_fds(2);
    p.thread(100, 102, "AudioOutputDevi", audio(1));
    capped.snapshot();
    for n in 2..=3 {
        p.thread(100, 102, "AudioOutputDevi", audio(n));
        let s = capped.snapshot();
        assert_eq!(thread(&s, 102), thread(&fs_.snapshot(&[100]), 102));
        assert!(capped.open_fds() <= 2);
    }
}

// Cold threads: a sampler that reads threads idle for a while only at their turn.

const MS: u64 = 1_000_000;

/// One process whose threads the test runs, kept the way the kernel keeps them: the process's
/// utime is all its threads' run time (exited ones included) truncated to 10 ms ticks, a thread's
/// utime likewise, and a wakeup is a voluntary context switch.
struct Busy {
    p: FakeProc,
    pid: Pid,
    /// tid -> (counters, start time)
    threads: std::collections::BTreeMap<Pid, (T, u64)>,
    exited_ns: u64,
}

impl Busy {
    fn new(pid: Pid, tids: impl IntoIterator<Item = Pid>) -> Self {
        let p = FakeProc::new();
        p.process(
            pid,
            1,
            "chromium",
            &["/usr/lib/chromium/chromium", "--type=renderer"],
        );
        let threads = tids
            .into_iter()
            .map(|tid| (tid, (T0, 2000 + u64::from(tid))))
            .collect();
        let b = Self {
            p,
            pid,
            threads,
            exited_ns: 0,
        };
        b.write();
        b
    }

    fn total_ns(&self) -> u64 {
        self.exited_ns + self.threads.values().map(|(t, _)| t.run_ns).sum::<u64>()
    }

    /// The process's utime + stime, as its stat says.
    fn ticks(&self) -> u64 {
        self.total_ns() / (10 * MS)
    }

    /// Writes the process's stat and every thread's files (in place: kept fds read the new text).
    fn write(&self) {
        let stat = stat_text_threads(
            self.pid,
            "chromium",
            1,
            self.ticks(),
            0,
            1000 + u64::from(self.pid),
            self.threads.len(),
        );
        fs::write(self.p.pdir(self.pid).join("stat"), stat).unwrap();
        for (&tid, &(t, start)) in &self.threads {
            self.p.thread_started(self.pid, tid, "t", t, start);
        }
    }

    /// `tid` runs for `ns` and wakes `wakeups` times (written by the next `write`).
    fn run(&mut self, tid: Pid, ns: u64, wakeups: u64) {
        let (t, _) = self.threads.get_mut(&tid).unwrap();
        t.run_ns += ns;
        t.utime = t.run_ns / (10 * MS);
        t.vol += wakeups;
    }

    /// `tid` exits: a kept fd of it reads nothing (the kernel answers ESRCH), its directory goes,
    /// its run time stays in the process's.
    fn exit(&mut self, tid: Pid) {
        let (t, _) = self.threads.remove(&tid).unwrap();
        self.exited_ns += t.run_ns;
        let d = self.p.pdir(self.pid).join(format!("task/{tid}"));
        for f in ["stat", "schedstat", "status", "io"] {
            fs::write(d.join(f), "").unwrap();
        }
        fs::remove_dir_all(d).unwrap();
    }

    /// A new thread, started at `starttime`, that has run for `run_ns` so far.
    fn spawn(&mut self, tid: Pid, starttime: u64, run_ns: u64) {
        let t = T {
            run_ns,
            utime: run_ns / (10 * MS),
            ..T0
        };
        self.threads.insert(tid, (t, starttime));
    }

    fn sampler(&self, cold: ColdThreads) -> Sampler {
        Sampler::new(self.p.fs(), vec![self.pid])
            .skip_idle_processes(true)
            .cold_threads(Some(cold))
    }

    /// `n` ticks of `s` in which the process's own thread runs 10 ms (100 wakeups), the rest sleep.
    fn idle_ticks(&mut self, s: &mut Sampler, n: usize) {
        for _ in 0..n {
            self.run(self.pid, 10 * MS, 100);
            self.write();
            s.tick();
        }
    }
}

/// The thread's sample in a snapshot.
fn sampled(s: &Snapshot, tid: Pid) -> &ThreadSample {
    s.processes[0]
        .threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap()
}

/// When the thread was last read, as of this snapshot.
fn read_at(s: &Snapshot, tid: Pid) -> u64 {
    sampled(s, tid).read_at_ns.unwrap_or(s.processes[0].at_ns)
}

fn row(r: &CpuReport, tid: Pid) -> &ThreadRates {
    r.processes[0]
        .threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// One tick: the report and the snapshot it ended with.
fn tick(s: &mut Sampler) -> (CpuReport, Snapshot) {
    let r = s.tick().unwrap();
    (r, s.last_snapshot().unwrap().clone())
}

#[test]
fn a_cold_thread_that_wakes_is_read_at_its_turn_with_its_figures_over_its_own_span() {
    let cold = ColdThreads { after: 2, every: 4 };
    let mut b = Busy::new(100, 100..=108);
    let mut s = b.sampler(cold);
    s.tick(); // lists the threads
              // 100 runs 10 ms every tick (the process's CPU time moves every tick); the rest sleep. After
              // two idle ticks they go cold: each is read every 4th tick, two of the eight per tick.
    let mut reads = Vec::new();
    for _ in 0..8 {
        b.run(100, 10 * MS, 100);
        b.write();
        s.tick();
        reads.push(s.last_thread_reads());
    }
    assert_eq!(reads, [9, 9, 3, 3, 3, 3, 3, 3]);

    // 105 wakes 30 times and runs 3 ms: too little to show in the process's clock ticks, so it is
    // found at its turn, within 4 ticks; until then it is listed at 0 over no span.
    let since = read_at(s.last_snapshot().unwrap(), 105);
    b.run(105, 3 * MS, 30);
    let mut prev_at = s.last_snapshot().unwrap().processes[0].at_ns;
    let mut waited = 0;
    let (r, snap) = loop {
        b.run(100, 10 * MS, 100);
        b.write();
        let (r, snap) = tick(&mut s);
        waited += 1;
        if sampled(&snap, 105).read_at_ns.is_none() {
            break (r, snap);
        }
        let t = row(&r, 105);
        assert_eq!((t.window_ms, t.rates.run_time_ns), (Some(0.0), Some(0)));
        assert_eq!(t.rates.wakeups_per_s, Some(0.0));
        assert!(waited < cold.every, "not read within {} ticks", cold.every);
        prev_at = snap.processes[0].at_ns;
    };
    assert_eq!(s.cold_sweeps(), 0);
    let t = row(&r, 105);
    let span_ns = snap.processes[0].at_ns - since;
    assert_eq!(t.window_ms, Some(span_ns as f64 / 1e6));
    assert_eq!(t.rates.run_time_ns, Some(3 * MS));
    assert!(near(
        t.rates.run_time_pct.unwrap(),
        3e6 * 100.0 / span_ns as f64
    ));
    assert!(near(
        t.rates.wakeups_per_s.unwrap() * span_ns as f64 / 1e9,
        30.0
    ));
    // The process adds its average rate over its span, not its 3 ms at once.
    let window_ns = snap.processes[0].at_ns - prev_at;
    let share = (3 * MS as u128 * window_ns as u128 / span_ns as u128) as u64;
    assert_eq!(r.processes[0].rates.run_time_ns, Some(10 * MS + share));

    // It ran: read every tick again, over its process's window.
    b.run(100, 10 * MS, 100);
    b.write();
    let (r, _) = tick(&mut s);
    assert_eq!(row(&r, 105).window_ms, None);
    assert_eq!(row(&r, 105).rates.run_time_ns, Some(0));
}

#[test]
fn a_cold_thread_that_burns_cpu_is_read_at_once() {
    let cold = ColdThreads { after: 1, every: 8 };
    let mut b = Busy::new(200, 200..=215);
    let mut s = b.sampler(cold);
    b.idle_ticks(&mut s, 4);
    let reads = s.last_thread_reads();
    assert!(reads <= 4, "{reads}");
    // 207 runs 30 ms: the process's CPU time moves by 3 ticks more than 200 accounts for, which
    // clock-tick truncation (under 2 ticks) cannot explain: every cold thread is read in this tick.
    let since = read_at(s.last_snapshot().unwrap(), 207);
    b.run(200, 10 * MS, 100);
    b.run(207, 30 * MS, 3);
    b.write();
    let (r, snap) = tick(&mut s);
    assert_eq!(s.cold_sweeps(), 1);
    assert_eq!(s.last_thread_reads(), 16);
    let t = row(&r, 207);
    assert_eq!(t.rates.run_time_ns, Some(30 * MS));
    assert_eq!(
        t.window_ms,
        Some((snap.processes[0].at_ns - since) as f64 / 1e6)
    );
    // A cold thread running less than that waits for its turn.
    b.idle_ticks(&mut s, 3);
    b.run(200, 10 * MS, 100);
    b.run(211, 4 * MS, 3);
    b.write();
    s.tick();
    assert_eq!(s.cold_sweeps(), 1);
}

#[test]
fn no_cpu_or_wakeup_is_lost_across_hot_and_cold_transitions() {
    let cold = ColdThreads { after: 2, every: 5 };
    let mut b = Busy::new(300, 300..=309);
    let mut s = b.sampler(cold);
    s.tick();
    let mut prev = s.last_snapshot().unwrap().clone();
    let first_read = read_at(&prev, 301);
    let runs = [1, 2, 3, 13, 26, 27, 40, 41, 42, 43, 55];
    let (mut run_sum, mut wakeup_sum, mut span_sum) = (0u64, 0.0f64, 0u64);
    let (mut unread_rows, mut long_rows) = (0, 0);
    for n in 1..=70u64 {
        b.run(300, 10 * MS, 100);
        if runs.contains(&n) {
            b.run(301, MS + n, 7);
        }
        b.write();
        let (r, snap) = tick(&mut s);
        // The process's figures are its stat's, every tick.
        let p = &snap.processes[0];
        assert_eq!(p.utime + p.stime, b.ticks());
        let elapsed = p.at_ns - prev.processes[0].at_ns;
        let ticks = p.utime - prev.processes[0].utime;
        assert!(near(
            r.processes[0].rates.cpu_pct,
            micoff_proc::rates::ticks_pct(ticks, 100, elapsed)
        ));
        // 301's row covers the time since its last read: rate x span = what it did.
        let t = row(&r, 301);
        let span = read_at(&snap, 301) - read_at(&prev, 301);
        match t.window_ms {
            None => assert_eq!(span, elapsed),
            Some(ms) => {
                assert_eq!(ms, span as f64 / 1e6);
                if span == 0 {
                    unread_rows += 1;
                } else if span > elapsed {
                    long_rows += 1;
                }
            }
        }
        let ns = t.rates.run_time_ns.unwrap();
        if span > 0 {
            assert!(near(
                t.rates.run_time_pct.unwrap() * span as f64 / 100.0,
                ns as f64
            ));
        }
        run_sum += ns;
        wakeup_sum += t.rates.wakeups_per_s.unwrap() * span as f64 / 1e9;
        span_sum += span;
        prev = snap;
    }
    assert!(
        unread_rows > 10 && long_rows >= 4,
        "{unread_rows} {long_rows}"
    );
    // Everything 301 did was reported once, over spans that tile the time it was watched.
    let added: u64 = runs.iter().map(|n| MS + n).sum();
    assert_eq!(run_sum, added);
    assert!(near(wakeup_sum, 7.0 * runs.len() as f64), "{wakeup_sum}");
    assert_eq!(span_sum, read_at(&prev, 301) - first_read);
}

#[test]
fn a_thread_that_vanishes_while_cold_is_dropped_with_its_fds() {
    let cold = ColdThreads { after: 1, every: 6 };
    let mut b = Busy::new(400, 400..=409);
    let mut s = b.sampler(cold);
    b.idle_ticks(&mut s, 4);
    // A schedstat fd per thread, and 400 (running every tick) keeps its other files open too.
    let fds = s.open_fds();
    assert!(fds > 10, "{fds}");
    // 405 exits (the thread count says so): the task dir is listed again, 405 goes, its fd is
    // given back, nothing else is read for it.
    b.exit(405);
    b.run(400, 10 * MS, 100);
    b.write();
    let (r, _) = tick(&mut s);
    assert!(r.processes[0].threads.iter().all(|t| t.tid != 405));
    assert_eq!(r.processes[0].thread_count, 9);
    assert_eq!(s.open_fds(), fds - 1);
    assert_eq!(s.cold_sweeps(), 0);

    // 406 exits and 410 starts in the same tick (the count does not change): 406 is found gone
    // at its turn, within 6 ticks, and 410 is listed then.
    b.exit(406);
    b.spawn(410, 5000, 0);
    let mut ticks = 0;
    loop {
        b.run(400, 10 * MS, 100);
        b.write();
        let (r, snap) = tick(&mut s);
        ticks += 1;
        let tids: Vec<Pid> = snap.processes[0].threads.iter().map(|t| t.tid).collect();
        if !tids.contains(&406) {
            assert!(tids.contains(&410), "{tids:?}");
            assert_eq!(r.processes[0].thread_count, 9);
            break;
        }
        assert!(ticks < cold.every, "406 still listed after {ticks} ticks");
    }
    assert_eq!(s.open_fds(), fds - 1, "406's fd given back, 410's taken");
}

#[test]
fn a_reused_tid_is_a_new_thread_with_no_figures_from_the_old_one() {
    let cold = ColdThreads { after: 1, every: 4 };
    let mut b = Busy::new(500, 500..=507);
    b.run(505, 500 * MS, 5000);
    b.write();
    let mut s = b.sampler(cold);
    b.idle_ticks(&mut s, 4);
    let fds = s.open_fds();
    // 505 (cold) exits and a new thread gets tid 505, having run 7 ms: same thread count.
    b.exit(505);
    b.spawn(505, 9000, 7 * MS);
    let mut ticks = 0;
    loop {
        b.run(500, 10 * MS, 100);
        b.write();
        let (r, snap) = tick(&mut s);
        ticks += 1;
        if sampled(&snap, 505).starttime == 9000 {
            // Found at its turn: no baseline yet, so no row; the process's CPU is its stat's.
            assert!(r.processes[0].threads.iter().all(|t| t.tid != 505));
            assert_eq!(snap.processes[0].utime, b.ticks());
            break;
        }
        assert!(ticks < cold.every, "reuse not seen after {ticks} ticks");
    }
    // From then on its figures are its own: 2 ms more, 2 ms in its row.
    b.run(500, 10 * MS, 100);
    b.run(505, 2 * MS, 4);
    b.write();
    let (r, _) = tick(&mut s);
    assert_eq!(row(&r, 505).rates.run_time_ns, Some(2 * MS));
    assert!(r.processes[0]
        .threads
        .iter()
        .all(|t| t.rates.cpu_pct >= 0.0));
    assert_eq!(
        s.open_fds(),
        fds,
        "the old 505's fd given back, the new one's taken"
    );
}

#[test]
fn a_cold_thread_running_a_little_each_tick_is_found_once_its_time_adds_up() {
    // Its turn is far off (every 50 ticks): what finds it is its run time adding up in the
    // process's CPU time beyond what the threads read account for.
    let cold = ColdThreads {
        after: 1,
        every: 50,
    };
    let mut b = Busy::new(600, 600..=619);
    let mut s = b.sampler(cold);
    b.idle_ticks(&mut s, 4);
    assert!(s.last_thread_reads() < 5, "{}", s.last_thread_reads());
    let since = read_at(s.last_snapshot().unwrap(), 613);
    // 613 runs 8 ms a tick: under the 2 ticks of truncation in any one tick, 20 ms by the third.
    let mut ticks = 0;
    let (r, snap) = loop {
        b.run(600, 10 * MS, 100);
        b.run(613, 8 * MS, 50);
        b.write();
        let (r, snap) = tick(&mut s);
        ticks += 1;
        if sampled(&snap, 613).read_at_ns.is_none() {
            break (r, snap);
        }
        assert!(ticks < 4, "613 not found after {ticks} ticks");
    };
    assert_eq!(s.cold_sweeps(), 1);
    let t = row(&r, 613);
    assert_eq!(
        t.rates.run_time_ns,
        Some(ticks * 8 * MS),
        "all of it, over its own span"
    );
    let span_ns = snap.processes[0].at_ns - since;
    assert_eq!(t.window_ms, Some(span_ns as f64 / 1e6));
    assert!(near(
        t.rates.wakeups_per_s.unwrap() * span_ns as f64 / 1e9,
        50.0 * ticks as f64
    ));
    // From then on it is hot: read every tick, over its process's window.
    for _ in 0..3 {
        b.run(600, 10 * MS, 100);
        b.run(613, 8 * MS, 50);
        b.write();
        let (r, _) = tick(&mut s);
        assert_eq!(row(&r, 613).window_ms, None);
        assert_eq!(row(&r, 613).rates.run_time_ns, Some(8 * MS));
    }
}

#[test]
fn a_thread_gone_between_listing_and_reading_is_skipped_and_the_rest_is_reported() {
    let cold = ColdThreads { after: 1, every: 3 };
    let mut b = Busy::new(700, 700..=705);
    let mut s = b.sampler(cold);
    b.idle_ticks(&mut s, 4);
    // The count says 7 threads; the task dir lists 706 but its files are already gone (it exited
    // between the listing and the reads): no error, no row, the others as usual.
    let ghost = b.p.pdir(700).join("task/706");
    fs::create_dir_all(&ghost).unwrap();
    b.run(700, 10 * MS, 100);
    b.write();
    let stat = stat_text_threads(700, "chromium", 1, b.ticks(), 0, 1700, 7);
    fs::write(b.p.pdir(700).join("stat"), stat).unwrap();
    let (r, snap) = tick(&mut s);
    assert!(snap.processes[0].threads.iter().all(|t| t.tid != 706));
    assert_eq!(row(&r, 700).rates.run_time_ns, Some(10 * MS));
    assert!(r.processes[0]
        .threads
        .iter()
        .all(|t| t.rates.cpu_pct >= 0.0 && t.rates.run_time_pct.unwrap_or(0.0) >= 0.0));
    // Gone for good (the count is 6 again): the next ticks go on as usual.
    fs::remove_dir_all(&ghost).unwrap();
    for _ in 0..4 {
        b.run(700, 10 * MS, 100);
        b.write();
        let (r, _) = tick(&mut s);
        assert_eq!(r.processes[0].threads.len(), 6);
        assert_eq!(row(&r, 700).rates.run_time_ns, Some(10 * MS));
    }
}
