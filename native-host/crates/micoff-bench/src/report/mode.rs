//! How the measured client talked to the server ([`Mode`]), and whether srbchannel carried its
//! control channel in one window ([`SrbchannelState`]).

use serde::{Deserialize, Serialize};

/// How the measured client talked to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Our client, shared memory on: PulseAudio offers srbchannel.
    SrbchannelOn,
    /// Our client, `enable-shm = no`, `enable-memfd = no`: control over the socket (iochannel).
    SrbchannelOff,
    /// Our client on a server without shared memory (pipewire-pulse): the socket is all there is.
    Socket,
    /// parec / pacat at the same latency, the outside reference.
    Reference,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::SrbchannelOn => "srbchannel on",
            Mode::SrbchannelOff => "srbchannel off",
            Mode::Socket => "socket only",
            Mode::Reference => "parec/pacat",
        }
    }
}

/// Whether srbchannel carried the control channel, as seen from the client's file descriptors
/// (srbchannel hands the client two eventfds; the iochannel path has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SrbchannelState {
    Active,
    Inactive,
    NotApplicable,
    Unknown,
}

impl SrbchannelState {
    pub fn label(self) -> &'static str {
        match self {
            SrbchannelState::Active => "active",
            SrbchannelState::Inactive => "inactive",
            SrbchannelState::NotApplicable => "not applicable",
            SrbchannelState::Unknown => "unknown",
        }
    }

    pub fn from_eventfds(eventfds: Option<usize>) -> Self {
        match eventfds {
            Some(n) if n >= 2 => SrbchannelState::Active,
            Some(_) => SrbchannelState::Inactive,
            None => SrbchannelState::Unknown,
        }
    }
}
