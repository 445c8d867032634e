// A call through Janus with Janus's own janus.js (Debian's libjs-janus-gateway 1.1.2), audio only:
// `?plugin=audiobridge|videoroom&room=N&role=speaker|listener&server=<janus.js server>&processing=0|1`.
// A speaker sends the microphone (AudioBridge: joins the room's mix; VideoRoom: publishes a feed); a
// listener receives it (AudioBridge: the room's mix, its own microphone muted at the server;
// VideoRoom: subscribes to the room's one publisher) and timestamps the received level.
// The test API is on `window.jc`: `ready` (a promise), `mute()`/`unmute()` (janus.js's muteAudio /
// unmuteAudio: the track's `enabled`; the page's own button `#toggle` does the same, `unmutedAt()` says
// when its last unmute was), `events` (janus.js's callbacks, with `Date.now()`), `id()` (the
// handle's id at Janus), and for a listener `heardAfter(ms, dB)`. Plain JS: nothing between janus.js and the page but this file.
/* global Janus */

const q = new URLSearchParams(location.search);
const plugin = q.get('plugin') ?? 'audiobridge';
const room = Number(q.get('room') ?? 4321);
const role = q.get('role') ?? 'speaker';
const server = q.get('server');
// `processing=0`: the capture without echo cancellation, noise suppression and gain control, so that the
// tone's onset at the far end is not the noise suppressor's (it learns a steady tone as noise).
const capture =
  q.get('processing') === '0'
    ? { echoCancellation: false, noiseSuppression: false, autoGainControl: false }
    : true;

const events = [];
const log = (what, detail = {}) => events.push({ t: Date.now(), what, ...detail });

// The received level, every 5 ms: [Date.now(), dBFS].
const levels = [];
function meter(track) {
  // Chromium hands a remote track's audio to WebAudio only while a media element plays it.
  const el = document.createElement('audio');
  el.muted = true;
  el.srcObject = new MediaStream([track]);
  el.play().catch(() => {});
  document.body.append(el);
  const ctx = new AudioContext();
  const an = ctx.createAnalyser();
  an.fftSize = 512;
  ctx.createMediaStreamSource(new MediaStream([track])).connect(an);
  const buf = new Float32Array(an.fftSize);
  setInterval(() => {
    an.getFloatTimeDomainData(buf);
    let s = 0;
    for (const x of buf) s += x * x;
    levels.push([Date.now(), 10 * Math.log10(s / buf.length + 1e-12)]);
    if (levels.length > 60_000) levels.splice(0, 30_000);
  }, 5);
  ctx.resume();
}

function heardAfter(ms, dB = -50) {
  const hit = levels.find(([t, l]) => t >= ms && l > dB);
  return hit ? hit[0] : null;
}

const roomOptions = {
  audiobridge: { request: 'create', room, sampling_rate: 48000, audiolevel_event: false },
  videoroom: { request: 'create', room, publishers: 2, audiocodec: 'opus', videocodec: 'vp8' },
};

function attach(janus, name) {
  return new Promise((resolve, reject) => {
    let handle;
    const waiters = [];
    janus.attach({
      plugin: `janus.plugin.${name}`,
      opaqueId: `micoff-${role}`,
      success: (h) => {
        handle = h;
        resolve({
          handle,
          // The next message (and its jsep) that `pick` accepts.
          next: (pick) => new Promise((r) => waiters.push({ pick, r })),
        });
      },
      error: reject,
      consentDialog: (on) => log('consentDialog', { on }),
      iceState: (state) => log('iceState', { state }),
      mediaState: (medium, receiving, mid) => log('mediaState', { medium, receiving, mid }),
      webrtcState: (up, reason) => log('webrtcState', { up, reason }),
      slowLink: (uplink, lost, mid) => log('slowLink', { uplink, lost, mid }),
      onmessage: (msg, jsep) => {
        log('message', { msg });
        if (jsep && jsep.type === 'answer') handle.handleRemoteJsep({ jsep });
        for (const w of [...waiters])
          if (w.pick(msg, jsep)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.r({ msg, jsep });
          }
      },
      onlocaltrack: (track, on) => log('localtrack', { kind: track?.kind, on }),
      onremotetrack: (track, mid, on) => {
        log('remotetrack', { kind: track?.kind, mid, on });
        if (on && track?.kind === 'audio' && role === 'listener') meter(track);
      },
      oncleanup: () => log('cleanup'),
    });
  });
}

