// Real meeting-SDK code on a loopback call, for e2e/tests/release-sdk.spec.ts, bundled by esbuild (with
// mediasoup-client) into bundle/sdk-loopback.js; simple-peer is its standalone build (global
// `SimplePeer`). The SDK code runs unmodified; everything here is test glue. Window test API:
// sdk.ready (the call is up, audio reaches the far peer), sdk.mute() / sdk.unmute() (the SDK's own mute:
// simple-peer track.enabled, mediasoup Producer.pause/resume), sdk.energy() (the far peer's received
// energy), sdk.events (errors, closes, state changes), sdk.state() (the local track and the SDK's view).
import { Device } from 'mediasoup-client';

const params = new URLSearchParams(location.search);
const kind = params.get('sdk');
const events = [];
let track = null;
let farPc = null;
let mute = null;
let unmute = null;
let sdkState = () => ({});

function setState(s) {
  document.getElementById('state').textContent = s;
  document.title = `sdk ${kind}: ${s}`;
}

// Plays the received track (Chromium fills inbound-rtp audio energy only while something plays it).
async function playOut(t) {
  const el = document.createElement('audio');
  el.autoplay = true;
  el.srcObject = new MediaStream([t]);
  document.body.append(el);
  await el.play().catch(() => {});
}

async function energy() {
  if (!farPc) return 0;
  for (const r of (await farPc.getStats()).values()) {
    if (r.type === 'inbound-rtp' && r.kind === 'audio') return r.totalAudioEnergy ?? 0;
  }
  return 0;
}

async function audioFlowing(timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if ((await energy()) > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no audio at the far peer');
}

// simple-peer: two peers in this page signalling each other; mute = track.enabled (what apps built on
// simple-peer do: it has no mute API of its own).
async function startSimplePeer(stream) {
  const a = new SimplePeer({ initiator: true, stream });
  const b = new SimplePeer();
  a.on('signal', (d) => b.signal(d));
  b.on('signal', (d) => a.signal(d));
  for (const [name, p] of [
    ['a', a],
    ['b', b],
  ]) {
    p.on('error', (e) => events.push(`${name} error: ${e.code ?? ''} ${e.message}`));
    p.on('close', () => events.push(`${name} close`));
  }
  const got = new Promise((resolve) => b.on('track', (t) => resolve(t)));
  await new Promise((resolve) => b.on('connect', resolve));
  farPc = b._pc;
  await playOut(await got);
  mute = () => {
    track.enabled = false;
  };
  unmute = () => {
    track.enabled = true;
  };
  sdkState = () => ({ connected: a.connected && b.connected, destroyed: a.destroyed || b.destroyed });
}

// What a mediasoup router would announce: Opus and the usual audio header extensions.
const ROUTER_CAPS = {
  codecs: [
    {
      kind: 'audio',
      mimeType: 'audio/opus',
      clockRate: 48000,
      channels: 2,
      preferredPayloadType: 111,
      parameters: {},
      rtcpFeedback: [{ type: 'transport-cc' }],
    },
  ],
  headerExtensions: [
    { kind: 'audio', uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', preferredId: 1, direction: 'sendrecv' },
    {
      kind: 'audio',
      uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time',
      preferredId: 4,
      direction: 'sendrecv',
    },
    {
      kind: 'audio',
      uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level',
      preferredId: 10,
      direction: 'sendrecv',
    },
  ],
};

// Placeholders for the SFU's transport: the glue below swaps in the far peer's real ones.
const PLACEHOLDER_TRANSPORT = {
  id: 'loopback-send',
  iceParameters: {
    usernameFragment: 'placeholderufrag',
    password: 'placeholderpassword0000',
    iceLite: false,
  },
  iceCandidates: [
    {
      foundation: '1',
      priority: 1,
      address: '127.0.0.1',
      ip: '127.0.0.1',
      protocol: 'udp',
      port: 9,
      type: 'host',
    },
  ],
  dtlsParameters: {
    role: 'auto',
    fingerprints: [{ algorithm: 'sha-256', value: Array(32).fill('00').join(':') }],
  },
};

const TRANSPORT_LINES =
  /^a=(ice-ufrag|ice-pwd|fingerprint|candidate|end-of-candidates|ice-lite|setup|ice-options):.*$|^a=(ice-lite|end-of-candidates)$/;

function lines(sdp) {
  return sdp.split(/\r\n/).filter((l) => l !== '');
}

// The far peer's transport attributes (first media section: BUNDLE shares one transport).
function transportOf(sdp) {
  const media = sdp.split(/\r\nm=/)[1] ?? '';
  return lines(`m=${media}`).filter((l) => /^a=(ice-ufrag|ice-pwd|fingerprint|candidate):/.test(l));
}

// mediasoup's answer with its transport attributes replaced by the far peer's, in every media section.
function withFarTransport(answerSdp, farSdp) {
  const far = [...transportOf(farSdp), 'a=setup:passive'];
  const out = [];
  for (const l of lines(answerSdp)) {
    if (TRANSPORT_LINES.test(l)) continue;
    out.push(l);
    if (l.startsWith('c=')) out.push(...far);
  }
  return `${out.join('\r\n')}\r\n`;
}

function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') resolve();
    });
  });
}

