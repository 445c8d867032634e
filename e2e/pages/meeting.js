// A minimal meeting: getUserMedia({audio: true}) with the browser's default processing, sent through the
// loopback pair of RTCPeerConnections of loopback.js (which also holds the window test API).
// Query options: `playout=1` plays the received track in a muted <audio> element (needed for a received
// level, see loopback.js); `constraints=<json>` replaces `{audio: true}`.
// Plain JS on purpose: no build step, nothing between the mic and the sender.

async function start() {
  const params = new URLSearchParams(location.search);
  const constraints = params.has('constraints') ? JSON.parse(params.get('constraints')) : { audio: true };
  const stream = await navigator.mediaDevices.getUserMedia(constraints);
  const track = stream.getAudioTracks()[0];
  if (!track) throw new Error('getUserMedia returned no audio track');
  call.stream = stream;
  call.track = track;
  await connectLoopback(track, stream);
}

startCall('meeting', start);

document.getElementById('mute').onclick = () => window.mute();
document.getElementById('unmute').onclick = () => window.unmute();
document.getElementById('stop').onclick = () => window.stopTrack();
