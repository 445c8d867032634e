//! Reads everything the doctor looks at from a [`Root`] into plain data. Missing files are normal
//! (no sound card, a VM without cpufreq, a module not loaded) and become `None` / empty.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::PathBuf;

use serde::Serialize;

use crate::hda;
use crate::kernel::{self, KernelIdent};
use crate::parse::{self, CpuInfo, HwParams, IrqLine};
use crate::root::Root;

/// Who the doctor is looking at (limits.conf and client.conf depend on the user).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserEnv {
    pub user: Option<String>,
    /// Home directory as seen on the real machine (`/home/tommi`); read under the root.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` when set.
    pub xdg_config_home: Option<PathBuf>,
    /// `$PULSE_CLIENTCONFIG` when set.
    pub pulse_clientconfig: Option<PathBuf>,
}

impl UserEnv {
    /// From the process environment; under sudo, the invoking user (`$SUDO_USER`).
    pub fn from_process(root: &Root) -> Self {
        let sudo_user = std::env::var("SUDO_USER").ok().filter(|u| !u.is_empty());
        let user = sudo_user
            .clone()
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .or_else(|| passwd_name_for_uid(root, current_uid()));
        let home = match &sudo_user {
            Some(u) => passwd_home(root, u),
            None => std::env::var_os("HOME").map(PathBuf::from),
        };
        let xdg = if sudo_user.is_some() {
            None
        } else {
            std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from)
        };
        Self {
            user,
            home,
            xdg_config_home: xdg,
            pulse_clientconfig: std::env::var_os("PULSE_CLIENTCONFIG").map(PathBuf::from),
        }
    }

    /// `~/.config` (or `$XDG_CONFIG_HOME`).
    pub fn config_dir(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
    }

    /// `~/.config/pulse/client.conf`.
    pub fn user_client_conf(&self) -> Option<PathBuf> {
        self.config_dir().map(|c| c.join("pulse/client.conf"))
    }
}

pub fn current_uid() -> u32 {
    // SAFETY: getuid/geteuid cannot fail and touch no memory.
    unsafe { libc::getuid() }
}

pub fn current_euid() -> u32 {
    // SAFETY: as above.
    unsafe { libc::geteuid() }
}

