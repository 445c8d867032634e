//! Parsers for the text of `/proc` files. They take `&str` (or bytes for NUL-separated files) and do no
//! I/O, so they are tested with literal samples.

use crate::Pid;

/// The fields micoff uses from `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat<'a> {
    pub pid: Pid,
    /// The thread's or process's `comm` (at most 15 bytes in the kernel; may hold spaces and `)`).
    pub comm: &'a str,
    pub state: char,
    pub ppid: Pid,
    /// User time in clock ticks (`sysconf(_SC_CLK_TCK)`).
    pub utime: u64,
    /// System time in clock ticks.
    pub stime: u64,
    pub num_threads: u64,
    /// Start time after boot in clock ticks; with the pid it identifies a task across samples (pid reuse).
    pub starttime: u64,
}

/// Parses `/proc/.../stat`. The comm sits between the first `(` and the LAST `)`: a comm may itself
/// contain `)`, `(` and spaces (`a) (b`), but the fields after it never contain `)`.
pub fn parse_stat(s: &str) -> Option<Stat<'_>> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = s[..open].trim().parse().ok()?;
    let comm = &s[open + 1..close];
    let mut rest = s[close + 1..].split_ascii_whitespace();
    // Field numbers as in proc(5): 3 state, 4 ppid, 14 utime, 15 stime, 20 num_threads, 22 starttime.
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let mut rest = rest.skip(9); // fields 5..=13
    let utime = rest.next()?.parse().ok()?;
    let stime = rest.next()?.parse().ok()?;
    let mut rest = rest.skip(4); // fields 16..=19
    let num_threads = rest.next()?.parse().ok()?;
    let starttime = rest.nth(1)?.parse().ok()?; // skip 21 itrealvalue
    Some(Stat {
        pid,
        comm,
        state,
        ppid,
        utime,
        stime,
        num_threads,
        starttime,
    })
}

/// `/proc/.../schedstat`: time on CPU (ns), time waiting on a run queue (ns), number of time slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedStat {
    pub run_time_ns: u64,
    pub wait_time_ns: u64,
    pub timeslices: u64,
}

pub fn parse_schedstat(s: &str) -> Option<SchedStat> {
    let mut it = s.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    Some(SchedStat {
        run_time_ns: it.next()??,
        wait_time_ns: it.next()??,
        timeslices: it.next()??,
    })
}

/// Context switch counters from `/proc/.../status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtxtSwitches {
    pub voluntary: u64,
    pub involuntary: u64,
}

/// Finds `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` (the last two lines of `status`,
/// so the search runs from the end).
pub fn parse_status_ctxt(s: &str) -> Option<CtxtSwitches> {
    let mut voluntary = None;
    let mut involuntary = None;
    for line in s.lines().rev() {
        if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
            voluntary = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
            involuntary = v.trim().parse().ok();
        }
        if voluntary.is_some() && involuntary.is_some() {
            break;
        }
    }
    Some(CtxtSwitches {
        voluntary: voluntary?,
        involuntary: involuntary?,
    })
}

