// Page-side snippets the path-mute specs (release-paths*.spec.ts) run on the loopback meeting
// (e2e/pages/meeting.html, whose `call` holds the track, the sender and the two connections).

// Page-side helpers, installed once per page: renegotiate the loopback (direction changes need it for
// media to stop and flow again) and find the sender's transceiver.
export const HELPERS = `
window.__renegotiate = async () => {
  const [a, b] = call.pcs;
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
};
window.__tx = () => call.pcs[0].getTransceivers().find((t) => t.sender === call.sender);
`;

/** Sender-level mute and unmute: the transceiver's direction, renegotiated (what mediasoup-client's
 * `pauseSending` does with zeroRtpOnPause). */
export const SENDER_INACTIVE = `(async () => { __tx().direction = 'inactive'; await __renegotiate(); })()`;
export const SENDER_SENDING = `(async () => { __tx().direction = 'sendrecv'; await __renegotiate(); })()`;

/** A noise-suppression-style WebAudio graph: mic -> highpass -> gain -> MediaStreamAudioDestinationNode,
 * whose track (window.__out) replaces the mic on the sender; mute = __out.enabled = false. The nodes are
 * kept in window.__nodes. */
export const PIPELINE = `(async () => {
  const ctx = new AudioContext();
  const src = ctx.createMediaStreamSource(call.stream);
  const hp = ctx.createBiquadFilter(); hp.type = 'highpass'; hp.frequency.value = 80;
  const gain = ctx.createGain();
  const dest = ctx.createMediaStreamDestination();
  src.connect(hp); hp.connect(gain); gain.connect(dest);
  window.__nodes = { ctx, src, hp, gain, dest };
  window.__out = dest.stream.getAudioTracks()[0];
  await ctx.resume();
  await call.sender.replaceTrack(window.__out);
})()`;

/** The insertable-streams meeting (e2e/pages/insertable.html): processor -> transform -> generator ->
 * sender; `link` says how the page wires the processor to the generator (see insertable.js). Its mute
 * disables the generator's track (call.out). */
export const insertablePage = (link: 'worker' | 'page' | 'own', playout = true) =>
  `insertable.html?${playout ? 'playout=1&' : ''}link=${link}`;
export const OUT_MUTE = 'call.out.enabled = false';
export const OUT_UNMUTE = 'call.out.enabled = true';
