//! A look at the server from one connection: its name and version ([`probe_server`], the
//! parent's one-shot look before any window), and who else is there: the other clients and
//! streams (listed by the child at its start and end too).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use libpulse_binding as pulse;
use pulse::callbacks::ListResult;
use pulse::context::Context;
use pulse::mainloop::standard::Mainloop;

use crate::client::mainloop::{connect, iterate, ClientError};
use crate::client::messages::{ServerActivity, ServerProbe};

/// Server name and version (pipewire-pulse says "PulseAudio (on PipeWire x.y.z)").
fn server_info(
    mainloop: &mut Mainloop,
    context: &Context,
) -> Result<(String, String), ClientError> {
    let slot: Rc<RefCell<Option<(String, String)>>> = Rc::new(RefCell::new(None));
    let s = Rc::clone(&slot);
    let op = context.introspect().get_server_info(move |info| {
        let name = info.server_name.as_deref().unwrap_or("").to_string();
        let version = info.server_version.as_deref().unwrap_or("").to_string();
        *s.borrow_mut() = Some((name, version));
    });
    while slot.borrow().is_none() {
        iterate(mainloop)?;
        if op.get_state() == pulse::operation::State::Cancelled {
            return Err(ClientError::Pulse("server info query cancelled".into()));
        }
    }
    let v = slot.borrow_mut().take().unwrap_or_default();
    Ok(v)
}

