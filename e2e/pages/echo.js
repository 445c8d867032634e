// The echo-check call (echo.html): the microphone (constraints from `constraints=<json>`, default
// `{audio: true}`) goes out through loopback.js's pair; a far end sends a synthetic speech-like signal
// through a second pair, played out loud on the default sink (the rig points it at the sink whose
// monitor is the microphone). The mic's received copy is played by a muted element so Chromium decodes
// it (concealment statistics) without sending it to the speaker again. The far end's sending side is
// in a frame of its own (startFarEnd): to this page it is a remote party, as in a real call.
// Plain JS on purpose: no build step, nothing between the mic and the sender.

const far = { ctx: null, pcs: [], el: null };

/** 3 s of band-passed noise bursts (400 ms on, 200 ms off, a different band each), deterministic. */
function speechLike(ctx) {
  const rate = ctx.sampleRate;
  const buf = ctx.createBuffer(1, rate * 3, rate);
  const data = buf.getChannelData(0);
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff - 0.5;
  };
  const bands = [300, 700, 1200, 500, 2000];
  for (let burst = 0; burst < 5; burst++) {
    const start = Math.floor(burst * 0.6 * rate);
    const len = Math.floor(0.4 * rate);
    const f = bands[burst] / rate;
    // Two-pole resonator around the band's centre.
    const r = 0.97;
    const a1 = 2 * r * Math.cos(2 * Math.PI * f);
    const a2 = -r * r;
    let y1 = 0;
    let y2 = 0;
    for (let i = 0; i < len; i++) {
      const env = Math.min(1, i / (0.01 * rate), (len - i) / (0.01 * rate));
      const y = rand() * 0.05 + a1 * y1 + a2 * y2;
      y2 = y1;
      y1 = y;
      data[start + i] = env * y;
    }
  }
  let peak = 0;
  for (const v of data) peak = Math.max(peak, Math.abs(v));
  for (let i = 0; i < data.length; i++) data[i] = (0.5 * data[i]) / peak;
  return buf;
}

async function startFarEnd() {
  const ctx = new AudioContext();
  far.ctx = ctx;
  const src = ctx.createBufferSource();
  src.buffer = speechLike(ctx);
  src.loop = true;
  const dest = ctx.createMediaStreamDestination();
  src.connect(dest);
  src.start();
  // The far end's sender lives in a frame of its own: in a real call it is another machine, and a
  // sender in this page would be one of the page's own outbound streams, which micoff's echo guard
  // rightly does not count as the far end (a page looping its own microphone back).
  const frame = document.createElement('iframe');
  frame.hidden = true;
  document.body.append(frame);
  const a = new frame.contentWindow.RTCPeerConnection();
  const b = new RTCPeerConnection();
  far.pcs = [a, b];
  a.onicecandidate = (e) => e.candidate && b.addIceCandidate(e.candidate);
  b.onicecandidate = (e) => e.candidate && a.addIceCandidate(e.candidate);
  const received = new Promise((resolve) => {
    b.ontrack = (e) => resolve(e.track);
  });
  a.addTrack(dest.stream.getAudioTracks()[0], dest.stream);
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  const el = document.createElement('audio');
  el.autoplay = true;
  el.srcObject = new MediaStream([await received]);
  document.body.append(el);
  far.el = el;
  await el.play();
}

async function start() {
  await captureAndConnect();
  // Decode what the mic sends (concealment statistics), silently.
  const sink = document.createElement('audio');
  sink.muted = true;
  sink.autoplay = true;
  sink.srcObject = new MediaStream([call.receiver.track]);
  document.body.append(sink);
  await sink.play().catch(() => {});
  await startFarEnd();
}

/** The far end as this page hears it: its receiver's concealment and the playout statistics
 * (media-playout: the delay from the playout path to the device, as the audio device reports it, and
 * the samples it had to synthesize because the output asked for audio it did not have). */
window.farEndPlayout = async () => {
  const out = { playout: null, inbound: null };
  const b = far.pcs[1];
  if (!b || b.connectionState === 'closed') return out;
  for (const r of (await b.getStats()).values()) {
    if (r.type === 'media-playout') {
      out.playout = {
        totalPlayoutDelay: r.totalPlayoutDelay ?? null,
        totalSamplesCount: r.totalSamplesCount ?? null,
        synthesizedSamplesDuration: r.synthesizedSamplesDuration ?? null,
        synthesizedSamplesEvents: r.synthesizedSamplesEvents ?? null,
      };
    }
    if (r.type === 'inbound-rtp' && r.kind === 'audio') {
      out.inbound = {
        concealedSamples: r.concealedSamples ?? null,
        totalSamplesReceived: r.totalSamplesReceived ?? null,
      };
    }
  }
  return out;
};

window.farEnd = () => ({
  context: far.ctx?.state ?? null,
  playing: far.el ? !far.el.paused : false,
  constraints: call.track?.getConstraints() ?? null,
});

startCall('echo', start);

document.getElementById('mute').onclick = () => window.mute();
document.getElementById('unmute').onclick = () => window.unmute();
