// The loopback call both test meetings share (meeting.js, webaudio.js), loaded first by its own <script>
// tag: the call in a top-level `const call` (a global binding the specs read) and the window test API the
// page object drives: `ready` (settles once media flows), mute() / unmute() (track.enabled), stopTrack()
// (track.stop()), hangUp(), stats() (received level and energy, the local track's state).
// A page calls startCall(title, start) with its own start(): the mic into `call.stream` / `call.track`,
// then connectLoopback() (captureAndConnect() does both plainly).
// Plain JS on purpose: no build step, nothing between the mic and the sender.

const call = { stream: null, track: null, sender: null, receiver: null, pcs: [], error: null };
let callTitle = 'meeting';

function setState(s) {
  document.getElementById('state').textContent = s;
  document.title = `${callTitle}: ${s}`;
}

// Sends `track` through one RTCPeerConnection to a second one on this page and waits until both are
// connected. With `playout=1` in the query the received track plays in an <audio> element. With
// `encoded=1` the sender's encoded frames pass through the page (encoded insertable streams), which
// calls `window.onEncodedFrame(bytes, performance.now())` for each, as it leaves for the wire: when the
// first words leave the sender, independent of the far end's jitter buffer. With `ptime=<ms>` the
// answer asks the sender for Opus frames of that length (`a=ptime` and the fmtp `ptime`, which
// libwebrtc's Opus encoder reads; default 20 ms).
async function connectLoopback(track, stream) {
  const params = new URLSearchParams(location.search);
  const encoded = params.get('encoded') === '1';
  const a = new RTCPeerConnection(encoded ? { encodedInsertableStreams: true } : undefined);
  const b = new RTCPeerConnection();
  call.pcs = [a, b];
  a.onicecandidate = (e) => e.candidate && b.addIceCandidate(e.candidate);
  b.onicecandidate = (e) => e.candidate && a.addIceCandidate(e.candidate);
  const received = new Promise((resolve) => {
    b.ontrack = (e) => resolve(e.receiver);
  });
  call.sender = a.addTrack(track, stream);
  if (encoded) {
    const { readable, writable } = call.sender.createEncodedStreams();
    readable
      .pipeThrough(
        new TransformStream({
          transform(frame, out) {
            window.onEncodedFrame?.(frame.data.byteLength, performance.now());
            out.enqueue(frame);
          },
        }),
      )
      .pipeTo(writable);
  }
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  const ptime = params.get('ptime');
  await a.setRemoteDescription(
    ptime ? { type: 'answer', sdp: withPtime(b.localDescription.sdp, ptime) } : b.localDescription,
  );
  call.receiver = await received;
  if (params.get('playout') === '1') {
    // Chromium decodes received audio (and so fills inbound-rtp totalSamplesReceived) only while
    // something plays it out, and WebRTC measures the level AFTER the output volume: a muted element
    // reports audioLevel 0. So this plays for real, into the rig's default sink `out` (which does not
    // feed the mic). It opens a playback stream of its own: CPU figures use the default (no playout).
    const el = document.createElement('audio');
    el.autoplay = true;
    el.srcObject = new MediaStream([call.receiver.track]);
    document.body.append(el);
    call.audioEl = el;
    await el.play().catch(() => {});
  }
  await new Promise((resolve, reject) => {
    const check = () => {
      if (a.connectionState === 'connected' && b.connectionState === 'connected') resolve();
      else if (a.connectionState === 'failed' || b.connectionState === 'failed')
        reject(new Error('ICE failed'));
    };
    a.onconnectionstatechange = check;
    b.onconnectionstatechange = check;
    check();
  });
  setState('in call');
}

