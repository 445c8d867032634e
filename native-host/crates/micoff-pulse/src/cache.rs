//! What the worker knows about the server between listings: clients, devices and streams by
//! index, kept current by full listings and subscription events. Pure: every method takes what
//! the server said and returns the [`PulseEvent`]s it means, and the worker only sends them. Events
//! are asked for (`emit`) only once the connection is ready: the first listing after a connect
//! fills the cache silently and [`Cache::ready_events`] then announces the streams in it.

use std::collections::BTreeMap;

use libpulse_binding::context::subscribe::Facility;

use crate::convert::{self, Client, RawServerInfo, RawStream};
use crate::types::{Device, DeviceKind, PulseEvent, Stream, StreamKind, Streams};

#[derive(Debug, Default)]
pub(crate) struct Cache {
    server: Option<RawServerInfo>,
    clients: BTreeMap<u32, Client>,
    sources: BTreeMap<u32, Device>,
    sinks: BTreeMap<u32, Device>,
    records: BTreeMap<u32, RawStream>,
    playbacks: BTreeMap<u32, RawStream>,
}

impl Cache {
    fn streams_of(&mut self, kind: StreamKind) -> &mut BTreeMap<u32, RawStream> {
        match kind {
            StreamKind::Record => &mut self.records,
            StreamKind::Playback => &mut self.playbacks,
        }
    }

    fn devices_of(&mut self, kind: DeviceKind) -> &mut BTreeMap<u32, Device> {
        match kind {
            DeviceKind::Source => &mut self.sources,
            DeviceKind::Sink => &mut self.sinks,
        }
    }

    /// Forgets everything: the connection is gone, and a server that comes back (restarted,
    /// another one on the same socket) numbers its objects anew.
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// The server's own fields as last listed (defaults before the first listing).
    pub(crate) fn server(&self) -> RawServerInfo {
        self.server.clone().unwrap_or_default()
    }

    /// Keeps the server info; whether it differs from what was kept (a `ServerChanged`).
    pub(crate) fn set_server(&mut self, raw: RawServerInfo) -> bool {
        let differs = self.server.as_ref() != Some(&raw);
        self.server = Some(raw);
        differs
    }

    /// A full client listing replaces the clients.
    pub(crate) fn set_clients(&mut self, list: Vec<Client>) {
        self.clients = list.into_iter().map(|c| (c.index, c)).collect();
    }

    /// One client fetched after an event. Clients only name streams: no event of their own.
    pub(crate) fn put_client(&mut self, client: Client) {
        self.clients.insert(client.index, client);
    }

    /// A stream joined with its device and client, as callers see it.
    pub(crate) fn stream(&self, raw: &RawStream) -> Stream {
        let devices = match raw.kind {
            StreamKind::Record => &self.sources,
            StreamKind::Playback => &self.sinks,
        };
        let device = raw.device_index.and_then(|i| devices.get(&i));
        let client = raw.client_index.and_then(|c| self.clients.get(&c));
        convert::build_stream(raw, device, client)
    }

    pub(crate) fn streams(&self) -> Streams {
        Streams {
            record: self.records.values().map(|r| self.stream(r)).collect(),
            playback: self.playbacks.values().map(|r| self.stream(r)).collect(),
        }
    }

    pub(crate) fn sources(&self) -> Vec<Device> {
        self.sources.values().cloned().collect()
    }

    pub(crate) fn sinks(&self) -> Vec<Device> {
        self.sinks.values().cloned().collect()
    }