fn passwd_entries(root: &Root) -> Vec<Vec<String>> {
    root.read("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(':').map(str::to_owned).collect::<Vec<_>>())
        .filter(|f| f.len() >= 7)
        .collect()
}

fn passwd_name_for_uid(root: &Root, uid: u32) -> Option<String> {
    passwd_entries(root)
        .into_iter()
        .find(|f| f[2] == uid.to_string())
        .map(|f| f[0].clone())
}

fn passwd_home(root: &Root, user: &str) -> Option<PathBuf> {
    passwd_entries(root)
        .into_iter()
        .find(|f| f[0] == user)
        .map(|f| PathBuf::from(&f[5]))
}

/// Groups of `user` from /etc/passwd (primary) and /etc/group.
pub fn user_groups(root: &Root, user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    let primary_gid = passwd_entries(root)
        .into_iter()
        .find(|f| f[0] == user)
        .map(|f| f[3].clone());
    for line in root.read("/etc/group").unwrap_or_default().lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 4 {
            continue;
        }
        let member = f[3].split(',').any(|m| m == user);
        if member || primary_gid.as_deref() == Some(f[2]) {
            groups.push(f[0].to_owned());
        }
    }
    groups
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PciId {
    pub slot: Option<String>,
    pub vendor: u16,
    pub device: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pcm {
    /// `pcm0c`, `pcm3p`.
    pub name: String,
    pub capture: bool,
    pub sub: String,
    /// `closed`, `RUNNING`, `PREPARED`, ...
    pub state: String,
    pub hw_params: Option<HwParams>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Card {
    pub index: u32,
    pub id: String,
    pub driver: String,
    pub name: String,
    pub long_name: String,
    /// Kernel module from /proc/asound/modules (`snd_hda_intel`, `snd_usb_audio`).
    pub module: Option<String>,
    pub pci: Option<PciId>,
    /// Set for Intel Skylake-or-later HD-audio controllers.
    pub skylake_plus: Option<String>,
    /// The card's own interrupt (PCI cards).
    pub irq: Option<u32>,
    /// For a card on snd_hda_intel: its index in snd_hda_intel's own probe order, which is what
    /// the `position_fix` array is indexed by (not the ALSA card number). Approximated as the
    /// rank of the card's number among the ALSA numbers of the snd_hda_intel cards: the driver
    /// probes its controllers in PCI order and, with the default `index=-1`, each takes the next
    /// free ALSA number, so the two orders agree unless `index=` options reorder the cards.
    pub hda_dev: Option<u32>,
    /// For a USB card: the PCI slot of the USB host controller it hangs off.
    pub usb_controller: Option<String>,
    /// For a USB card: that host controller's interrupts (empty when unknown).
    pub controller_irqs: Vec<u32>,
    pub pcms: Vec<Pcm>,
}

impl Card {
    /// An Intel Skylake+ controller driven by snd_hda_intel: the one `fix hda` is about.
    pub fn is_intel_skl_hda(&self) -> bool {
        self.module.as_deref() == Some("snd_hda_intel") && self.skylake_plus.is_some()
    }

    /// The entry of snd_hda_intel's `position_fix` array that applies to this card:
    /// [`Card::hda_dev`], or the ALSA card number when that is unknown.
    pub fn position_fix_index(&self) -> u32 {
        self.hda_dev.unwrap_or(self.index)
    }

    pub fn is_hda_intel(&self) -> bool {
        self.module.as_deref() == Some("snd_hda_intel")
            || (self.module.is_none() && self.driver == "HDA-Intel")
    }

    pub fn all_closed(&self) -> bool {
        self.pcms.iter().all(|p| p.state == "closed")
    }

    /// The interrupts that carry this card's audio: its own, or its USB host controller's.
    pub fn audio_irqs(&self) -> Vec<u32> {
        match self.irq {
            Some(i) => vec![i],
            None => self.controller_irqs.clone(),
        }
    }

    pub fn is_usb(&self) -> bool {
        self.usb_controller.is_some()
            || self.module.as_deref() == Some("snd_usb_audio")
            || self.driver == "USB-Audio"
    }
}

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqInfo {
    pub line: IrqLine,
    pub affinity_list: Option<String>,
}

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

/// A `key = value` line of a PulseAudio config file; shown as `file: key = value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfLine {
    pub file: String,
    pub key: String,
    pub value: String,
}

impl fmt::Display for ConfLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} = {}", self.file, self.key, self.value)
    }
}