// The answer's audio section with `a=ptime:<ms>` and `ptime=<ms>` in the Opus format parameters.
function withPtime(sdp, ms) {
  const lines = sdp.split('\r\n');
  const opus = lines.map((l) => /^a=rtpmap:(\d+) opus\//i.exec(l)).find(Boolean)?.[1];
  if (!opus) throw new Error('no Opus in the answer');
  const out = [];
  for (const l of lines) {
    if (l.startsWith('a=ptime:')) continue;
    out.push(l.startsWith(`a=fmtp:${opus} `) ? `${l};ptime=${ms}` : l);
    if (l.startsWith('m=audio')) out.push(`a=ptime:${ms}`);
  }
  return out.join('\r\n');
}

function trackState() {
  const t = call.track;
  if (!t) return null;
  return {
    id: t.id,
    label: t.label,
    readyState: t.readyState,
    enabled: t.enabled,
    muted: t.muted,
    settings: t.getSettings(),
  };
}

// The plain meeting's start: getUserMedia with the query's `constraints=<json>` (default
// `{audio: true}`), the track sent as it is.
// biome-ignore lint/correctness/noUnusedVariables: called by meeting.js and echo.js (classic scripts share globals)
async function captureAndConnect() {
  const params = new URLSearchParams(location.search);
  const constraints = params.has('constraints') ? JSON.parse(params.get('constraints')) : { audio: true };
  const stream = await navigator.mediaDevices.getUserMedia(constraints);
  const track = stream.getAudioTracks()[0];
  if (!track) throw new Error('getUserMedia returned no audio track');
  call.stream = stream;
  call.track = track;
  await connectLoopback(track, stream);
}

// Starts the call and installs the window test API (see the top of this file).
// biome-ignore lint/correctness/noUnusedVariables: called by meeting.js and webaudio.js (classic scripts share globals)
function startCall(title, start) {
  callTitle = title;
  window.ready = start().catch((e) => {
    call.error = e?.message ? `${e.name}: ${e.message}` : String(e);
    setState(`error: ${call.error}`);
    throw e;
  });
  window.ready.catch(() => {});

  window.mute = () => {
    if (call.track) call.track.enabled = false;
    setState('muted');
    return trackState();
  };
  window.unmute = () => {
    if (call.track) call.track.enabled = true;
    setState('in call');
    return trackState();
  };
  window.stopTrack = () => {
    if (call.track) call.track.stop();
    setState('track stopped');
    return trackState();
  };
  window.hangUp = () => {
    if (call.track) call.track.stop();
    for (const pc of call.pcs) pc.close();
    setState('hung up');
    return trackState();
  };

  window.stats = async () => {
    const out = {
      error: call.error,
      track: trackState(),
      inbound: null,
      outbound: null,
      at: performance.now(),
    };
    const [a, b] = call.pcs;
    if (b && b.connectionState !== 'closed') {
      for (const r of (await b.getStats()).values()) {
        if (r.type === 'inbound-rtp' && r.kind === 'audio') {
          out.inbound = {
            audioLevel: r.audioLevel ?? null,
            totalAudioEnergy: r.totalAudioEnergy ?? null,
            totalSamplesDuration: r.totalSamplesDuration ?? null,
            totalSamplesReceived: r.totalSamplesReceived ?? null,
            concealedSamples: r.concealedSamples ?? null,
            concealmentEvents: r.concealmentEvents ?? null,
            packetsReceived: r.packetsReceived ?? 0,
            bytesReceived: r.bytesReceived ?? 0,
          };
        }
      }
    }
    if (a && a.connectionState !== 'closed') {
      for (const r of (await a.getStats()).values()) {
        if (r.type === 'outbound-rtp' && r.kind === 'audio') {
          out.outbound = { packetsSent: r.packetsSent ?? 0, bytesSent: r.bytesSent ?? 0 };
        }
        if (r.type === 'media-source' && r.kind === 'audio') {
          out.source = {
            audioLevel: r.audioLevel ?? null,
            totalAudioEnergy: r.totalAudioEnergy ?? null,
            totalSamplesDuration: r.totalSamplesDuration ?? null,
            timestamp: r.timestamp ?? null,
          };
        }
      }
    }
    return out;
  };
}
