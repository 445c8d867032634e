//! Capture latency's view of the browser table (micoff-browsers): for each browser micoff
//! configures, its capture client's name at the server, its binaries, the commands it is started
//! by and its desktop entries. (The enum itself, its wire names included, is the protocol's:
//! [`crate::protocol::Browser`], mapped onto the table by [`Browser::table`].)

use crate::protocol::{AudioStream, Browser};

impl Browser {
    /// The name of Chromium's capture context (`PRODUCT_STRING " input"`, pulse_util.cc).
    pub fn capture_client_name(self) -> Option<&'static str> {
        self.table().facts().capture_client_name
    }

    /// The name of Chromium's playback context (`PRODUCT_STRING`, audio_manager_pulse.cc), where
    /// a call's far end plays; Firefox plays from its one context.
    pub fn playback_client_name(self) -> Option<&'static str> {
        self.table().facts().playback_client_name
    }

    /// Process binaries (`application.process.binary`) that mark this browser's client.
    pub(super) fn binaries(self) -> impl Iterator<Item = &'static str> {
        self.table().pulse_binaries()
    }

    /// The commands a terminal or a launcher runs the browser by (micoff's PATH wrappers take
    /// these names; each is written only where the browser's own command is on PATH).
    pub fn commands(self) -> impl Iterator<Item = &'static str> {
        self.table().stable_commands()
    }

    /// Desktop entry ids, first match wins per id (all that exist are configured).
    pub fn desktop_ids(self) -> &'static [&'static str] {
        self.table().facts().desktop_ids
    }

    /// Which browser a record stream belongs to: Chromium's capture context by name, else the
    /// client's binary (Firefox has one context for capture and playback).
    pub fn of_stream(s: &AudioStream) -> Option<Browser> {
        let names = [s.client_name.as_deref(), s.application_name.as_deref()];
        if let Some(b) = Self::ALL.into_iter().find(|b| {
            b.capture_client_name()
                .is_some_and(|n| names.contains(&Some(n)))
        }) {
            return Some(b);
        }
        let binary = s.application_process_binary.as_deref()?;
        let binary = binary.rsplit('/').next().unwrap_or(binary);
        Self::ALL
            .into_iter()
            .find(|b| b.binaries().any(|n| n == binary))
    }
}

/// `chromium,chrome`: browsers as the files' meta line and the messages list them.
pub(super) fn browser_list(browsers: &[Browser]) -> String {
    browsers
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// The browsers of a [`browser_list`] (unknown names skipped).
pub(super) fn parse_browser_list(s: &str) -> Vec<Browser> {
    s.split(',').filter_map(Browser::from_name).collect()
}
