//! The libpulse operations the worker starts, each wired so that its callbacks only push onto the
//! worker's queue ([`Internal`], tagged with the connection they belong to): connecting a context,
//! a full listing, fetching one object after a subscription event, a change (loading or unloading a
//! module, suspending or resuming a sink).

use libpulse_binding as pulse;
use pulse::callbacks::ListResult;
use pulse::context::subscribe::{Facility, InterestMaskSet};
use pulse::context::{Context, FlagSet};
use pulse::mainloop::standard::Mainloop;
use pulse::proplist::Proplist;

use crate::convert;
use crate::worker::queue::{push, Fetched, Internal, Part, Queue};
use crate::worker::requests::ChangeRequest;
use crate::PulseConfig;

/// A context for connection `id`, connecting to the configured server, its state changes and
/// subscription events reported onto `q`. `Err`: why it could not even start connecting.
pub(crate) fn connect_context(
    mainloop: &Mainloop,
    config: &PulseConfig,
    q: &Queue,
    id: u64,
) -> Result<Context, String> {
    let mut props = Proplist::new().ok_or_else(|| "cannot allocate a proplist".to_string())?;
    let _ = props.set_str(
        pulse::proplist::properties::APPLICATION_NAME,
        &config.app_name,
    );
    let Some(mut ctx) = Context::new_with_proplist(mainloop, &config.app_name, &props) else {
        return Err("cannot create a pulse context".into());
    };
    let q1 = q.clone();
    ctx.set_state_callback(Some(Box::new(move || {
        push(&q1, Internal::State { conn: id })
    })));
    let q2 = q.clone();
    ctx.set_subscribe_callback(Some(Box::new(move |facility, op, index| {
        if let (Some(facility), Some(op)) = (facility, op) {
            push(
                &q2,
                Internal::Event {
                    conn: id,
                    facility,
                    op,
                    index,
                },
            );
        }
    })));
    tracing::debug!(server = ?config.server, "connecting to the audio server");
    // NOAUTOSPAWN: a diagnostics tool must never start an audio server by itself.
    if ctx
        .connect(config.server.as_deref(), FlagSet::NOAUTOSPAWN, None)
        .is_err()
    {
        // pa_context_connect returns -1, not an error code (read as one it is PA_ERR_ACCESS,
        // "Access denied", whatever happened): the reason is the context's own.
        let e = ctx.errno();
        return Err(e.to_string().unwrap_or_else(|| format!("error {}", e.0)));
    }
    Ok(ctx)
}

/// Subscribes `ctx` to the events the cache follows.
pub(crate) fn subscribe(ctx: &mut Context) {
    let mask = InterestMaskSet::SOURCE_OUTPUT
        | InterestMaskSet::SINK_INPUT
        | InterestMaskSet::SOURCE
        | InterestMaskSet::SINK
        | InterestMaskSet::SERVER
        | InterestMaskSet::CLIENT;
    ctx.subscribe(mask, |ok| {
        if !ok {
            tracing::warn!("subscribing to audio server events failed");
        }
    });
}

/// Starts the [`crate::worker::queue::PARTS`] lists of a full listing (`refresh`) on
/// connection `conn`; each reports as one [`Part`].
pub(crate) fn start_listing(ctx: &Context, q: &Queue, conn: u64, refresh: u64) {
    let intro = ctx.introspect();

    macro_rules! list {
        ($method:ident, $convert:path, $part:ident) => {{
            let q = q.clone();
            let mut acc = Vec::new();
            intro.$method(move |r| match r {
                ListResult::Item(info) => acc.push($convert(info)),
                ListResult::End => push(
                    &q,
                    Internal::Part {
                        conn,
                        refresh,
                        part: Part::$part(Some(std::mem::take(&mut acc))),
                    },
                ),
                ListResult::Error => push(
                    &q,
                    Internal::Part {
                        conn,
                        refresh,
                        part: Part::$part(None),
                    },
                ),
            });
        }};
    }
    // Clients and devices first, so streams find them in the cache.
    list!(get_client_info_list, convert::client_of, Clients);
    list!(get_source_info_list, convert::source_device, Sources);
    list!(get_sink_info_list, convert::sink_device, Sinks);
    list!(get_source_output_info_list, convert::record_stream, Records);
    list!(
        get_sink_input_info_list,
        convert::playback_stream,
        Playbacks
    );
    let q = q.clone();
    intro.get_server_info(move |info| {
        push(
            &q,
            Internal::Part {
                conn,
                refresh,
                part: Part::Server(Some(convert::server_of(info))),
            },
        )
    });
}

