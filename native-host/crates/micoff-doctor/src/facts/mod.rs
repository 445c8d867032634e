//! Reads everything the doctor looks at from a [`Root`] into plain data ([`Facts`], [`gather`]).
//! Missing files are normal (no sound card, a VM without cpufreq) and become `None` / empty.
//! Facts know nothing of the fixers: what they share lives below both, in [`crate::ours`].
//!
//! Module map: `user` (who, groups); `cards` (sound cards, devices, PCMs); `hda_params`
//! (snd_hda_intel's parameters); `irqs`; `limits` (rtprio, memlock); `pulse_conf` (shared memory);
//! `kernel_config`; [`cpufreq`] (the governors a core's driver offers).

use std::collections::BTreeMap;

use serde::Serialize;

mod cards;
pub mod cpufreq;
mod hda_params;
mod irqs;
mod kernel_config;
mod limits;
mod pulse_conf;
mod user;

pub use cards::{Card, PciId, Pcm};
pub use hda_params::{
    applied_after_ours, HdaParams, ModprobeOption, NextPositionFix, LIVE_POSITION_FIX,
};
pub use irqs::IrqInfo;
pub use limits::Limits;
pub use pulse_conf::{read_client_conf, ConfLine, ShmConf, SYSTEM_CLIENT_CONF};
pub use user::{user_groups, UserEnv};

pub(crate) use hda_params::read_modprobe_hda;

use cards::read_cards;
use hda_params::read_hda_params;
use irqs::read_irqs;
use kernel_config::read_config;
use limits::read_limits;
use pulse_conf::read_daemon_conf;

use crate::hda;
use crate::kernel::{self, KernelIdent};
use crate::ours::{ownership_of, Ownership, HDA_CONF_PATH};
use crate::parse::{self, CpuInfo};
use crate::root::Root;

/// micoff's own `/etc/modprobe.d/micoff-hda.conf`, as `fix hda --revert` would find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OurHdaConf {
    /// No file there, or one micoff did not write.
    Absent,
    /// As `fix hda` wrote it: `--revert` removes it.
    AsWritten,
    /// micoff's, changed since: `--revert` leaves it alone (the change was someone's decision).
    Edited,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub kernel: KernelIdent,
    pub proc_version: Option<String>,
    pub cmdline: Option<String>,
    /// Selected CONFIG_ values, `None` when no config is readable.
    pub config: Option<BTreeMap<String, String>>,
    pub config_file: Option<String>,
    pub cards: Vec<Card>,
    pub asound_present: bool,
    pub hda_params: Option<HdaParams>,
    pub modprobe_hda: Vec<ModprobeOption>,
    /// `/etc/modprobe.d/micoff-hda.conf` as `fix hda --revert` would find it.
    pub micoff_hda_conf: OurHdaConf,
    pub cpu: CpuInfo,
    pub governors: Vec<(String, String)>,
    /// The cores (of `governors`) whose cpufreq driver does not offer `performance`.
    pub no_performance: Vec<String>,
    pub smt_active: Option<bool>,
    pub irqs: Vec<IrqInfo>,
    pub limits: Limits,
    pub cpu_dma_latency: bool,
    pub client_conf: ShmConf,
    pub daemon_conf: ShmConf,
}

impl Facts {
    /// The `position_fix` array the next load of snd_hda_intel gets (the last `position_fix=`
    /// modprobe passes wins) and where it comes from; `exclude` leaves one file out (ours, to
    /// see what the machine would do without it).
    pub fn configured_position_fix(&self, exclude: Option<&str>) -> Option<(Vec<i32>, String)> {
        self.modprobe_hda
            .iter()
            .filter(|o| Some(o.file.as_str()) != exclude)
            .filter_map(|o| o.position_fix.clone().map(|v| (v, o.file.clone())))
            .next_back()
    }

    /// [`Facts::configured_position_fix`] as it applies to `cards`: with the cards whose entry
    /// in it leaves them on the Skylake+ udelay path on the next load (none: it keeps every one
    /// of them off). `None` when no `position_fix` is configured.
    pub fn next_position_fix<'a>(
        &self,
        cards: &[&'a Card],
        exclude: Option<&str>,
    ) -> Option<NextPositionFix<'a>> {
        let (values, file) = self.configured_position_fix(exclude)?;
        let on_udelay = cards
            .iter()
            .copied()
            .filter(|c| {
                !hda::bypasses_skl_udelay(hda::position_fix_for(&values, c.position_fix_index()))
            })
            .collect();
        Some(NextPositionFix {
            values,
            file,
            on_udelay,
        })
    }

    /// The live `position_fix` value of snd_hda_intel controller `dev` (-1 when the module's
    /// parameters are unreadable).
    pub fn live_position_fix(&self, dev: u32) -> i32 {
        self.hda_params
            .as_ref()
            .map(|p| hda::position_fix_for(&p.position_fix, dev))
            .unwrap_or(-1)
    }
}

/// Everything the doctor looks at, read from `root` for the user `env`.
pub fn gather(root: &Root, env: &UserEnv) -> Facts {
    let proc_version = root.read("/proc/version");
    let osrelease = root.read_trim("/proc/sys/kernel/osrelease");
    let kernel = kernel::identify(
        osrelease.as_deref(),
        proc_version.as_deref(),
        root.read("/proc/version_signature").as_deref(),
    );
    let (config, config_file) = read_config(root, &kernel.release);
    let asound_present = root.exists("/proc/asound");
    let cards = read_cards(root);
    let cmdline = root.read_trim("/proc/cmdline");
    let hda_params = read_hda_params(root);
    let governors = cpufreq::read_governors(root);
    let no_performance = governors
        .iter()
        .filter(|(cpu, _)| !cpufreq::offers(root, cpu, cpufreq::PERFORMANCE))
        .map(|(cpu, _)| cpu.clone())
        .collect();
    let smt_active = root
        .read_trim("/sys/devices/system/cpu/smt/active")
        .map(|v| v == "1");
    Facts {
        proc_version,
        modprobe_hda: read_modprobe_hda(root, cmdline.as_deref()),
        micoff_hda_conf: match root.read(HDA_CONF_PATH).map(|t| ownership_of(&t)) {
            Some(Ownership::AsWritten) => OurHdaConf::AsWritten,
            Some(Ownership::Edited(_)) => OurHdaConf::Edited,
            Some(Ownership::NotOurs(_)) | None => OurHdaConf::Absent,
        },
        cmdline,
        config,
        config_file,
        cpu: parse::cpuinfo(&root.read("/proc/cpuinfo").unwrap_or_default()),
        governors,
        no_performance,
        smt_active,
        irqs: read_irqs(root, &cards),
        limits: read_limits(root, env),
        cpu_dma_latency: root.exists("/dev/cpu_dma_latency"),
        client_conf: read_client_conf(root, env),
        daemon_conf: read_daemon_conf(root, env),
        kernel,
        cards,
        asound_present,
        hda_params,
    }
}
