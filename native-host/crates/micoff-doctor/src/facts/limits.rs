//! Realtime priority and locked memory for the user: limits.conf and limits.d as pam_limits
//! ranks them, and this process's own limits ([`Limits`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::user::{user_groups, UserEnv};
use crate::parse;
use crate::root::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Limits {
    pub user: Option<String>,
    /// Effective soft value from limits.conf / limits.d and the file that set it.
    pub rtprio: Option<(String, String)>,
    pub memlock: Option<(String, String)>,
    /// (soft, hard) of this process, from /proc/self/limits.
    pub process_rtprio: Option<(String, String)>,
    pub process_memlock: Option<(String, String)>,
}

pub(crate) fn read_limits(root: &Root, env: &UserEnv) -> Limits {
    let user = env.user.clone();
    let groups = user
        .as_deref()
        .map(|u| user_groups(root, u))
        .unwrap_or_default();
    let mut files = vec!["/etc/security/limits.conf".to_owned()];
    files.extend(
        root.list("/etc/security/limits.d")
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
            .map(|n| format!("/etc/security/limits.d/{n}")),
    );
    // pam_limits: a user's own line beats a group line beats `*`; later lines of the same rank
    // replace earlier ones.
    let mut best: BTreeMap<String, (u8, String, String)> = BTreeMap::new();
    for file in &files {
        for l in parse::limits_conf(&root.read(file).unwrap_or_default()) {
            if l.kind == "hard" || !(l.item == "rtprio" || l.item == "memlock") {
                continue;
            }
            let rank = if Some(&l.domain) == user.as_ref() {
                3
            } else if let Some(g) = l.domain.strip_prefix('@') {
                if groups.iter().any(|x| x == g) {
                    2
                } else {
                    continue;
                }
            } else if l.domain == "*" && user.as_deref() != Some("root") {
                1
            } else {
                continue;
            };
            let keep = match best.get(&l.item) {
                Some((r, _, _)) => rank >= *r,
                None => true,
            };
            if keep {
                best.insert(l.item.clone(), (rank, l.value.clone(), file.clone()));
            }
        }
    }
    let proc = root.read("/proc/self/limits").unwrap_or_default();
    Limits {
        user,
        rtprio: best.get("rtprio").map(|(_, v, f)| (v.clone(), f.clone())),
        memlock: best.get("memlock").map(|(_, v, f)| (v.clone(), f.clone())),
        process_rtprio: parse::proc_limits(&proc, "Max realtime priority"),
        process_memlock: parse::proc_limits(&proc, "Max locked memory"),
    }
}
