//! `power`: what the machine reports it draws over one second, and how many cores were busy
//! meanwhile (PROTOCOL.md, "Power"). [`crate::power`] measures it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerSource {
    /// RAPL package domains (the CPU packages: cores, caches, memory controller).
    Rapl,
    /// A discharging battery (the whole machine, screen included).
    Battery,
}

/// The `power` result (PROTOCOL.md, "Power").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerReading {
    /// What `watts` was read from; null when nothing reports power.
    pub source: Option<PowerSource>,
    /// Mean power over the window, W.
    pub watts: Option<f64>,
    /// Cores busy over the same window (all CPUs, from `/proc/stat`), e.g. 0.4.
    pub busy_cores: Option<f64>,
    /// `watts / busy_cores`; null without `watts`, or when fewer than 0.05 cores were busy.
    pub watts_per_busy_core: Option<f64>,
    /// The measured window, ms.
    pub window_ms: f64,
    /// Why each source that gave no figure could not (one line each, naming the file).
    pub unavailable: Vec<String>,
}