const send = (handle, message) =>
  new Promise((resolve, reject) => handle.send({ message, success: resolve, error: reject }));

const offer = (handle, tracks) =>
  new Promise((resolve, reject) => handle.createOffer({ tracks, success: resolve, error: reject }));

async function start() {
  if (!server) throw new Error('no ?server=');
  await new Promise((r) => Janus.init({ debug: false, callback: r }));
  const janus = await new Promise((resolve, reject) => {
    const j = new Janus({ server, success: () => resolve(j), error: reject });
  });
  const { handle, next } = await attach(janus, plugin);
  // The room: made by whoever comes first (an existing room answers with an error code, not a failure).
  await send(handle, roomOptions[plugin]);
  if (plugin === 'audiobridge') {
    const joined = next((m) => m.audiobridge === 'joined');
    handle.send({ message: { request: 'join', room, display: role, muted: role === 'listener' } });
    await joined;
    const jsep = await offer(handle, [{ type: 'audio', capture, recv: true }]);
    const answered = next((_m, j) => j?.type === 'answer');
    handle.send({ message: { request: 'configure', muted: role === 'listener' }, jsep });
    await answered;
  } else if (role === 'speaker') {
    const joined = next((m) => m.videoroom === 'joined');
    handle.send({ message: { request: 'join', ptype: 'publisher', room, display: role } });
    await joined;
    const jsep = await offer(handle, [{ type: 'audio', capture, recv: false }]);
    const answered = next((_m, j) => j?.type === 'answer');
    handle.send({ message: { request: 'publish', audio: true, video: false }, jsep });
    await answered;
  } else {
    // A listener: the room's publisher, then a subscription to its feed.
    let feed = null;
    for (let i = 0; i < 100 && feed === null; i++) {
      const list = await send(handle, { request: 'listparticipants', room });
      feed = list.participants?.find((p) => p.publisher)?.id ?? null;
      if (feed === null) await new Promise((r) => setTimeout(r, 200));
    }
    if (feed === null) throw new Error(`no publisher in VideoRoom ${room}`);
    const offered = next((_m, j) => j?.type === 'offer');
    handle.send({ message: { request: 'join', ptype: 'subscriber', room, streams: [{ feed }] } });
    const { jsep } = await offered;
    const answer = await new Promise((resolve, reject) =>
      handle.createAnswer({
        jsep,
        tracks: [{ type: 'audio', capture: false, recv: true }],
        success: resolve,
        error: reject,
      }),
    );
    handle.send({ message: { request: 'start', room }, jsep: answer });
  }
  // Up when janus.js says so.
  for (let i = 0; i < 200 && !events.some((e) => e.what === 'webrtcState' && e.up); i++)
    await new Promise((r) => setTimeout(r, 100));
  if (!events.some((e) => e.what === 'webrtcState' && e.up))
    throw new Error('the PeerConnection never came up');
  return handle;
}

const ready = start();
// The page's own mute button, as a person uses it: janus.js's muteAudio / unmuteAudio, the moment of
// each click's unmute kept for the test.
let unmutedAt = null;
const toggle = document.getElementById('toggle');
toggle.onclick = async () => {
  const handle = await ready;
  if (handle.isAudioMuted()) {
    handle.unmuteAudio();
    unmutedAt = Date.now();
    toggle.textContent = 'Mute';
  } else {
    handle.muteAudio();
    toggle.textContent = 'Unmute';
  }
};
ready.catch((e) => log('error', { message: String(e?.message ?? e) }));
window.jc = {
  ready: ready.then(() => true),
  events,
  levels,
  heardAfter,
  mute: async () => {
    (await ready).muteAudio();
    return Date.now();
  },
  unmute: async () => {
    (await ready).unmuteAudio();
    return Date.now();
  },
  muted: async () => (await ready).isAudioMuted(),
  /** When the page's button last unmuted (Date.now()), or null. */
  unmutedAt: () => unmutedAt,
  /** Janus's handle id: its log names a handle so ("[<id>] Didn't receive audio ..."). */
  id: async () => (await ready).getId(),
};