/// `lines` as `file: key = value; file: key = value`.
fn join_lines(lines: &[ConfLine]) -> String {
    lines
        .iter()
        .map(ConfLine::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// enable-shm / enable-memfd as one client or daemon would see them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ShmConf {
    /// The config file that applies (PulseAudio reads only the first it finds, plus its `.d`).
    pub file: Option<String>,
    /// Whether `file` is the one `$PULSE_CLIENTCONFIG` names.
    pub from_env: bool,
    pub enable_shm: Option<bool>,
    pub enable_memfd: Option<bool>,
    /// `enable-shm = no` lines that turned shared memory off.
    pub disabled_by: Vec<ConfLine>,
    /// `enable-memfd = no` lines (memfd off only falls back to POSIX shared memory).
    pub memfd_disabled_by: Vec<ConfLine>,
}

impl ShmConf {
    /// Shared memory (and so srbchannel) is on. Only `enable-shm = no` turns it off: with
    /// `enable-memfd = no` PulseAudio uses POSIX shared memory instead (`pa_mempool_new` with
    /// `PA_MEM_TYPE_SHARED_POSIX`), and `setup_srbchannel()` still sets the channel up.
    pub fn shm_on(&self) -> bool {
        self.enable_shm != Some(false)
    }

    pub fn memfd_off(&self) -> bool {
        self.enable_memfd == Some(false)
    }

    /// The lines that turned shared memory off, for a message (`file: enable-shm = no; ...`).
    pub fn shm_off_lines(&self) -> String {
        join_lines(&self.disabled_by)
    }

    /// The lines that turned memfd off, for a message.
    pub fn memfd_off_lines(&self) -> String {
        join_lines(&self.memfd_disabled_by)
    }

    /// The files of the lines that turned shared memory off.
    pub fn disabled_in(&self) -> impl Iterator<Item = &str> {
        self.disabled_by.iter().map(|l| l.file.as_str())
    }

    /// Whether `fix client-shm` (which writes the user's `~/.config/pulse/client.conf`, starting
    /// from the system file and its `.d` when the user has none) can turn it back on: not when
    /// `$PULSE_CLIENTCONFIG` picks another file, nor when the line is in the `.d` directory of
    /// the user's own file (micoff does not edit those).
    pub fn fixable_by_user_conf(&self) -> bool {
        let file = self.file.as_deref().unwrap_or(SYSTEM_CLIENT_CONF);
        !self.from_env
            && self
                .disabled_in()
                .all(|p| p == file || p.starts_with(&format!("{SYSTEM_CLIENT_CONF}.d/")))
    }
}

pub const SYSTEM_CLIENT_CONF: &str = "/etc/pulse/client.conf";

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
    /// `/etc/modprobe.d/micoff-hda.conf` is there and was written by `fix hda` (its marker line),
    /// so `fix hda --revert` would remove it.
    pub micoff_hda_conf: bool,
    pub cpu: CpuInfo,
    pub governors: Vec<(String, String)>,
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

const CONFIG_KEYS: &[&str] = &[
    "CONFIG_HIGH_RES_TIMERS",
    "CONFIG_NO_HZ",
    "CONFIG_NO_HZ_IDLE",
    "CONFIG_NO_HZ_FULL",
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_HZ",
    "CONFIG_IRQ_FORCED_THREADING",
];

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
    let hda_params = root
        .read("/sys/module/snd_hda_intel/parameters/position_fix")
        .map(|pf| HdaParams {
            position_fix: hda::parse_int_array(&pf),
            power_save: root.read_trim("/sys/module/snd_hda_intel/parameters/power_save"),
            power_save_controller: root
                .read_trim("/sys/module/snd_hda_intel/parameters/power_save_controller"),
        });
    let governors = root
        .list("/sys/devices/system/cpu")
        .into_iter()
        .filter(|n| {
            n.strip_prefix("cpu")
                .is_some_and(|r| r.parse::<u32>().is_ok())
        })
        .filter_map(|n| {
            root.read_trim(format!(
                "/sys/devices/system/cpu/{n}/cpufreq/scaling_governor"
            ))
            .map(|g| (n, g))
        })
        .collect();
    let smt_active = root
        .read_trim("/sys/devices/system/cpu/smt/active")
        .map(|v| v == "1");
    Facts {
        proc_version,
        modprobe_hda: read_modprobe_hda(root, cmdline.as_deref()),
        micoff_hda_conf: root
            .read(crate::fix::hda::CONF_PATH)
            .is_some_and(|t| t.starts_with(crate::fix::MARKER)),
        cmdline,
        config,
        config_file,
        cpu: parse::cpuinfo(&root.read("/proc/cpuinfo").unwrap_or_default()),
        governors,
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

fn read_config(root: &Root, release: &str) -> (Option<BTreeMap<String, String>>, Option<String>) {
    let mut candidates = vec![format!("/boot/config-{release}")];
    candidates.push("/proc/config.gz".into());
    for path in candidates {
        let Ok(bytes) = root.read_bytes(&path) else {
            continue;
        };
        let text = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut s = String::new();
            if flate2::read::GzDecoder::new(&bytes[..])
                .read_to_string(&mut s)
                .is_err()
            {
                continue;
            }
            s
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let all = parse::kernel_config(&text);
        let picked = all
            .into_iter()
            .filter(|(k, _)| CONFIG_KEYS.contains(&k.as_str()))
            .collect();
        return (Some(picked), Some(path));
    }
    (None, None)
}

fn read_cards(root: &Root) -> Vec<Card> {
    let lines = parse::asound_cards(&root.read("/proc/asound/cards").unwrap_or_default());
    let modules = parse::asound_modules(&root.read("/proc/asound/modules").unwrap_or_default());
    let mut cards: Vec<Card> = lines
        .into_iter()
        .map(|l| {
            let dev = format!("/sys/class/sound/card{}/device", l.index);
            let pci = match (
                root.read(format!("{dev}/vendor"))
                    .and_then(|v| hda::parse_hex_id(&v)),
                root.read(format!("{dev}/device"))
                    .and_then(|v| hda::parse_hex_id(&v)),
            ) {
                (Some(vendor), Some(device)) => Some(PciId {
                    slot: root.link_name(&dev),
                    vendor,
                    device,
                }),
                _ => None,
            };
            let module = modules.get(&l.index).cloned();
            let skylake_plus = pci
                .as_ref()
                .and_then(|p| hda::skylake_plus_name(p.vendor, p.device))
                .map(str::to_owned);
            let irq = parse::irq_in_long_name(&l.long_name).or_else(|| {
                pci.as_ref()
                    .and_then(|_| root.read_trim(format!("{dev}/irq")))
                    .and_then(|v| v.parse().ok())
                    .filter(|v| *v != 0)
            });
            let (usb_controller, controller_irqs) = if pci.is_none() {
                usb_host(root, &dev, &l.long_name)
            } else {
                (None, Vec::new())
            };
            Card {
                usb_controller,
                controller_irqs,
                pcms: read_pcms(root, l.index),
                index: l.index,
                id: l.id,
                driver: l.driver,
                name: l.name,
                long_name: l.long_name,
                module,
                pci,
                skylake_plus,
                irq,
                hda_dev: None,
            }
        })
        .collect();
    // snd_hda_intel's probe order, approximated by the ALSA numbers of its cards (see
    // `Card::hda_dev`); /proc/asound/cards lists them by number already, sort to be sure.
    let mut hda: Vec<(u32, usize)> = cards
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_hda_intel())
        .map(|(i, c)| (c.index, i))
        .collect();
    hda.sort_unstable();
    for (dev, (_, i)) in (0u32..).zip(hda) {
        cards[i].hda_dev = Some(dev);
    }
    cards
}

/// The PCI slot and interrupts of the USB host controller a USB sound card hangs off: the nearest
/// PCI device above the first `usbN` bus in the card's resolved sysfs device path
/// (`/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0` -> `0000:00:14.0`), or failing that
/// the slot in the card's long name (`... at usb-0000:00:14.0-2, full speed`).
fn usb_host(root: &Root, device_link: &str, long_name: &str) -> (Option<String>, Vec<u32>) {
    let from_sysfs = root.canonical(device_link).and_then(|path| {
        let parts: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let bus = parts.iter().position(|p| parse::is_usb_bus(p))?;
        let host = parts[..bus].iter().rposition(|p| parse::is_pci_slot(p))?;
        let dir: PathBuf = parts[..=host].iter().collect();
        Some((parts[host].clone(), dir))
    });
    let (slot, dir) = match from_sysfs {
        Some((slot, dir)) => (slot, dir),
        None => match parse::usb_controller_in_long_name(long_name) {
            Some(slot) => {
                let dir = PathBuf::from(format!("/sys/bus/pci/devices/{slot}"));
                (slot, dir)
            }
            None => return (None, Vec::new()),
        },
    };
    (Some(slot), pci_irqs(root, &dir))
}

/// A PCI device's interrupts: its MSI/MSI-X vectors (`msi_irqs/`), else its legacy `irq`.
fn pci_irqs(root: &Root, dir: &std::path::Path) -> Vec<u32> {
    let mut msi: Vec<u32> = root
        .list(dir.join("msi_irqs"))
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    if !msi.is_empty() {
        msi.sort_unstable();
        return msi;
    }
    root.read_trim(dir.join("irq"))
        .and_then(|v| v.parse().ok())
        .filter(|v| *v != 0)
        .into_iter()
        .collect()
}

fn read_pcms(root: &Root, card: u32) -> Vec<Pcm> {
    let base = format!("/proc/asound/card{card}");
    let mut pcms = Vec::new();
    for name in root.list(&base) {
        let capture = name.starts_with("pcm") && name.ends_with('c');
        let playback = name.starts_with("pcm") && name.ends_with('p');
        if !capture && !playback {
            continue;
        }
        for sub in root
            .list(format!("{base}/{name}"))
            .into_iter()
            .filter(|s| s.starts_with("sub"))
        {
            let dir = format!("{base}/{name}/{sub}");
            let state = root
                .read(format!("{dir}/status"))
                .map(|s| parse::pcm_state(&s))
                .unwrap_or_else(|| "closed".into());
            let hw_params = root
                .read(format!("{dir}/hw_params"))
                .and_then(|s| parse::hw_params(&s));
            pcms.push(Pcm {
                name: name.clone(),
                capture,
                sub,
                state,
                hw_params,
            });
        }
    }
    pcms
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

fn is_hda_module(name: &str) -> bool {
    name == "snd_hda_intel" || name == "snd-hda-intel"
}

fn is_usb_hcd(action: &str) -> bool {
    ["xhci_hcd", "ehci_hcd", "ohci_hcd", "uhci_hcd"]
        .iter()
        .any(|h| action.starts_with(h))
}

/// IRQ lines that serve a sound card (its own, or its USB host controller's) or any USB host
/// controller.
fn read_irqs(root: &Root, cards: &[Card]) -> Vec<IrqInfo> {
    let lines = parse::interrupts(&root.read("/proc/interrupts").unwrap_or_default());
    let card_irqs: Vec<u32> = cards.iter().flat_map(Card::audio_irqs).collect();
    lines
        .into_iter()
        .filter(|l| {
            card_irqs.contains(&l.irq)
                || l.actions
                    .iter()
                    .any(|a| a.starts_with("snd_") || is_usb_hcd(a))
        })
        .map(|line| IrqInfo {
            affinity_list: root.read_trim(format!("/proc/irq/{}/smp_affinity_list", line.irq)),
            line,
        })
        .collect()
}

fn read_limits(root: &Root, env: &UserEnv) -> Limits {
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

/// What PulseAudio's pa_open_config_file + pa_config_parse would read: the first existing of
/// `candidates`, then `<that file>.d/*.conf`. `env_file`: the candidate `$PULSE_CLIENTCONFIG`
/// names, if any.
fn read_shm_conf(root: &Root, candidates: &[PathBuf], env_file: Option<&PathBuf>) -> ShmConf {
    let Some(file) = candidates.iter().find(|p| root.exists(p)) else {
        return ShmConf::default();
    };
    let mut conf = ShmConf {
        file: Some(file.display().to_string()),
        from_env: env_file == Some(file),
        ..ShmConf::default()
    };
    let dot_d = PathBuf::from(format!("{}.d", file.display()));
    let mut paths = vec![file.clone()];
    paths.extend(
        root.list(&dot_d)
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
            .map(|n| dot_d.join(n)),
    );
    for p in paths {
        for (k, v) in parse::pulse_conf(&root.read(&p).unwrap_or_default()) {
            let b = parse::pulse_bool(&v);
            let (slot, off_lines) = match k.as_str() {
                "enable-shm" => (&mut conf.enable_shm, &mut conf.disabled_by),
                "enable-memfd" => (&mut conf.enable_memfd, &mut conf.memfd_disabled_by),
                _ => continue,
            };
            *slot = b;
            // The last line wins: a later `yes` makes the earlier `no`s moot.
            if b == Some(true) {
                off_lines.clear();
            } else if b == Some(false) {
                off_lines.push(ConfLine {
                    file: p.display().to_string(),
                    key: k,
                    value: v,
                });
            }
        }
    }
    conf
}

/// The client.conf settings a client of `env` gets.
pub fn read_client_conf(root: &Root, env: &UserEnv) -> ShmConf {
    let mut candidates = Vec::new();
    candidates.extend(env.pulse_clientconfig.clone());
    candidates.extend(env.user_client_conf());
    candidates.push(PathBuf::from(SYSTEM_CLIENT_CONF));
    read_shm_conf(root, &candidates, env.pulse_clientconfig.as_ref())
}

fn read_daemon_conf(root: &Root, env: &UserEnv) -> ShmConf {
    let mut candidates = Vec::new();
    candidates.extend(env.config_dir().map(|c| c.join("pulse/daemon.conf")));
    candidates.push(PathBuf::from("/etc/pulse/daemon.conf"));
    read_shm_conf(root, &candidates, None)
}
