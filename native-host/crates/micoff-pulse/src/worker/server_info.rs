//! The answer to `server_info()`: the server's own info as the cache holds it, plus what the
//! connection knows (server string, protocol versions, locality) and what the names tell
//! (pipewire-pulse or PulseAudio).

use libpulse_binding::context::Context;
use micoff_audio_server as audio_server;

use crate::convert::RawServerInfo;
use crate::types::ServerInfo;

/// `raw` (from the cache) with what `ctx` (the connection, if any) knows.
pub(crate) fn server_info(raw: RawServerInfo, ctx: Option<&Context>) -> ServerInfo {
    let (server_string, server_proto, is_local) = match ctx {
        Some(c) => (
            c.get_server(),
            c.get_server_protocol_version(),
            c.is_local(),
        ),
        None => (None, None, None),
    };
    let client_proto = ctx.map_or(0, |c| c.get_protocol_version());
    let is_pipewire = audio_server::is_pipewire(&raw.server_name)
        || audio_server::is_pipewire(&raw.server_version);
    ServerInfo {
        socket_path: server_string
            .as_deref()
            .and_then(audio_server::socket_of)
            .map(|p| p.display().to_string()),
        server_string,
        pipewire_version: audio_server::pipewire_version(&raw.server_name)
            .or_else(|| audio_server::pipewire_version(&raw.server_version)),
        is_pipewire,
        server_name: raw.server_name,
        server_version: raw.server_version,
        host_name: Some(raw.host_name).filter(|h| !h.is_empty()),
        user_name: Some(raw.user_name).filter(|u| !u.is_empty()),
        default_sink_name: raw.default_sink_name,
        default_source_name: raw.default_source_name,
        sample_format: raw.sample_spec.format,
        sample_rate_hz: raw.sample_spec.rate_hz,
        channels: raw.sample_spec.channels,
        server_protocol_version: server_proto,
        client_protocol_version: client_proto,
        is_local,
    }
}
