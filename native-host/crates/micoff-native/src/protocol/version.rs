//! `version`: who the host is and who launched it.

use serde::{Deserialize, Serialize};

use super::processes::BrowserFamily;

pub const PROTOCOL_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    pub host_version: String,
    pub protocol_version: u32,
    pub pid: u32,
    pub origin: Option<String>,
    pub extension_id: Option<String>,
    pub browser_family: Option<BrowserFamily>,
    pub chrome_extension_id: String,
    pub firefox_extension_id: String,
}