    /// A full listing of one kind of device replaces that kind: removed ones, then added ones
    /// (a listing says nothing about changes; change events do).
    pub(crate) fn apply_devices(
        &mut self,
        kind: DeviceKind,
        list: Vec<Device>,
        emit: bool,
    ) -> Vec<PulseEvent> {
        let new: BTreeMap<u32, Device> = list.into_iter().map(|d| (d.index, d)).collect();
        let old = std::mem::replace(self.devices_of(kind), new);
        if !emit {
            return Vec::new();
        }
        let current = &*self.devices_of(kind);
        let removed = old
            .keys()
            .filter(|i| !current.contains_key(i))
            .map(|&index| PulseEvent::DeviceRemoved { kind, index });
        let added = current
            .values()
            .filter(|d| !old.contains_key(&d.index))
            .map(|d| PulseEvent::DeviceAdded {
                kind,
                device: d.clone(),
            });
        removed.chain(added).collect()
    }

    /// A full listing of one kind of stream replaces that kind: removed ones, then added ones.
    pub(crate) fn apply_streams(
        &mut self,
        kind: StreamKind,
        list: Vec<RawStream>,
        emit: bool,
    ) -> Vec<PulseEvent> {
        let new: BTreeMap<u32, RawStream> = list.into_iter().map(|s| (s.index, s)).collect();
        let old = std::mem::replace(self.streams_of(kind), new);
        if !emit {
            return Vec::new();
        }
        let current = match kind {
            StreamKind::Record => &self.records,
            StreamKind::Playback => &self.playbacks,
        };
        let removed = old
            .keys()
            .filter(|i| !current.contains_key(i))
            .map(|&index| PulseEvent::StreamRemoved { kind, index });
        let added = current
            .values()
            .filter(|s| !old.contains_key(&s.index))
            .map(|raw| PulseEvent::StreamAdded {
                kind,
                stream: self.stream(raw),
            });
        removed.chain(added).collect()
    }

    /// A `removed` subscription event. Only an object the cache held is announced: the server
    /// also reports removals of objects created and gone before a listing saw them.
    pub(crate) fn removed(
        &mut self,
        facility: Facility,
        index: u32,
        emit: bool,
    ) -> Option<PulseEvent> {
        let event = match facility {
            Facility::SourceOutput | Facility::SinkInput => {
                let kind = if facility == Facility::SourceOutput {
                    StreamKind::Record
                } else {
                    StreamKind::Playback
                };
                self.streams_of(kind)
                    .remove(&index)
                    .map(|_| PulseEvent::StreamRemoved { kind, index })
            }
            Facility::Source | Facility::Sink => {
                let kind = if facility == Facility::Source {
                    DeviceKind::Source
                } else {
                    DeviceKind::Sink
                };
                self.devices_of(kind)
                    .remove(&index)
                    .map(|_| PulseEvent::DeviceRemoved { kind, index })
            }
            Facility::Client => {
                self.clients.remove(&index);
                None
            }
            _ => None,
        };
        event.filter(|_| emit)
    }

    /// A device fetched after a `new` or `changed` event (`changed`: the event was a change).
    /// A change that changes nothing is not announced.
    pub(crate) fn fetched_device(
        &mut self,
        device: Device,
        changed: bool,
        emit: bool,
    ) -> Option<PulseEvent> {
        let kind = device.kind;
        let existed = self.devices_of(kind).insert(device.index, device.clone());
        if !emit {
            return None;
        }
        match existed {
            None => Some(PulseEvent::DeviceAdded { kind, device }),
            Some(old) if changed && old != device => {
                Some(PulseEvent::DeviceChanged { kind, device })
            }
            Some(_) => None,
        }
    }

    /// A stream fetched after a `new` or `changed` event. A change is always announced: what
    /// callers see of a stream (its client's and device's fields) may change with it equal.
    pub(crate) fn fetched_stream(
        &mut self,
        raw: RawStream,
        changed: bool,
        emit: bool,
    ) -> Option<PulseEvent> {
        let kind = raw.kind;
        let existed = self.streams_of(kind).insert(raw.index, raw.clone());
        if !emit {
            return None;
        }
        let stream = self.stream(&raw);
        match existed {
            None => Some(PulseEvent::StreamAdded { kind, stream }),
            Some(_) if changed => Some(PulseEvent::StreamChanged { kind, stream }),
            Some(_) => None,
        }
    }

