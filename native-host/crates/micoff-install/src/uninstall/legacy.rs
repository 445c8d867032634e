//! What an older micoff wrote before it kept a record: found the way each command's own undo finds
//! it (`install --uninstall`: a manifest that is still what micoff writes, the Chromium entry and
//! crx copy, each profile's block and the policy entries micoff's own record lists; `latency
//! reset`: files carrying micoff's mark; a fixer's `--revert`: its marked file, the governors it
//! noted), and undone by that rule. Said under its own heading, and only when it finds something.
//! What micoff's record holds (its files and folders, a profile's block, a fix) is not touched or
//! named here: the record's own steps did it (an edited file stays the user's), and in a dry run,
//! where they only said so, it would otherwise be named twice.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use micoff_doctor::fix::governor::STATE_PATH;
use micoff_doctor::fix::recorded::OWNER as FIX;
use micoff_doctor::fix::System;
use micoff_doctor::ours::HDA_CONF_PATH;
use micoff_files::record::{Entry, Journal};
use micoff_files::{read_regular_text, shown, MAX_TEXT_BYTES};

use crate::args::InstallArgs;
use crate::firefox::prefs::DEFAULT_DELAY_MS;
use crate::firefox::recorded::{OWNER_POLICIES, OWNER_PROFILE};
use crate::uninstall::parts::firefox_request;
use crate::uninstall::tally::Tally;
use crate::uninstall::UninstallArgs;
use crate::{chromium, firefox, manifest, InstallEnv};
use micoff_native::latency::{self, Action, Paths, SetRequest};
use micoff_native::protocol::Mechanism;

/// The heading of what this finds.
const HEADING: &str = "not in micoff's record (written by an older micoff): found and undone \
                       the way each command's own --uninstall / --revert / latency reset does:";

/// What micoff's record holds, which the sweep leaves to the record's own steps: a real run has
/// removed it by then (or left it and named it), a dry run has only said it would, and either way
/// it is not an older micoff's to name a second time.
struct Recorded {
    /// Files and folders.
    paths: BTreeSet<PathBuf>,
    /// Parts, as (owner, key).
    parts: BTreeSet<(String, String)>,
}

impl Recorded {
    fn of(entries: &[Entry]) -> Self {
        Self {
            paths: entries
                .iter()
                .filter_map(Entry::path)
                .map(PathBuf::from)
                .collect(),
            parts: entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Part { owner, key, .. } => Some((owner.clone(), key.clone())),
                    _ => None,
                })
                .collect(),
        }
    }

    fn has_part(&self, owner: &str, key: &str) -> bool {
        self.parts.contains(&(owner.to_owned(), key.to_owned()))
    }

    fn has_owner(&self, owner: &str) -> bool {
        self.parts.iter().any(|(o, _)| o == owner)
    }
}

/// Runs each command's own undo, quietly, over what micoff's record (`entries`) does not hold:
/// its lines are shown (under [`HEADING`]) only when it found something.
pub fn sweep(
    entries: &[Entry],
    args: &UninstallArgs,
    env: &InstallEnv,
    sys: &mut dyn System,
    journal: &mut Journal,
    tally: &mut Tally<'_>,
) {
    let recorded = Recorded::of(entries);
    let mut found = Found::default();
    let install = InstallArgs {
        uninstall: true,
        system: args.system,
        dry_run: args.dry_run,
        ..InstallArgs::for_uninstall()
    };
    // What each part says, its error lines after its report (as they were one stream before).
    let (mut buf, mut errs) = (Vec::new(), Vec::new());
    let local_ids = crate::chromium::external::local_ids(&env.data_home(), &env.root);
    let names = manifest::Names {
        host: None,
        local_ids: &local_ids,
    };
    let code = manifest::run(
        &install,
        env,
        &names,
        &recorded.paths,
        journal,
        &mut buf,
        &mut errs,
    );
    buf.append(&mut errs);
    found.take(buf, code);
    let mut buf = Vec::new();
    let req = chromium::Request {
        crx: None,
        system: args.system,
        uninstall: true,
        dry_run: args.dry_run,
        recorded: &recorded.paths,
    };
    let code = chromium::run(&req, env, journal, &mut buf, &mut errs);
    buf.append(&mut errs);
    found.take(buf, code);
    // The policy entries micoff's record named were done by their part: the installer's
    // `--system` uninstall is not run twice (its first run blocks micoff, the next takes the entry
    // out; once every Firefox has started in between).
    let policies_recorded = args.system && recorded.has_owner(OWNER_POLICIES);
    let profiles = if args.system {
        Vec::new()
    } else {
        firefox::profiles::profiles(env)
            .0
            .into_iter()
            .filter(|p| !recorded.has_part(OWNER_PROFILE, &p.to_string_lossy()))
            .collect()
    };
    let req = firefox_request(
        profiles,
        args.system.then_some(env.root.as_path()),
        args.dry_run,
    );
    if !policies_recorded {
        let mut buf = Vec::new();
        let code = firefox::run(&req, journal, &mut buf);
        found.take(buf, code);
    }
    if !args.system {
        found.take_lines(latency_reset(env, &recorded.paths, args.dry_run));
    }
    fixers(args, env, &recorded, sys, &mut found);
    if found.lines.is_empty() {
        return;
    }
    tally.say(HEADING);
    for l in &found.lines {
        tally.say(&format!("  {l}"));
    }
    tally.part_code(found.code);
    tally.part_removed();
}

