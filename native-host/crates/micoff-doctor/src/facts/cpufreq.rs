//! The CPU frequency governors (cpufreq): each core's current one, and whether its driver offers
//! the one `fix governor` sets. Read by the `cpu_governor` finding and by `fix governor` alike, so
//! the doctor never offers the fix where the fixer would have nothing it can do.

use crate::root::Root;

/// The governor `fix governor --apply` sets.
pub const PERFORMANCE: &str = "performance";

fn path(cpu: &str, file: &str) -> String {
    format!("/sys/devices/system/cpu/{cpu}/cpufreq/{file}")
}

/// `/sys/devices/system/cpu/<cpu>/cpufreq/scaling_governor` (`cpu`: `cpu0`).
pub fn governor_path(cpu: &str) -> String {
    path(cpu, "scaling_governor")
}

/// (core, current governor) for every core with cpufreq, in the order /sys lists them.
pub fn read_governors(root: &Root) -> Vec<(String, String)> {
    root.list("/sys/devices/system/cpu")
        .into_iter()
        .filter(|n| {
            n.strip_prefix("cpu")
                .is_some_and(|r| r.parse::<u32>().is_ok())
        })
        .filter_map(|n| root.read_trim(governor_path(&n)).map(|g| (n, g)))
        .collect()
}

/// Whether `cpu`'s cpufreq driver takes `governor`: listed in `scaling_available_governors`
/// (a driver that does not list them is taken at its word: true).
pub fn offers(root: &Root, cpu: &str, governor: &str) -> bool {
    root.read(path(cpu, "scaling_available_governors"))
        .is_none_or(|list| list.split_whitespace().any(|g| g == governor))
}
