//! What the machine says it draws, for the popup's energy estimate (docs/design/popup-savings.md):
//! RAPL package energy counters read a window apart or, failing that, a discharging battery's rate,
//! with how many cores were busy over the window (`/proc/stat`). Either may be missing (RAPL is
//! root-only since Linux 5.10; a battery on AC reports the charger): the reading then says why,
//! source by source. Everything reads below two [`Roots`] so tests use fixture trees; the reading
//! is the protocol's `power` result ([`PowerReading`]).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::protocol::{PowerReading, PowerSource};

/// How long a `power` request measures (two counter reads this far apart).
pub const POWER_WINDOW: Duration = Duration::from_millis(1000);
/// Below this many busy cores the per-core figure is not given (a division by almost nothing).
const MIN_BUSY_CORES: f64 = 0.05;

/// Where `sys` and `proc` are mounted (`/sys`, `/proc`; a fixture tree in tests).
#[derive(Debug, Clone)]
pub struct Roots {
    pub sys: PathBuf,
    pub proc: PathBuf,
}

impl Roots {
    pub fn system() -> Self {
        Self {
            sys: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
        }
    }
}

/// One read of every counter.
#[derive(Debug, Clone)]
pub struct Snapshot {
    rapl: Result<Vec<RaplCounter>, String>,
    battery: Result<f64, String>,
    cpu: Option<CpuTicks>,
}

#[derive(Debug, Clone, PartialEq)]
struct RaplCounter {
    domain: String,
    energy_uj: u64,
    max_energy_range_uj: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuTicks {
    busy: u64,
    total: u64,
    cpus: usize,
}

/// A file's failure as one line for the user: the path and why.
pub fn describe_io_error(path: &Path, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "{} is readable by root only (RAPL counters are since Linux 5.10)",
            path.display()
        ),
        io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
        _ => format!("{}: {e}", path.display()),
    }
}

fn read_trimmed(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| describe_io_error(path, &e))
}

fn read_u64(path: &Path) -> Result<u64, String> {
    let text = read_trimmed(path)?;
    text.parse::<u64>()
        .map_err(|_| format!("{} holds {text:?}, not a number", path.display()))
}

/// Sorted directory entries whose names pass `keep`; `Err` when the directory cannot be listed.
fn entries(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<(String, PathBuf)>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| describe_io_error(dir, &e))?;
    let mut out: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            keep(&name).then(|| (name, e.path()))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Top-level RAPL zones (`intel-rapl:0`, not the sub-zones `intel-rapl:0:0`): the package
/// domains when any is named `package-*`, else every top-level zone (never `psys` with packages:
/// it contains them).
fn read_rapl(sys: &Path) -> Result<Vec<RaplCounter>, String> {
    let dir = sys.join("class/powercap");
    let zones = entries(&dir, |n| {
        n.strip_prefix("intel-rapl:")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    })
    .map_err(|_| format!("no RAPL: {} has no intel-rapl zones", dir.display()))?;
    if zones.is_empty() {
        return Err(format!(
            "no RAPL: {} has no intel-rapl zones",
            dir.display()
        ));
    }
    let named: Vec<(String, PathBuf)> = zones
        .into_iter()
        .map(|(zone, path)| {
            let name = read_trimmed(&path.join("name")).unwrap_or(zone);
            (name, path)
        })
        .collect();
    let packages = named.iter().any(|(n, _)| n.starts_with("package"));
    let mut counters = Vec::new();
    for (name, path) in named {
        if packages && !name.starts_with("package") {
            continue;
        }
        counters.push(RaplCounter {
            energy_uj: read_u64(&path.join("energy_uj"))?,
            max_energy_range_uj: read_u64(&path.join("max_energy_range_uj")).ok(),
            domain: name,
        });
    }
    Ok(counters)
}