/// What the sweeps found: their lines worth showing and the worst exit code.
#[derive(Default)]
struct Found {
    lines: Vec<String>,
    code: i32,
}

impl Found {
    /// A sweep's output: the lines that say it found something (not "nothing to remove").
    fn take(&mut self, out: Vec<u8>, code: i32) {
        let text = String::from_utf8_lossy(&out).into_owned();
        let lines: Vec<String> = text
            .lines()
            .filter(|l| {
                !l.contains("nothing to remove") && !l.contains("nothing of micoff's found")
            })
            .map(str::to_owned)
            .collect();
        if !lines.is_empty() {
            self.code = crate::worst(self.code, code);
        }
        self.lines.extend(lines);
    }

    fn take_lines(&mut self, lines: Vec<String>) {
        self.lines.extend(lines);
    }
}

/// `latency reset`'s rule (files carrying micoff's mark), except for files micoff's record names.
fn latency_reset(env: &InstallEnv, recorded: &BTreeSet<PathBuf>, dry_run: bool) -> Vec<String> {
    let mut vars: HashMap<String, String> = HashMap::new();
    vars.insert("HOME".into(), env.home.to_string_lossy().into_owned());
    vars.insert(
        "XDG_CONFIG_HOME".into(),
        env.config_home().to_string_lossy().into_owned(),
    );
    vars.insert(
        "XDG_DATA_HOME".into(),
        env.data_home().to_string_lossy().into_owned(),
    );
    let Ok(paths) = Paths::from_env(&vars) else {
        return Vec::new();
    };
    let reset = SetRequest {
        capture_ms: None,
        browsers: Vec::new(),
        mechanism: Some(Mechanism::PipewirePulseRule),
        dry_run,
    };
    let actions: Vec<Action> = latency::plan(&paths, &reset, Mechanism::PipewirePulseRule)
        .into_iter()
        .filter(|a| matches!(a, Action::Remove { path } if !recorded.contains(path)))
        .collect();
    if actions.is_empty() {
        return Vec::new();
    }
    let would = if dry_run { "would remove" } else { "removed" };
    if !dry_run {
        if let Err(e) = latency::apply(&actions) {
            return vec![format!("latency reset: FAILED: {e}")];
        }
    }
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Remove { path } => Some(format!("{would} {} (capture latency)", shown(path))),
            _ => None,
        })
        .collect()
}

/// Each fixer's `--revert`, where its file is micoff's (or its governors noted) and neither the
/// file nor the fix is recorded.
fn fixers(
    args: &UninstallArgs,
    env: &InstallEnv,
    recorded: &Recorded,
    sys: &mut dyn System,
    found: &mut Found,
) {
    let is_ours = |path: PathBuf| {
        !recorded.paths.contains(&path)
            && read_regular_text(&path, MAX_TEXT_BYTES)
                .ok()
                .flatten()
                .is_some_and(|t| micoff_files::ours::ownership_of(&t).is_ours())
    };
    let mut todo: Vec<&str> = Vec::new();
    if args.system {
        if is_ours(env.root.join(HDA_CONF_PATH.trim_start_matches('/'))) {
            todo.push("hda");
        }
        if env.root.join(STATE_PATH.trim_start_matches('/')).exists() {
            todo.push("governor");
        }
    } else if is_ours(env.config_home().join("pulse/client.conf")) {
        todo.push("client-shm");
    }
    todo.retain(|name| !recorded.has_part(FIX, name));
    for name in todo {
        if args.dry_run {
            found
                .lines
                .push(format!("would run: micoff-host fix {name} --revert"));
            continue;
        }
        let mut out = Vec::new();
        let code = super::parts::revert_fix(name, env, sys, &mut out).unwrap_or(0);
        found.take(out, code);
    }
}

impl InstallArgs {
    /// `install` with nothing asked for (the legacy sweep sets what it needs).
    fn for_uninstall() -> Self {
        Self {
            browsers: Vec::new(),
            all_detected: false,
            system: false,
            target_dir: None,
            uninstall: true,
            dry_run: false,
            host_path: None,
            packaged_host_path: None,
            firefox_release: false,
            release_delay_ms: DEFAULT_DELAY_MS,
            firefox_profiles: Vec::new(),
            firefox_xpi: None,
            chromium_crx: None,
        }
    }
}