// mediasoup-client's send transport against a plain RTCPeerConnection in this page. Each time the
// handler sets its (SFU-side) answer, the far peer answers mediasoup's current offer for real (as the
// DTLS server: the offer goes over as a=setup:active) and its ICE/DTLS attributes replace the
// placeholders in mediasoup's answer. Renegotiations (zeroRtpOnPause pause/resume) take the same path.
async function startMediasoup(producerOptions) {
  const device = new Device();
  await device.load({ routerRtpCapabilities: ROUTER_CAPS });
  const transport = device.createSendTransport(PLACEHOLDER_TRANSPORT);
  transport.on('connect', (_dtls, callback) => callback());
  transport.on('produce', (_p, callback) => callback({ id: 'loopback-producer' }));
  transport.on('connectionstatechange', (s) => events.push(`transport connectionstatechange ${s}`));
  const far = new RTCPeerConnection();
  farPc = far;
  const got = new Promise((resolve) => {
    far.ontrack = (e) => resolve(e.track);
  });
  const pc = transport.handler._pc;
  const setRemote = pc.setRemoteDescription.bind(pc);
  pc.setRemoteDescription = async (desc) => {
    if (desc?.type !== 'answer') return setRemote(desc);
    try {
      const offer = pc.localDescription.sdp.replace(/a=setup:actpass/g, 'a=setup:active');
      await far.setRemoteDescription({ type: 'offer', sdp: offer });
      await far.setLocalDescription(await far.createAnswer());
      await gathered(far);
      return await setRemote({ type: 'answer', sdp: withFarTransport(desc.sdp, far.localDescription.sdp) });
    } catch (e) {
      // mediasoup-client swallows a failed pause/resume renegotiation (Producer.pause() is synchronous).
      events.push(`negotiation error: ${e.message}`);
      throw e;
    }
  };
  const producer = await transport.produce({ track, ...producerOptions });
  producer.on('transportclose', () => events.push('producer transportclose'));
  producer.on('trackended', () => events.push('producer trackended'));
  await playOut(await got);
  await new Promise((resolve, reject) => {
    const check = () => {
      if (transport.connectionState === 'connected') resolve();
      else if (transport.connectionState === 'failed') reject(new Error('mediasoup transport failed'));
    };
    transport.on('connectionstatechange', check);
    check();
  });
  mute = () => producer.pause();
  unmute = () => producer.resume();
  sdkState = () => ({
    paused: producer.paused,
    closed: producer.closed,
    transportState: transport.connectionState,
    // negotiated, not just asked for: a failed renegotiation leaves it where it was
    direction: pc.getTransceivers()[0]?.currentDirection,
  });
}

async function start() {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  track = stream.getAudioTracks()[0];
  if (kind === 'simple-peer') await startSimplePeer(stream);
  else if (kind === 'mediasoup') await startMediasoup({});
  else if (kind === 'mediasoup-zero-rtp')
    await startMediasoup({ zeroRtpOnPause: true, disableTrackOnPause: false });
  else throw new Error(`unknown sdk ${kind}`);
  await audioFlowing();
  events.length = 0; // from here on, anything the SDK reports is a change the mute caused
  setState('in call');
}

const ready = start();
ready.catch((e) => setState(`error: ${e.message}`));

window.sdk = {
  ready,
  events,
  energy,
  mute: () => mute(),
  unmute: () => unmute(),
  state: () => ({
    track: track && { readyState: track.readyState, enabled: track.enabled, muted: track.muted },
    ...sdkState(),
  }),
};
