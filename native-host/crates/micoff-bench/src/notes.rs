//! What the reader must be told beside the figures: warnings (what makes them mean less than they
//! seem: srbchannel not as asked, other clients' streams in the server columns) and notes (idle
//! clients, the server's own module streams, where pipewire-pulse's work is). Pure.

use crate::client::ServerActivity;
use crate::report::{self, Mode, Run, SrbchannelState};

/// Why the `on` client may not have got srbchannel, from what the bench knows.
pub fn srbchannel_detail(protocol_version: Option<u32>, unix_socket: bool) -> String {
    if let Some(v) = protocol_version.filter(|v| *v < 30) {
        return format!(
            "the server speaks native protocol {v}; srbchannel needs 30 (PulseAudio 6.0 or later)"
        );
    }
    if !unix_socket {
        return "not a unix-socket connection; srbchannel is only offered over the unix socket"
            .into();
    }
    "the server did not offer it: module-native-protocol-unix loaded with srbchannel=false, or shared memory off on the server (enable-shm = no in daemon.conf, --disable-shm), or no shared memory possible between client and server (another user or a container)".into()
}

/// What makes the figures mean less than they seem: srbchannel not as asked, other clients'
/// streams in the server columns.
pub(crate) fn warnings(
    runs: &[Run],
    srbchannel_detail: Option<&str>,
    activity: &ServerActivity,
    baseline: bool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(detail) = srbchannel_detail {
        warnings.push(report::same_client_warning(&format!(
            "srbchannel was NOT granted to the `on` client ({detail})"
        )));
    }
    if runs
        .iter()
        .any(|r| r.mode == Mode::SrbchannelOff && r.srbchannel == SrbchannelState::Active)
    {
        warnings.push(report::same_client_warning(
            "the `off` client got srbchannel anyway (its client.conf override did not take effect)",
        ));
    }
    if !activity.client_streams.is_empty() {
        warnings.push(format!(
            "other clients' streams were at the server during the bench: {}; their work is in the server columns{}",
            activity.client_streams.join(", "),
            if baseline {
                " (the \"server alone (idle)\" row shows how much)"
            } else {
                " (no idle baseline was measured)"
            }
        ));
    }
    warnings
}

/// What else the reader should know: idle clients, the server's own module streams, where
/// pipewire-pulse's work is.
pub(crate) fn more_notes(activity: &ServerActivity, pipewire: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if !activity.clients.is_empty() {
        notes.push(format!(
            "other clients connected (an idle client costs the server nothing): {}",
            activity.clients.join(", ")
        ));
    }
    if !activity.module_streams.is_empty() {
        notes.push(format!(
            "streams of the server's own modules: {} (their cost is in every server figure, and in the idle row)",
            activity.module_streams.join(", ")
        ));
    }
    if pipewire {
        notes.push(
            "pipewire-pulse: the server columns are the pipewire-pulse process (socket holder); the graph itself runs in the pipewire daemon".into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srbchannel_detail_names_the_likely_cause() {
        assert!(srbchannel_detail(Some(29), true).contains("protocol 29"));
        assert!(srbchannel_detail(Some(35), false).contains("unix socket"));
        assert!(srbchannel_detail(Some(35), true).contains("srbchannel=false"));
    }
}