/// One stream as listed: (kind, name, owning client index, owning module index).
type StreamRow = (&'static str, String, Option<u32>, Option<u32>);

/// Lists the other clients and streams at the server: everything but this connection's own
/// client and streams. Four list queries, one round trip each.
pub(crate) fn list_activity(
    mainloop: &mut Mainloop,
    context: &Context,
) -> Result<ServerActivity, ClientError> {
    let own = context.get_index();
    let introspect = context.introspect();
    let lists = Rc::new(Lists {
        pending: Cell::new(4),
        ..Lists::default()
    });
    let l = Rc::clone(&lists);
    let _o1 = introspect
        .get_client_info_list(move |r| l.take(r, &l.clients, |i| (i.index, name_of(&i.name))));
    let l = Rc::clone(&lists);
    let _o2 = introspect
        .get_module_info_list(move |r| l.take(r, &l.modules, |i| (i.index, name_of(&i.name))));
    let l = Rc::clone(&lists);
    let _o3 = introspect.get_sink_input_info_list(move |r| {
        l.take(r, &l.streams, |i| {
            ("sink input", name_of(&i.name), i.client, i.owner_module)
        })
    });
    let l = Rc::clone(&lists);
    let _o4 = introspect.get_source_output_info_list(move |r| {
        l.take(r, &l.streams, |i| {
            ("source output", name_of(&i.name), i.client, i.owner_module)
        })
    });
    while lists.pending.get() > 0 {
        iterate(mainloop)?;
    }
    if lists.failed.get() {
        // pipewire-pulse answers all four; an old or restricted server may not. Not fatal: the
        // report then simply lists nothing.
        tracing::debug!("a server list query failed; other clients/streams may be incomplete");
    }
    let clients = lists.clients.borrow();
    let modules = lists.modules.borrow();
    let streams = lists.streams.borrow();
    Ok(describe_activity(own, &clients, &modules, &streams))
}

/// What [`list_activity`]'s four queries collect, and how many of them are still running.
#[derive(Default)]
struct Lists {
    pending: Cell<u32>,
    failed: Cell<bool>,
    clients: RefCell<Vec<(u32, String)>>,
    modules: RefCell<Vec<(u32, String)>>,
    streams: RefCell<Vec<StreamRow>>,
}

impl Lists {
    /// One step of a list callback: an item becomes a row of `rows`; the end of the list (or an
    /// error) counts its query as finished.
    fn take<T, R>(&self, r: ListResult<T>, rows: &RefCell<Vec<R>>, row: impl FnOnce(T) -> R) {
        match r {
            ListResult::Item(i) => rows.borrow_mut().push(row(i)),
            ListResult::End => self.pending.set(self.pending.get().saturating_sub(1)),
            ListResult::Error => {
                self.pending.set(self.pending.get().saturating_sub(1));
                self.failed.set(true);
            }
        }
    }
}

/// A listed client's, module's or stream's name ("?" when it has none).
fn name_of(name: &Option<Cow<'_, str>>) -> String {
    name.as_deref().unwrap_or("?").to_string()
}

/// Pure part of [`list_activity`]: names the other clients and streams (leaving out `own`).
fn describe_activity(
    own: Option<u32>,
    clients: &[(u32, String)],
    modules: &[(u32, String)],
    streams: &[StreamRow],
) -> ServerActivity {
    let client_name = |idx: u32| {
        clients
            .iter()
            .find(|(i, _)| *i == idx)
            .map_or_else(|| format!("#{idx}"), |(_, n)| n.clone())
    };
    let module_name = |idx: u32| {
        modules
            .iter()
            .find(|(i, _)| *i == idx)
            .map_or_else(|| format!("#{idx}"), |(_, n)| n.clone())
    };
    let mut a = ServerActivity::default();
    // Several clients may share a name (pipewire-pulse lists three "pipewire"): listed once.
    let others = clients.iter().filter(|(i, _)| Some(*i) != own);
    a.merge(&ServerActivity {
        clients: others.map(|(_, n)| n.clone()).collect(),
        ..ServerActivity::default()
    });
    for (kind, name, client, module) in streams {
        match (client, module) {
            (Some(c), _) if Some(*c) == own => {}
            (Some(c), _) => a.client_streams.push(format!(
                "{kind} \"{name}\" of client \"{}\"",
                client_name(*c)
            )),
            (None, Some(m)) => a
                .module_streams
                .push(format!("{kind} \"{name}\" of {}", module_name(*m))),
            (None, None) => a.client_streams.push(format!("{kind} \"{name}\"")),
        }
    }
    a
}

/// A one-shot look at the server (the bench's parent does this before anything else): name,
/// version, protocol, and who else is there. Fails when the server cannot be reached.
pub fn probe_server(server: Option<&str>) -> Result<ServerProbe, ClientError> {
    let (mut mainloop, mut context) = connect(server, "micoff-bench probe")?;
    let (server_name, server_version) = server_info(&mut mainloop, &context)?;
    let protocol_version = context.get_server_protocol_version();
    let activity = list_activity(&mut mainloop, &context)?;
    context.disconnect();
    Ok(ServerProbe {
        server_name,
        server_version,
        protocol_version,
        activity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_names_other_clients_and_streams_but_not_our_own() {
        let clients = vec![
            (0, "micoff-bench srbchannel-on".to_string()),
            (3, "Chromium".to_string()),
        ];
        let modules = vec![(2, "module-remap-source".to_string())];
        let streams: Vec<StreamRow> = vec![
            ("source output", "rec".into(), Some(0), None),
            ("source output", "WebRTC".into(), Some(3), None),
            ("source output", "Remapped Stream".into(), None, Some(2)),
            ("sink input", "odd".into(), Some(9), None),
        ];
        let a = describe_activity(Some(0), &clients, &modules, &streams);
        assert_eq!(a.clients, vec!["Chromium".to_string()]);
        assert_eq!(
            a.client_streams,
            vec![
                r#"source output "WebRTC" of client "Chromium""#.to_string(),
                r##"sink input "odd" of client "#9""##.to_string(),
            ]
        );
        assert_eq!(
            a.module_streams,
            vec![r#"source output "Remapped Stream" of module-remap-source"#.to_string()]
        );
        let mut all = a.clone();
        all.merge(&a);
        assert_eq!(all, a, "merging the same sighting adds nothing");
    }
}
