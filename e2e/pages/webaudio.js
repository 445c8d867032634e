// WebAudio meeting: mic -> createMediaStreamSource -> gain -> MediaStreamAudioDestinationNode -> sender,
// through the loopback call of loopback.js. Same window API as meeting.js (ready, mute, unmute,
// stopTrack, hangUp, stats), plus `call.source`, `call.ctx`. With `playout=1` the received track plays
// in an <audio> element (for inbound levels).

async function start() {
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
  await connectLoopback(dest.stream.getAudioTracks()[0], dest.stream);
}

startCall('webaudio meeting', start);
