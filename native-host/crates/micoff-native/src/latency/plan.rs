//! What `latency set` / `reset` is asked ([`SetRequest`]) and the file operations that carry it
//! out ([`plan`]): decided before anything is written, so a dry run shows exactly what a real run
//! does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use micoff_exit::quote;
use micoff_files::{read_regular_text, shown, MAX_TEXT_BYTES};

use super::configured::our_files;
use super::content::{
    desktop_entry_content, exec_env_would_misread, rule_content, wrapper_content,
};
use super::marker::read_meta;
use super::paths::Paths;
use crate::protocol::{Browser, Mechanism};

/// What `latency set` / `latency reset` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRequest {
    /// None: reset (remove micoff's files).
    pub capture_ms: Option<u32>,
    /// Empty: every browser micoff knows.
    pub browsers: Vec<Browser>,
    /// None: the server's ([`crate::protocol::LatencyServer::mechanism`]).
    pub mechanism: Option<Mechanism>,
    pub dry_run: bool,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Write {
        path: PathBuf,
        content: String,
    },
    Remove {
        path: PathBuf,
    },
    /// Already as wanted.
    Unchanged {
        path: PathBuf,
    },
    /// A file micoff did not write is in the way: left alone.
    Skip {
        path: PathBuf,
        why: String,
    },
}

/// The file operations for `req` (pure but for reading the files involved).
pub fn plan(paths: &Paths, req: &SetRequest, mechanism: Mechanism) -> Vec<Action> {
    let browsers: Vec<Browser> = if req.browsers.is_empty() {
        Browser::ALL.to_vec()
    } else {
        let set: BTreeSet<Browser> = req.browsers.iter().copied().collect();
        set.into_iter().collect()
    };
    let mut wanted: Vec<(PathBuf, String)> = Vec::new();
    let mut actions = Vec::new();
    if let Some(ms) = req.capture_ms {
        match mechanism {
            Mechanism::PipewirePulseRule => {
                wanted.push((paths.rule_file(), rule_content(ms, &browsers)));
            }
            Mechanism::LaunchEnvironment => {
                for b in &browsers {
                    for id in b.desktop_ids() {
                        let Some(system) = paths.system_desktop_entry(id) else {
                            continue;
                        };
                        match read_regular_text(&system, MAX_TEXT_BYTES) {
                            Ok(Some(text)) => match exec_env_would_misread(&text) {
                                None => wanted.push((
                                    paths.user_applications().join(id),
                                    desktop_entry_content(&text, &system, ms, *b),
                                )),
                                Some(program) => actions.push(Action::Skip {
                                    path: system.clone(),
                                    why: format!(
                                        "{} runs {}, whose '=' `env` would take for a setting: \
                                         no menu entry copy for it (start the browser by name)",
                                        shown(&system),
                                        quote(&program)
                                    ),
                                }),
                            },
                            Ok(None) => {}
                            Err(e) => actions.push(Action::Skip {
                                path: system.clone(),
                                why: format!("cannot read {}: {e}", system.display()),
                            }),
                        }
                    }
                    for cmd in b.commands() {
                        if let (Some(wrapper), Some(target)) =
                            (paths.wrapper(cmd), paths.real_command(cmd))
                        {
                            wanted.push((wrapper, wrapper_content(ms, *b, cmd, &target)));
                        }
                    }
                }
            }
        }
    }
    for (path, content) in wanted.iter() {
        // Only a regular file is read there (a FIFO would hang the planner, a link to a device
        // grow it without bound).
        match read_regular_text(path, MAX_TEXT_BYTES) {
            Ok(Some(existing)) if read_meta(&existing).is_none() => actions.push(Action::Skip {
                path: path.clone(),
                why: format!(
                    "{} is not micoff's (your own): left alone; add it yourself or remove it",
                    path.display()
                ),
            }),
            Ok(Some(existing)) if existing == *content => {
                actions.push(Action::Unchanged { path: path.clone() })
            }
            Err(e) => actions.push(Action::Skip {
                path: path.clone(),
                why: format!("cannot read {}: {e}", path.display()),
            }),
            Ok(_) => actions.push(Action::Write {
                path: path.clone(),
                content: content.clone(),
            }),
        }
    }
    // Every other file of ours goes (a reset, another mechanism, a browser no longer chosen).
    for f in our_files(paths) {
        if !wanted.iter().any(|(p, _)| *p == f.path) {
            actions.push(Action::Remove { path: f.path });
        }
    }
    actions
}

/// The wrappers among `actions` that are written or already there.
pub(super) fn wrappers_in<'a>(
    paths: &'a Paths,
    actions: &'a [Action],
) -> impl Iterator<Item = &'a Path> {
    actions.iter().filter_map(move |a| match a {
        Action::Write { path, .. } | Action::Unchanged { path }
            if paths.bin_home.as_deref() == path.parent() =>
        {
            Some(path.as_path())
        }
        _ => None,
    })
}