    /// When a connection becomes ready (after its first listing): every stream it holds, as
    /// added, so subscribers that saw a disconnect learn what is there now.
    pub(crate) fn ready_events(&self) -> Vec<PulseEvent> {
        self.records
            .values()
            .chain(self.playbacks.values())
            .map(|raw| PulseEvent::StreamAdded {
                kind: raw.kind,
                stream: self.stream(raw),
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::types::SampleSpec;

    fn device(kind: DeviceKind, index: u32, name: &str) -> Device {
        Device {
            kind,
            index,
            name: name.into(),
            state: "running".into(),
            sample_format: "s16le".into(),
            sample_rate_hz: 48_000,
            channels: 2,
            ..Default::default()
        }
    }

    fn raw(kind: StreamKind, index: u32, device: u32, client: u32) -> RawStream {
        RawStream {
            kind,
            index,
            name: Some(format!("stream {index}")),
            client_index: Some(client),
            device_index: Some(device),
            sample_spec: SampleSpec::default(),
            buffer_latency_us: 0,
            device_latency_us: 0,
            corked: false,
            muted: false,
            driver: None,
            resample_method: None,
            owner_module: None,
            props: Default::default(),
        }
    }

    fn client(index: u32, name: &str) -> Client {
        Client {
            index,
            name: Some(name.into()),
            props: Default::default(),
        }
    }

    /// One listing of a single device, its events dropped (the test looks at later ones).
    fn list_device(c: &mut Cache, kind: DeviceKind, index: u32, name: &str, ready: bool) {
        c.apply_devices(kind, vec![device(kind, index, name)], ready);
    }

    /// One listing of a single stream `(index, device, client)`, its events dropped.
    fn list_stream(
        c: &mut Cache,
        kind: StreamKind,
        (index, dev, client): (u32, u32, u32),
        ready: bool,
    ) {
        c.apply_streams(kind, vec![raw(kind, index, dev, client)], ready);
    }

    /// (what, kind or index) per event, to compare sequences briefly.
    fn names(events: &[PulseEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                PulseEvent::StreamAdded { stream, .. } => format!("stream+ {}", stream.index),
                PulseEvent::StreamChanged { stream, .. } => format!("stream~ {}", stream.index),
                PulseEvent::StreamRemoved { index, .. } => format!("stream- {index}"),
                PulseEvent::DeviceAdded { device, .. } => format!("device+ {}", device.index),
                PulseEvent::DeviceChanged { device, .. } => format!("device~ {}", device.index),
                PulseEvent::DeviceRemoved { index, .. } => format!("device- {index}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn device_listing_adds_and_removes() {
        let mut c = Cache::default();
        let src = |i| device(DeviceKind::Source, i, &format!("src{i}"));
        let ev = c.apply_devices(DeviceKind::Source, vec![src(1), src(2)], true);
        assert_eq!(names(&ev), ["device+ 1", "device+ 2"]);
        // Same listing again: nothing happened.
        assert!(c
            .apply_devices(DeviceKind::Source, vec![src(1), src(2)], true)
            .is_empty());
        // 1 gone, 3 new: removals first.
        let ev = c.apply_devices(DeviceKind::Source, vec![src(2), src(3)], true);
        assert_eq!(names(&ev), ["device- 1", "device+ 3"]);
        assert!(matches!(
            ev[0],
            PulseEvent::DeviceRemoved {
                kind: DeviceKind::Source,
                index: 1
            }
        ));
        assert_eq!(
            c.sources().iter().map(|d| d.index).collect::<Vec<_>>(),
            [2, 3]
        );
        // Sinks are their own list.
        assert!(c.sinks().is_empty());
        let ev = c.apply_devices(DeviceKind::Sink, vec![], true);
        assert!(ev.is_empty());
        assert_eq!(c.sources().len(), 2);
    }

    #[test]
    fn stream_listing_adds_and_removes_joined_with_device_and_client() {
        let mut c = Cache::default();
        c.set_clients(vec![client(7, "Chromium")]);
        list_device(&mut c, DeviceKind::Source, 1, "mic", false);
        let ev = c.apply_streams(
            StreamKind::Record,
            vec![raw(StreamKind::Record, 10, 1, 7)],
            true,
        );
        assert_eq!(names(&ev), ["stream+ 10"]);
        let PulseEvent::StreamAdded { kind, stream } = &ev[0] else {
            panic!("{ev:?}")
        };
        assert_eq!(*kind, StreamKind::Record);
        assert_eq!(stream.client_name.as_deref(), Some("Chromium"));
        assert_eq!(stream.device_name.as_deref(), Some("mic"));
        let ev = c.apply_streams(
            StreamKind::Record,
            vec![raw(StreamKind::Record, 11, 1, 7)],
            true,
        );
        assert_eq!(names(&ev), ["stream- 10", "stream+ 11"]);
        assert_eq!(c.streams().record.len(), 1);
        assert!(c.streams().playback.is_empty());
    }

    #[test]
    fn listings_before_ready_fill_silently() {
        let mut c = Cache::default();
        assert!(c
            .apply_devices(
                DeviceKind::Sink,
                vec![device(DeviceKind::Sink, 1, "out")],
                false
            )
            .is_empty());
        assert!(c
            .apply_streams(
                StreamKind::Playback,
                vec![raw(StreamKind::Playback, 5, 1, 1)],
                false
            )
            .is_empty());
        assert_eq!(c.sinks().len(), 1);
        assert_eq!(c.streams().playback.len(), 1);
    }

    #[test]
    fn removal_events_for_each_facility() {
        let mut c = Cache::default();
        c.set_clients(vec![client(7, "Chromium")]);
        list_device(&mut c, DeviceKind::Source, 1, "mic", false);
        list_device(&mut c, DeviceKind::Sink, 2, "out", false);
        list_stream(&mut c, StreamKind::Record, (10, 1, 7), false);
        list_stream(&mut c, StreamKind::Playback, (20, 2, 7), false);
        let rm = |c: &mut Cache, f, i| c.removed(f, i, true).map(|e| names(&[e])[0].clone());
        assert_eq!(
            rm(&mut c, Facility::SourceOutput, 10).as_deref(),
            Some("stream- 10")
        );
        assert!(matches!(
            c.removed(Facility::SinkInput, 20, true),
            Some(PulseEvent::StreamRemoved {
                kind: StreamKind::Playback,
                index: 20
            })
        ));
        assert!(matches!(
            c.removed(Facility::Source, 1, true),
            Some(PulseEvent::DeviceRemoved {
                kind: DeviceKind::Source,
                index: 1
            })
        ));
        assert_eq!(rm(&mut c, Facility::Sink, 2).as_deref(), Some("device- 2"));
        // Gone already, or never seen: nothing to announce.
        assert_eq!(rm(&mut c, Facility::Sink, 2), None);
        assert_eq!(rm(&mut c, Facility::SourceOutput, 99), None);
        // A client has no event, but it no longer names streams.
        assert_eq!(rm(&mut c, Facility::Client, 7), None);
        c.fetched_stream(raw(StreamKind::Record, 11, 1, 7), false, false);
        assert_eq!(c.streams().record[0].client_name, None);
        // Facilities the cache does not keep.
        assert_eq!(rm(&mut c, Facility::Module, 1), None);
        assert!(c.streams().playback.is_empty());
        assert!(c.sources().is_empty() && c.sinks().is_empty());
    }

    #[test]
    fn removal_before_ready_drops_silently() {
        let mut c = Cache::default();
        c.fetched_device(device(DeviceKind::Source, 1, "mic"), false, false);
        assert_eq!(c.removed(Facility::Source, 1, false), None);
        assert!(c.sources().is_empty());
    }

    #[test]
    fn fetched_device_added_changed_and_unchanged() {
        let mut c = Cache::default();
        let d = device(DeviceKind::Sink, 3, "out");
        let ev = c.fetched_device(d.clone(), false, true);
        assert!(matches!(ev, Some(PulseEvent::DeviceAdded { .. })), "{ev:?}");
        // A change event whose device is identical: nothing to say.
        assert_eq!(c.fetched_device(d.clone(), true, true), None);
        let mut d2 = d.clone();
        d2.muted = true;
        let ev = c.fetched_device(d2.clone(), true, true);
        assert!(
            matches!(&ev, Some(PulseEvent::DeviceChanged { device, .. }) if device.muted),
            "{ev:?}"
        );
        assert!(c.sinks()[0].muted);
        // A `new` event for one we know (a listing saw it first): no second add.
        assert_eq!(c.fetched_device(d2, false, true), None);
    }

    #[test]
    fn fetched_stream_added_and_changed() {
        let mut c = Cache::default();
        let s = raw(StreamKind::Record, 4, 1, 1);
        let ev = c.fetched_stream(s.clone(), false, true);
        assert_eq!(names(ev.as_slice()), ["stream+ 4"]);
        let mut s2 = s.clone();
        s2.corked = true;
        let ev = c.fetched_stream(s2, true, true);
        assert!(
            matches!(&ev, Some(PulseEvent::StreamChanged { stream, .. }) if stream.corked),
            "{ev:?}"
        );
        assert_eq!(c.fetched_stream(s, false, true), None);
        assert_eq!(c.streams().record.len(), 1);
    }

    #[test]
    fn server_changes_are_reported_once() {
        let mut c = Cache::default();
        assert_eq!(c.server(), RawServerInfo::default());
        let s = RawServerInfo {
            server_name: "pulseaudio".into(),
            server_version: "16.1".into(),
            ..Default::default()
        };
        assert!(c.set_server(s.clone()));
        assert!(!c.set_server(s.clone()));
        let s2 = RawServerInfo {
            default_source_name: Some("mic".into()),
            ..s
        };
        assert!(c.set_server(s2.clone()));
        assert_eq!(c.server(), s2);
    }

    #[test]
    fn a_server_restart_starts_from_an_empty_cache_and_announces_what_is_there() {
        let mut c = Cache::default();
        c.set_server(RawServerInfo::default());
        c.set_clients(vec![client(7, "Chromium")]);
        list_device(&mut c, DeviceKind::Source, 1, "mic", true);
        list_stream(&mut c, StreamKind::Record, (10, 1, 7), true);
        // The connection is lost: the worker starts over with an empty cache.
        c.clear();
        assert!(c.streams().record.is_empty() && c.sources().is_empty());
        // Removals of the old server's objects mean nothing now.
        assert_eq!(c.removed(Facility::SourceOutput, 10, true), None);
        // The new server's first listing fills it silently (not ready yet)...
        c.set_clients(vec![client(3, "Firefox")]);
        list_device(&mut c, DeviceKind::Source, 1, "mic", false);
        list_stream(&mut c, StreamKind::Record, (2, 1, 3), false);
        list_stream(&mut c, StreamKind::Playback, (5, 9, 3), false);
        // ...and becoming ready announces every stream, records first.
        let ev = c.ready_events();
        assert_eq!(names(&ev), ["stream+ 2", "stream+ 5"]);
        let PulseEvent::StreamAdded { stream, .. } = &ev[0] else {
            panic!("{ev:?}")
        };
        assert_eq!(stream.client_name.as_deref(), Some("Firefox"));
        // The playback's sink is unknown: the stream still comes, without a device name.
        let PulseEvent::StreamAdded { stream, .. } = &ev[1] else {
            panic!("{ev:?}")
        };
        assert_eq!(stream.device_name, None);
    }
}