/// A discharging battery's rate, W (the sum over batteries).
fn read_battery(sys: &Path) -> Result<f64, String> {
    let dir = sys.join("class/power_supply");
    let supplies = entries(&dir, |_| true).unwrap_or_default();
    let mut watts = 0.0;
    let mut found = 0;
    let mut why = Vec::new();
    for (name, path) in supplies {
        let kind = read_trimmed(&path.join("type")).unwrap_or_default();
        if kind != "Battery" && !name.starts_with("BAT") {
            continue;
        }
        found += 1;
        match battery_watts(&name, &path) {
            Ok(w) => watts += w,
            Err(e) => why.push(e),
        }
    }
    if found == 0 {
        return Err(format!("no battery in {}", dir.display()));
    }
    if why.is_empty() {
        Ok(watts)
    } else {
        Err(why.join("; "))
    }
}

fn battery_watts(name: &str, path: &Path) -> Result<f64, String> {
    let status = read_trimmed(&path.join("status"))?;
    if status != "Discharging" {
        return Err(format!(
            "battery {name} is {status} (only a discharging battery's rate is the machine's draw)"
        ));
    }
    let uw = match read_u64(&path.join("power_now")) {
        Ok(uw) => uw as f64,
        Err(power_err) => {
            let ua =
                read_u64(&path.join("current_now")).map_err(|e| format!("{power_err}; {e}"))?;
            let uv =
                read_u64(&path.join("voltage_now")).map_err(|e| format!("{power_err}; {e}"))?;
            ua as f64 * uv as f64 / 1e6
        }
    };
    if uw <= 0.0 {
        return Err(format!("battery {name} reports 0 W"));
    }
    Ok(uw / 1e6)
}

/// `/proc/stat`'s aggregate `cpu` line: busy = all but idle and iowait; and the number of CPUs.
fn read_cpu(proc: &Path) -> Option<CpuTicks> {
    let text = std::fs::read_to_string(proc.join("stat")).ok()?;
    let mut lines = text.lines();
    let first = lines.next()?;
    let fields: Vec<u64> = first
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    // user nice system idle iowait irq softirq steal (guest counts are inside user/nice)
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    let cpus = lines
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some(CpuTicks {
        busy: total.saturating_sub(idle),
        total,
        cpus,
    })
}

pub fn snapshot(roots: &Roots) -> Snapshot {
    Snapshot {
        rapl: read_rapl(&roots.sys),
        battery: read_battery(&roots.sys),
        cpu: read_cpu(&roots.proc),
    }
}

/// The joules a counter advanced, across one wrap when its range is known.
fn energy_delta(before: &RaplCounter, after: &RaplCounter) -> Option<u64> {
    if after.energy_uj >= before.energy_uj {
        return Some(after.energy_uj - before.energy_uj);
    }
    let range = after.max_energy_range_uj?;
    Some(range - before.energy_uj + after.energy_uj)
}

/// The reading from two snapshots `elapsed` apart: RAPL when both reads worked, else the battery
/// (its rate at the second read), else nothing, with the reasons.
pub fn reading(before: &Snapshot, after: &Snapshot, elapsed: Duration) -> PowerReading {
    let secs = elapsed.as_secs_f64();
    let mut unavailable = Vec::new();
    let mut found: Option<(PowerSource, f64)> = None;
    match (&before.rapl, &after.rapl) {
        (Ok(a), Ok(b)) if !a.is_empty() && secs > 0.0 => {
            let mut uj = 0u64;
            let mut ok = true;
            for ca in a {
                match b
                    .iter()
                    .find(|cb| cb.domain == ca.domain)
                    .and_then(|cb| energy_delta(ca, cb))
                {
                    Some(d) => uj += d,
                    None => ok = false,
                }
            }
            if ok {
                found = Some((PowerSource::Rapl, uj as f64 / 1e6 / secs));
            } else {
                unavailable.push("RAPL counters changed between reads".to_owned());
            }
        }
        (Err(e), _) | (_, Err(e)) => unavailable.push(e.clone()),
        _ => unavailable.push("no RAPL package zone".to_owned()),
    }
    if found.is_none() {
        match &after.battery {
            Ok(w) => found = Some((PowerSource::Battery, *w)),
            Err(e) => unavailable.push(e.clone()),
        }
    }
    let busy_cores = match (before.cpu, after.cpu) {
        (Some(a), Some(b)) if b.total > a.total && b.cpus > 0 => Some(
            (b.busy.saturating_sub(a.busy)) as f64 / (b.total - a.total) as f64 * b.cpus as f64,
        ),
        _ => None,
    };
    let watts = found.map(|(_, w)| w);
    PowerReading {
        source: found.map(|(s, _)| s),
        watts,
        busy_cores,
        watts_per_busy_core: match (watts, busy_cores) {
            (Some(w), Some(c)) if c >= MIN_BUSY_CORES => Some(w / c),
            _ => None,
        },
        window_ms: secs * 1000.0,
        unavailable,
    }
}

