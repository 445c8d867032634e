// A minimal meeting: getUserMedia({audio: true}) with the browser's default processing, sent through the
// loopback pair of RTCPeerConnections of loopback.js (which also holds the window test API).
// Query options: `playout=1` plays the received track in a muted <audio> element (needed for a received
// level, see loopback.js); `constraints=<json>` replaces `{audio: true}`.
// Plain JS on purpose: no build step, nothing between the mic and the sender.

startCall('meeting', captureAndConnect);

document.getElementById('mute').onclick = () => window.mute();
document.getElementById('unmute').onclick = () => window.unmute();
document.getElementById('stop').onclick = () => window.stopTrack();

// A hotkey as meeting apps have them (Google Meet's Ctrl+D): the page's own keydown handler toggles the
// microphone. The e2e presses it as a person does, Ctrl first.
document.addEventListener('keydown', (e) => {
  if (!(e.ctrlKey && e.code === 'KeyD')) return;
  e.preventDefault();
  if (call.track?.enabled) window.mute();
  else window.unmute();
});