/// Fetches the object a subscription event (new or `changed`) is about; it reports as
/// [`Internal::Fetched`]. Facilities the cache does not follow are left alone.
pub(crate) fn fetch(
    ctx: &Context,
    q: &Queue,
    conn: u64,
    facility: Facility,
    index: u32,
    changed: bool,
) {
    let intro = ctx.introspect();
    let q = q.clone();
    macro_rules! fetch {
        // A device or a stream: new or changed.
        ($method:ident, $convert:path, $variant:ident) => {
            fetch!(@ $method, |info| Fetched::$variant($convert(info), changed))
        };
        (@ $method:ident, |$info:ident| $item:expr) => {{
            intro.$method(index, move |r| {
                // Error = it went away meanwhile; its Removed event follows.
                if let ListResult::Item($info) = r {
                    push(&q, Internal::Fetched { conn, item: $item });
                }
            });
        }};
    }
    match facility {
        Facility::SourceOutput => fetch!(get_source_output_info, convert::record_stream, Stream),
        Facility::SinkInput => fetch!(get_sink_input_info, convert::playback_stream, Stream),
        Facility::Source => fetch!(get_source_info_by_index, convert::source_device, Device),
        Facility::Sink => fetch!(get_sink_info_by_index, convert::sink_device, Device),
        Facility::Client => {
            fetch!(@ get_client_info, |info| Fetched::Client(convert::client_of(info)))
        }
        Facility::Server => {
            intro.get_server_info(move |info| {
                push(
                    &q,
                    Internal::Fetched {
                        conn,
                        item: Fetched::Server(convert::server_of(info)),
                    },
                )
            });
        }
        _ => {}
    }
}

/// Starts a change (operation `op`): loading or unloading a module, suspending or resuming a
/// sink; it reports as [`Internal::ChangeDone`]. The caller has checked the arguments (no NUL, no
/// `PA_INVALID_INDEX` sink, which libpulse would read as "every sink").
pub(crate) fn start_change(ctx: &Context, q: &Queue, conn: u64, op: u64, req: &ChangeRequest) {
    let q = q.clone();
    match req {
        ChangeRequest::Load { name, args, .. } => {
            let what = format!("loading {name} failed");
            ctx.introspect().load_module(name, args, move |index| {
                let result = if index == u32::MAX {
                    Err(what.clone())
                } else {
                    Ok(index)
                };
                push(&q, Internal::ChangeDone { conn, op, result });
            });
        }
        ChangeRequest::Unload { index, .. } => {
            let index = *index;
            ctx.introspect().unload_module(index, move |ok| {
                let result = if ok {
                    Ok(index)
                } else {
                    Err(format!("unloading module {index} failed"))
                };
                push(&q, Internal::ChangeDone { conn, op, result });
            });
        }
        ChangeRequest::SuspendSink { index, suspend, .. } => {
            let (index, suspend) = (*index, *suspend);
            let callback = move |ok| {
                let result = if ok {
                    Ok(index)
                } else {
                    let what = if suspend { "suspending" } else { "resuming" };
                    Err(format!("{what} sink {index} failed"))
                };
                push(&q, Internal::ChangeDone { conn, op, result });
            };
            ctx.introspect()
                .suspend_sink_by_index(index, suspend, Some(Box::new(callback)));
        }
    }
}