/// Two snapshots `window` apart (the reads on the blocking pool).
pub async fn measure(roots: Roots, window: Duration) -> PowerReading {
    let take = |roots: Roots| async move {
        tokio::task::spawn_blocking(move || (snapshot(&roots), Instant::now(), roots)).await
    };
    let Ok((before, t0, roots)) = take(roots).await else {
        return failed("the first read failed");
    };
    tokio::time::sleep(window).await;
    let Ok((after, t1, _)) = take(roots).await else {
        return failed("the second read failed");
    };
    reading(&before, &after, t1.duration_since(t0))
}

fn failed(why: &str) -> PowerReading {
    PowerReading {
        source: None,
        watts: None,
        busy_cores: None,
        watts_per_busy_core: None,
        window_ms: 0.0,
        unavailable: vec![why.to_owned()],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn roots(dir: &Path) -> Roots {
        Roots {
            sys: dir.join("sys"),
            proc: dir.join("proc"),
        }
    }

    /// 2 CPUs; `busy` of `total` ticks busy so far.
    fn stat(dir: &Path, busy: u64, total: u64) {
        let idle = total - busy;
        write(
            dir,
            "proc/stat",
            &format!("cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\nintr 1\n"),
        );
    }

    fn rapl(dir: &Path, zone: &str, name: &str, uj: u64) {
        write(dir, &format!("sys/class/powercap/{zone}/name"), name);
        write(
            dir,
            &format!("sys/class/powercap/{zone}/energy_uj"),
            &format!("{uj}\n"),
        );
        write(
            dir,
            &format!("sys/class/powercap/{zone}/max_energy_range_uj"),
            "262143328850\n",
        );
    }

    #[test]
    fn rapl_packages_over_the_window_with_busy_cores() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        rapl(d, "intel-rapl:0", "package-0", 1_000_000);
        rapl(d, "intel-rapl:0:0", "core", 500_000); // a sub-zone: inside the package
        rapl(d, "intel-rapl:1", "psys", 9_000_000); // the platform: contains the package
        stat(d, 100, 1000);
        let a = snapshot(&roots(d));
        rapl(d, "intel-rapl:0", "package-0", 6_000_000); // +5 J
        rapl(d, "intel-rapl:1", "psys", 99_000_000);
        stat(d, 150, 1100); // 50 of 100 ticks busy on 2 CPUs: 1 core
        let b = snapshot(&roots(d));
        let r = reading(&a, &b, Duration::from_millis(500));
        assert_eq!(r.source, Some(PowerSource::Rapl));
        assert!((r.watts.unwrap() - 10.0).abs() < 1e-9);
        assert!((r.busy_cores.unwrap() - 1.0).abs() < 1e-9);
        assert!((r.watts_per_busy_core.unwrap() - 10.0).abs() < 1e-9);
        assert!((r.window_ms - 500.0).abs() < 1e-9);
        assert!(r.unavailable.is_empty());
    }

    #[test]
    fn a_wrapped_rapl_counter_counts_across_the_wrap() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        rapl(d, "intel-rapl:0", "package-0", 262_143_328_850 - 1_000_000);
        let a = snapshot(&roots(d));
        rapl(d, "intel-rapl:0", "package-0", 1_000_000);
        let b = snapshot(&roots(d));
        let r = reading(&a, &b, Duration::from_secs(1));
        assert!((r.watts.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(r.busy_cores, None); // no /proc/stat in this tree
        assert_eq!(r.watts_per_busy_core, None);
    }

    #[test]
    fn unreadable_rapl_falls_back_to_a_discharging_battery_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "sys/class/powercap/intel-rapl:0/name", "package-0");
        // A counter that cannot be read (a directory in its place: unreadable even for root).
        fs::create_dir_all(d.join("sys/class/powercap/intel-rapl:0/energy_uj")).unwrap();
        write(d, "sys/class/power_supply/AC/type", "Mains");
        write(d, "sys/class/power_supply/BAT0/type", "Battery");
        write(d, "sys/class/power_supply/BAT0/status", "Discharging");
        write(d, "sys/class/power_supply/BAT0/current_now", "1500000"); // 1.5 A
        write(d, "sys/class/power_supply/BAT0/voltage_now", "12000000"); // 12 V
        stat(d, 0, 1000);
        let a = snapshot(&roots(d));
        stat(d, 10, 1100);
        let b = snapshot(&roots(d));
        let r = reading(&a, &b, Duration::from_secs(1));
        assert_eq!(r.source, Some(PowerSource::Battery));
        assert!((r.watts.unwrap() - 18.0).abs() < 1e-9);
        assert!((r.busy_cores.unwrap() - 0.2).abs() < 1e-9);
        assert!((r.watts_per_busy_core.unwrap() - 90.0).abs() < 1e-9);
        assert_eq!(r.unavailable.len(), 1);
        assert!(
            r.unavailable[0].contains("intel-rapl:0/energy_uj"),
            "{:?}",
            r.unavailable
        );
    }

    #[test]
    fn nothing_to_read_says_so_per_source() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let empty = snapshot(&roots(d));
        let r = reading(&empty, &empty, Duration::from_secs(1));
        assert_eq!(r.source, None);
        assert_eq!(r.watts, None);
        assert_eq!(r.unavailable.len(), 2);
        assert!(
            r.unavailable[0].starts_with("no RAPL"),
            "{:?}",
            r.unavailable
        );
        assert!(
            r.unavailable[1].starts_with("no battery"),
            "{:?}",
            r.unavailable
        );

        // A battery on AC, and one whose rate cannot be read.
        write(d, "sys/class/power_supply/BAT0/type", "Battery");
        write(d, "sys/class/power_supply/BAT0/status", "Charging");
        write(d, "sys/class/power_supply/BAT1/type", "Battery");
        write(d, "sys/class/power_supply/BAT1/status", "Discharging");
        fs::create_dir_all(d.join("sys/class/power_supply/BAT1/power_now")).unwrap();
        let s = snapshot(&roots(d));
        let r = reading(&s, &s, Duration::from_secs(1));
        assert_eq!(r.source, None);
        let why = &r.unavailable[1];
        assert!(why.contains("BAT0 is Charging"), "{why}");
        assert!(why.contains("BAT1/power_now"), "{why}");
        assert!(why.contains("BAT1/current_now does not exist"), "{why}");
    }

    #[test]
    fn permission_denied_names_root_only() {
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        let m = describe_io_error(Path::new("/sys/class/powercap/intel-rapl:0/energy_uj"), &e);
        assert!(m.contains("readable by root only"), "{m}");
    }

    #[tokio::test]
    async fn measure_reads_twice_a_window_apart() {
        let dir = tempfile::tempdir().unwrap();
        let r = measure(roots(dir.path()), Duration::from_millis(20)).await;
        assert!(r.window_ms >= 20.0, "{r:?}");
        assert_eq!(r.source, None);
    }
}