/// The real uid from the `Uid:` line of `/proc/<pid>/status` (real, effective, saved, fs).
pub fn parse_status_uid(s: &str) -> Option<u32> {
    s.lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_ascii_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Read/write syscall counters from `/proc/.../io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoSyscalls {
    pub syscr: u64,
    pub syscw: u64,
}

pub fn parse_io(s: &str) -> Option<IoSyscalls> {
    let mut syscr = None;
    let mut syscw = None;
    for line in s.lines() {
        if let Some(v) = line.strip_prefix("syscr:") {
            syscr = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("syscw:") {
            syscw = v.trim().parse().ok();
        }
    }
    Some(IoSyscalls {
        syscr: syscr?,
        syscw: syscw?,
    })
}

/// Splits `/proc/<pid>/cmdline` (NUL-separated, NUL-terminated) into arguments. Chromium children
/// rewrite their title into ONE space-separated string padded with NULs; [`arg_tokens`] handles that.
pub fn parse_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Every space- or NUL-separated token of a command line (flags never contain spaces, so this finds
/// `--type=renderer` whether or not the process rewrote its title).
pub fn arg_tokens(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .flat_map(|a| a.split(' '))
        .filter(|t| !t.is_empty())
}

/// The inodes of LISTENING unix sockets bound to `path` in `/proc/net/unix`:
/// `Num RefCount Protocol Flags Type St Inode Path`; listening sockets carry `__SO_ACCEPTCON`
/// (0x10000) in Flags. The path is the rest of the line (it may contain spaces).
pub fn parse_net_unix_listeners(s: &str, path: &str) -> Vec<u64> {
    const SO_ACCEPTCON: u32 = 0x1_0000;
    let mut out = Vec::new();
    for line in s.lines().skip(1) {
        let mut rest = line.trim_start();
        let mut fields = [""; 7];
        let mut ok = true;
        for f in fields.iter_mut() {
            let end = rest.find(' ').unwrap_or(rest.len());
            if end == 0 {
                ok = false;
                break;
            }
            *f = &rest[..end];
            rest = rest[end..].trim_start_matches(' ');
        }
        if !ok || rest != path {
            continue;
        }
        let flags = u32::from_str_radix(fields[3], 16).unwrap_or(0);
        if flags & SO_ACCEPTCON == 0 {
            continue;
        }
        if let Ok(inode) = fields[6].parse() {
            out.push(inode);
        }
    }
    out
}

/// The inode in an fd link target `socket:[12345]`.
pub fn parse_socket_link(target: &str) -> Option<u64> {
    target
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stat_line(pid: u32, comm: &str, utime: u64, stime: u64) -> String {
        format!(
            "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 1197 0 0 0 {utime} {stime} 0 0 20 0 7 0 \
             123456 1000000 100 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
        )
    }

    #[test]
    fn stat_awkward_comms() {
        for comm in [
            "plain",
            "with space",
            "a) (b",
            ")",
            "(",
            "))((",
            "x) S 1 2 3",
            "AudioInputDevic",
            "AudioIP~allback",
            "Web Content",
            "Isolated Web Co",
            "ünïcødé🎤",
            "",
        ] {
            let line = stat_line(4242, comm, 250, 30);
            let s = parse_stat(&line).unwrap_or_else(|| panic!("parse failed for {comm:?}"));
            assert_eq!(s.pid, 4242);
            assert_eq!(s.comm, comm, "comm");
            assert_eq!(s.state, 'S');
            assert_eq!(s.ppid, 1);
            assert_eq!((s.utime, s.stime), (250, 30));
            assert_eq!(s.num_threads, 7);
            assert_eq!(s.starttime, 123456);
        }
    }

    #[test]
    fn stat_real_sample() {
        let line =
            "1 (systemd) S 0 1 1 0 -1 4194560 52021 2187046 131 1222 94 167 6532 2262 20 0 1 0 \
                    16 22941696 3278 18446744073709551615 1 1 0 0 0 0 671173123 4096 1260 0 0 0 17 \
                    0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.pid, s.comm, s.ppid), (1, "systemd", 0));
        assert_eq!(
            (s.utime, s.stime, s.num_threads, s.starttime),
            (94, 167, 1, 16)
        );
    }

    #[test]
    fn stat_rejects_garbage() {
        for bad in [
            "",
            "12",
            "12 (x",
            "12 x) S",
            "x (y) S 1",
            "12 (y) S",
            "12 (y) S 1 2 3",
        ] {
            assert!(parse_stat(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn schedstat() {
        assert_eq!(
            parse_schedstat("351265 0 1\n"),
            Some(SchedStat {
                run_time_ns: 351265,
                wait_time_ns: 0,
                timeslices: 1
            })
        );
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("1 x 3"), None);
    }

    const STATUS: &str = "Name:\tAudioInputDevic\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t812\n\
        Ngid:\t0\nPid:\t815\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n\
        VmHWM:\t   10000 kB\nCpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t15312\n\
        nonvoluntary_ctxt_switches:\t27\n";

    #[test]
    fn status_fields() {
        assert_eq!(
            parse_status_ctxt(STATUS),
            Some(CtxtSwitches {
                voluntary: 15312,
                involuntary: 27
            })
        );
        assert_eq!(parse_status_uid(STATUS), Some(1000));
        assert_eq!(
            parse_status_ctxt("Name:\tx\nvoluntary_ctxt_switches:\t1\n"),
            None
        );
        assert_eq!(parse_status_ctxt(""), None);
        assert_eq!(parse_status_uid("Name:\tx\n"), None);
    }

    #[test]
    fn io_fields() {
        let io = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n\
                  read_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_io(io),
            Some(IoSyscalls {
                syscr: 632687,
                syscw: 632675
            })
        );
        assert_eq!(parse_io("rchar: 1\n"), None);
        assert_eq!(parse_io(""), None);
    }

    #[test]
    fn cmdline_nul_and_rewritten() {
        let nul = b"/usr/lib/chromium/chromium\0--type=renderer\0--lang=en-US\0";
        assert_eq!(
            parse_cmdline(nul),
            vec![
                "/usr/lib/chromium/chromium",
                "--type=renderer",
                "--lang=en-US"
            ]
        );
        // Chromium's setproctitle: one string, spaces, NUL padding.
        let titled = b"/usr/lib/chromium/chromium --type=utility --utility-sub-type=audio.mojom.AudioService\0\0\0";
        let args = parse_cmdline(titled);
        assert_eq!(args.len(), 1);
        let toks: Vec<&str> = arg_tokens(&args).collect();
        assert_eq!(
            toks,
            vec![
                "/usr/lib/chromium/chromium",
                "--type=utility",
                "--utility-sub-type=audio.mojom.AudioService"
            ]
        );
        assert!(parse_cmdline(b"").is_empty());
        assert_eq!(
            parse_cmdline(b"\xff\xfe\0x\0"),
            vec!["\u{fffd}\u{fffd}", "x"]
        );
    }

    #[test]
    fn net_unix_listeners() {
        let s = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 30001 /run/user/1000/pulse/native\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 30002 /run/user/1000/pulse/native\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 30003 /tmp/rig dir/pulse.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 30004 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 30005\n\
            0000000000000000: 00000002 00000000 00010000 0005 01 30006 /run/user/1000/pulse/native.other\n";
        assert_eq!(
            parse_net_unix_listeners(s, "/run/user/1000/pulse/native"),
            vec![30001]
        );
        assert_eq!(
            parse_net_unix_listeners(s, "/tmp/rig dir/pulse.sock"),
            vec![30003]
        );
        assert!(parse_net_unix_listeners(s, "/nope").is_empty());
        assert!(parse_net_unix_listeners("", "/x").is_empty());
    }

    #[test]
    fn socket_link() {
        assert_eq!(parse_socket_link("socket:[30001]"), Some(30001));
        assert_eq!(parse_socket_link("pipe:[30001]"), None);
        assert_eq!(parse_socket_link("/dev/null"), None);
        assert_eq!(parse_socket_link("socket:[x]"), None);
    }
}
