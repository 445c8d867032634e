//! Process discovery: parents, descendant trees, "the browser that launched me".

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::fs::{text, Error};
use crate::parse::{parse_cmdline, parse_stat};
use crate::role::{browser_family_of_name, BrowserFamily, Role};
use crate::sample::Scratch;
use crate::{Pid, ProcFs};

/// What discovery knows about a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: Pid,
    /// 0 for the init process and kernel threads' parent.
    pub ppid: Pid,
    pub comm: String,
    /// The command line, NUL-separated arguments (Chromium children: one space-separated string).
    pub cmdline: Vec<String>,
    pub role: Role,
    /// The browser family when the process's name or flags say so, or it is in a browser's tree.
    pub family: Option<BrowserFamily>,
}

impl ProcessInfo {
    /// A short command line for display: at most `max_chars` characters.
    pub fn cmdline_summary(&self, max_chars: usize) -> String {
        let joined = self.cmdline.join(" ");
        if joined.chars().count() <= max_chars {
            return joined;
        }
        let mut s: String = joined.chars().take(max_chars.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// A guess at a process's family from its own name and flags.
fn family_of(comm: &str, cmdline: &[String], role: Role) -> Option<BrowserFamily> {
    let exe = cmdline
        .first()
        .and_then(|a| a.split(' ').next())
        .map(|a| a.rsplit('/').next().unwrap_or(a))
        .unwrap_or("");
    if let Some(f) = browser_family_of_name(comm).or_else(|| browser_family_of_name(exe)) {
        return Some(f);
    }
    match role {
        Role::Content | Role::Socket | Role::Rdd | Role::Forkserver => Some(BrowserFamily::Firefox),
        Role::Renderer
        | Role::AudioService
        | Role::NetworkService
        | Role::StorageService
        | Role::Zygote
        | Role::Crashpad => Some(BrowserFamily::Chromium),
        _ => None,
    }
}

impl ProcFs {
    /// `(ppid, comm)` from `/proc/<pid>/stat`; `None` when the process is gone.
    pub fn parent_of(&self, pid: Pid) -> Option<(Pid, String)> {
        let mut s = Scratch::new(self);
        let raw = s.read(&[&pid, &"stat"])?;
        let t = text(raw);
        let st = parse_stat(&t)?;
        Some((st.ppid, st.comm.to_owned()))
    }

    /// Comm, parent, command line and role of one process; `None` when it is gone.
    pub fn process_info(&self, pid: Pid) -> Option<ProcessInfo> {
        let mut s = Scratch::new(self);
        self.process_info_with(pid, &mut s)
    }

    pub(crate) fn process_info_with(&self, pid: Pid, s: &mut Scratch) -> Option<ProcessInfo> {
        let (ppid, comm) = {
            let raw = s.read(&[&pid, &"stat"])?;
            let t = text(raw);
            let st = parse_stat(&t)?;
            (st.ppid, st.comm.to_owned())
        };
        let cmdline = s
            .read(&[&pid, &"cmdline"])
            .map(parse_cmdline)
            .unwrap_or_default();
        let role = Role::classify(&comm, &cmdline);
        let family = family_of(&comm, &cmdline, role);
        Some(ProcessInfo {
            pid,
            ppid,
            comm,
            cmdline,
            role,
            family,
        })
    }

    /// The basename of `/proc/<pid>/exe` (unreadable for other users' processes without root).
    pub fn exe_name(&self, pid: Pid) -> Option<String> {
        let target = std::fs::read_link(self.root().join(pid.to_string()).join("exe")).ok()?;
        let name = target.file_name()?.to_string_lossy();
        // A replaced binary reads `chromium (deleted)`.
        Some(name.trim_end_matches(" (deleted)").to_owned())
    }

    /// `(pid, ppid, comm)` of every process (one `stat` read each; vanished ones are skipped).
    pub fn all_parents(&self) -> Result<Vec<(Pid, Pid, String)>, Error> {
        let pids = self.list_pids()?;
        let mut s = Scratch::new(self);
        let mut out = Vec::with_capacity(pids.len());
        for pid in pids {
            if let Some(raw) = s.read(&[&pid, &"stat"]) {
                if let Some(st) = parse_stat(&text(raw)) {
                    out.push((pid, st.ppid, st.comm.to_owned()));
                }
            }
        }
        Ok(out)
    }

    /// `root_pid` and all its descendants, root first then breadth-first (children by pid). Empty
    /// when `root_pid` does not exist.
    pub fn process_tree(&self, root_pid: Pid) -> Result<Vec<ProcessInfo>, Error> {
        Ok(self.process_tree_in(&self.all_parents()?, root_pid))
    }

    /// [`process_tree`](Self::process_tree) over a listing from [`all_parents`](Self::all_parents)
    /// (one listing serves several lookups).
    pub fn process_tree_in(&self, all: &[(Pid, Pid, String)], root_pid: Pid) -> Vec<ProcessInfo> {
        let mut children: HashMap<Pid, Vec<Pid>> = HashMap::new();
        for (pid, ppid, _) in all {
            if pid != ppid {
                children.entry(*ppid).or_default().push(*pid);
            }
        }
        for v in children.values_mut() {
            v.sort_unstable();
        }
        let mut s = Scratch::new(self);
        let mut out = Vec::new();
        let Some(root) = self.process_info_with(root_pid, &mut s) else {
            return out;
        };
        let family = root.family;
        out.push(root);
        let mut i = 0;
        while i < out.len() {
            let pid = out[i].pid;
            if let Some(kids) = children.get(&pid) {
                for &k in kids {
                    if out.iter().any(|p| p.pid == k) {
                        continue; // defensive: a cycle in a fake tree
                    }
                    if let Some(mut info) = self.process_info_with(k, &mut s) {
                        if info.family.is_none() && !info.role.is_audio_server() {
                            info.family = family;
                        }
                        out.push(info);
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// The main processes of the browsers running now, by pid: processes named like a browser's
    /// executable that [`Role::classify`] calls [`Role::Browser`] (so no Chromium child with a
    /// `--type=`, no Firefox content process), leaving out those whose parent is such a process
    /// of the same family too (a launcher script that runs the real binary as its child: the
    /// outermost one is the root of the whole tree).
    pub fn running_browsers(&self) -> Result<Vec<ProcessInfo>, Error> {
        let all = self.all_parents()?;
        let mut s = Scratch::new(self);
        let mains: Vec<ProcessInfo> = all
            .iter()
            .filter(|(_, _, comm)| browser_family_of_name(comm).is_some())
            .filter_map(|(pid, _, _)| self.process_info_with(*pid, &mut s))
            .filter(|p| p.role == Role::Browser && p.family.is_some())
            .collect();
        let is_main_of = |pid: Pid, family: Option<BrowserFamily>| {
            mains.iter().any(|m| m.pid == pid && m.family == family)
        };
        let roots = mains
            .iter()
            .filter(|p| p.ppid == p.pid || !is_main_of(p.ppid, p.family))
            .cloned()
            .collect();
        Ok(roots)
    }

    /// Whether a process's comm or exe basename names a browser's main executable.
    fn browser_family_of_pid(&self, pid: Pid, comm: &str) -> Option<BrowserFamily> {
        browser_family_of_name(comm)
            .or_else(|| self.exe_name(pid).and_then(|n| browser_family_of_name(&n)))
    }

    /// The browser that launched `pid`: walking up from `pid` itself (pass the host's parent), the
    /// first process whose comm or exe basename is a browser's; then further up while the parents are
    /// browser processes of the same family too (a renderer's or zygote's parent is the browser), so
    /// the result is the browser's main process. `None` when no ancestor is a browser.
    pub fn find_browser_ancestor(&self, pid: Pid) -> Option<ProcessInfo> {
        let mut cur = pid;
        let mut found: Option<(Pid, BrowserFamily)> = None;
        for _ in 0..128 {
            if cur == 0 {
                break;
            }
            let Some((ppid, comm)) = self.parent_of(cur) else {
                break;
            };
            match (self.browser_family_of_pid(cur, &comm), found) {
                (Some(f), None) => found = Some((cur, f)),
                (Some(f), Some((_, ff))) if f == ff => found = Some((cur, f)),
                (_, Some(_)) => break,
                (None, None) => {}
            }
            if ppid == cur {
                break;
            }
            cur = ppid;
        }
        let (pid, family) = found?;
        let mut info = self.process_info(pid)?;
        info.family = Some(family);
        if info.role == Role::Other {
            info.role = Role::Browser;
        }
        Some(info)
    }
}
