// WebAudio meeting: mic -> createMediaStreamSource -> gain -> MediaStreamAudioDestinationNode -> sender.
// Same window API as meeting.js (ready, mute, unmute, stopTrack, hangUp, stats), plus `call.source`,
// `call.ctx`. With `playout=1` the received track plays in an <audio> element (for inbound levels).

const stateEl = document.getElementById('state');
const call = { stream: null, track: null, sender: null, receiver: null, pcs: [], error: null };

function setState(s) {
  stateEl.textContent = s;
  document.title = `webaudio meeting: ${s}`;
}

async function start() {
  const params = new URLSearchParams(location.search);
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const track = stream.getAudioTracks()[0];
  call.stream = stream;
  call.track = track;
  const ctx = new AudioContext();
  await ctx.resume().catch(() => {});
  const source = ctx.createMediaStreamSource(stream);
  const gain = ctx.createGain();
  gain.gain.value = 1;
  const dest = ctx.createMediaStreamDestination();
  source.connect(gain).connect(dest);
  Object.assign(call, { ctx, source, gain, dest });

  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  call.pcs = [a, b];
  a.onicecandidate = (e) => e.candidate && b.addIceCandidate(e.candidate);
  b.onicecandidate = (e) => e.candidate && a.addIceCandidate(e.candidate);
  const received = new Promise((resolve) => {
    b.ontrack = (e) => resolve(e.receiver);
  });
  call.sender = a.addTrack(dest.stream.getAudioTracks()[0], dest.stream);
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  call.receiver = await received;
  if (params.get('playout') === '1') {
    const el = document.createElement('audio');
    el.autoplay = true;
    el.srcObject = new MediaStream([call.receiver.track]);
    document.body.append(el);
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

window.ready = start().catch((e) => {
  call.error = String(e?.message ? `${e.name}: ${e.message}` : e);
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
          packetsReceived: r.packetsReceived ?? 0,
          bytesReceived: r.bytesReceived ?? 0,
        };
      }
    }
  }
  if (a && a.connectionState !== 'closed') {
    for (const r of (await a.getStats()).values()) {
      if (r.type === 'outbound-rtp' && r.kind === 'audio')
        out.outbound = { packetsSent: r.packetsSent ?? 0, bytesSent: r.bytesSent ?? 0 };
      if (r.type === 'media-source' && r.kind === 'audio') {
        out.source = { audioLevel: r.audioLevel ?? null, totalAudioEnergy: r.totalAudioEnergy ?? null };
      }
    }
  }
  return out;
};
