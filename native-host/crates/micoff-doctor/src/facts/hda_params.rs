//! snd_hda_intel's parameters: the live ones under /sys/module ([`HdaParams`]), and the options
//! modprobe would pass on the next load ([`ModprobeOption`], [`NextPositionFix`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::facts::cards::Card;
use crate::hda;
use crate::parse;
use crate::root::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HdaParams {
    /// Live `position_fix` array (one value per possible card index).
    pub position_fix: Vec<i32>,
    pub power_save: Option<String>,
    pub power_save_controller: Option<String>,
}

/// An `options snd_hda_intel ...` line from /etc/modprobe.d and friends, or a
/// `snd_hda_intel.x=y` on the kernel command line, in the order modprobe applies them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModprobeOption {
    pub file: String,
    pub line: String,
    /// The `position_fix=` array it sets, if any (the last one on the line).
    pub position_fix: Option<Vec<i32>>,
}

/// What the next load of snd_hda_intel gets for some cards (see [`Facts::next_position_fix`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextPositionFix<'a> {
    /// The configured `position_fix` array.
    pub values: Vec<i32>,
    /// Where it comes from (a modprobe.d file, `/proc/cmdline`).
    pub file: String,
    /// The cards it leaves on the udelay path, in the order given.
    pub on_udelay: Vec<&'a Card>,
}

impl NextPositionFix<'_> {
    /// The value card `c` gets.
    pub fn value_for(&self, c: &Card) -> i32 {
        hda::position_fix_for(&self.values, c.position_fix_index())
    }
}

/// snd_hda_intel's live `position_fix` array.
pub const LIVE_POSITION_FIX: &str = "/sys/module/snd_hda_intel/parameters/position_fix";

/// The live parameters of snd_hda_intel (`None` when the module is not loaded).
pub(crate) fn read_hda_params(root: &Root) -> Option<HdaParams> {
    root.read(LIVE_POSITION_FIX).map(|pf| HdaParams {
        position_fix: hda::parse_int_array(&pf),
        power_save: root.read_trim("/sys/module/snd_hda_intel/parameters/power_save"),
        power_save_controller: root
            .read_trim("/sys/module/snd_hda_intel/parameters/power_save_controller"),
    })
}

/// The snd_hda_intel options modprobe would apply, in its order: kmod reads the `*.conf` files of
/// these directories sorted by file name (a name in an earlier directory hides the same name in
/// a later one), then the `module.param=` words of the kernel command line
/// (`kmod_config_parse_kcmdline()` runs after the files); for a parameter given twice the last
/// value wins.
pub(crate) fn read_modprobe_hda(root: &Root, cmdline: Option<&str>) -> Vec<ModprobeOption> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for dir in [
        "/etc/modprobe.d",
        "/run/modprobe.d",
        "/usr/local/lib/modprobe.d",
        "/usr/lib/modprobe.d",
        "/lib/modprobe.d",
    ] {
        for name in root.list(dir).into_iter().filter(|n| n.ends_with(".conf")) {
            files
                .entry(name.clone())
                .or_insert_with(|| format!("{dir}/{name}"));
        }
    }
    let mut out = Vec::new();
    for file in files.into_values() {
        for line in root.read(&file).unwrap_or_default().lines() {
            let t = line.trim();
            let w: Vec<&str> = t.split_whitespace().collect();
            if w.len() >= 3 && w[0] == "options" && is_hda_module(w[1]) {
                out.push(ModprobeOption {
                    file: file.clone(),
                    line: t.to_owned(),
                    position_fix: w[2..]
                        .iter()
                        .filter_map(|o| o.strip_prefix("position_fix="))
                        .next_back()
                        .map(hda::parse_int_array),
                });
            }
        }
    }
    for (k, v) in parse::cmdline(cmdline.unwrap_or_default()) {
        let Some((module, param)) = k.split_once('.') else {
            continue;
        };
        if is_hda_module(module) {
            let v = v.unwrap_or_default();
            out.push(ModprobeOption {
                file: "/proc/cmdline".into(),
                line: format!("{k}={v}"),
                position_fix: (param == "position_fix").then(|| hda::parse_int_array(&v)),
            });
        }
    }
    out
}

/// Whether a `position_fix` set in `file` (a modprobe.d path, or `/proc/cmdline`) is applied after
/// the one in micoff's own file, and so wins over it: the kernel command line always, a file
/// whose name sorts after micoff's (kmod reads them in name order). `fix hda` cannot help against
/// one of those.
pub fn applied_after_ours(file: &str) -> bool {
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    file == "/proc/cmdline" || name(file) > name(crate::ours::HDA_CONF_PATH)
}

fn is_hda_module(name: &str) -> bool {
    name == "snd_hda_intel" || name == "snd-hda-intel"
}
