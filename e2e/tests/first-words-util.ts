// What release-first-words.spec.ts and its quick re-unmute bench share: the page's instrument (when the
// first words leave the sender, when the far end hears them) and the record streams on one source.
import type { AudioRig } from '../rig/audio-rig.ts';

/** The page's unmute time and the far end's first audible packet after it (page clock, ms). */
export const INSTRUMENT = `(() => {
  const unmute = window.unmute;
  window.__unmutedAt = null;
  window.unmute = () => { window.__unmutedAt = performance.now(); return unmute(); };
  // The sender's encoded frames (loopback.js encoded=1): silence encodes to a few bytes, the signal to
  // many. The first frame after the unmute above SPEECH_BYTES is when the first words leave.
  window.__frames = [];
  window.onEncodedFrame = (bytes, at) => {
    window.__frames.push([at, bytes]);
    if (window.__frames.length > 400) window.__frames.splice(0, 200);
  };
  window.__sent = (ms, minBytes) => new Promise((resolve) => {
    const t0 = performance.now();
    const poll = setInterval(() => {
      const at = window.__unmutedAt;
      if (at !== null) {
        const f = window.__frames.find(([t, b]) => t > at && b >= minBytes);
        if (f) { clearInterval(poll); resolve({ ms: f[0] - at, bytes: f[1], before: window.__frames.filter(([t]) => t < at && t > at - 100).map(([, b]) => b) }); return; }
      }
      if (performance.now() - t0 > ms) { clearInterval(poll); resolve(null); }
    }, 2);
  });
  window.__heard = (ms) => new Promise((resolve) => {
    const receiver = call.pcs[1].getReceivers()[0];
    const t0 = performance.now();
    const poll = setInterval(() => {
      const at = window.__unmutedAt;
      if (at !== null) {
        const after = performance.timeOrigin + at;
        for (const s of receiver.getSynchronizationSources()) {
          if ((s.audioLevel ?? 0) > 0.003 && s.timestamp > after) {
            clearInterval(poll);
            resolve(s.timestamp - after);
            return;
          }
        }
      }
      if (performance.now() - t0 > ms) { clearInterval(poll); resolve(null); }
    }, 2);
  });
})()`;

/** Record streams at the server on the source named `source`. */
export async function recordStreamsOn(rig: AudioRig, source: string): Promise<number> {
  const index = (await rig.pactl(['list', 'short', 'sources']))
    .split('\n')
    .map((l) => l.split('\t'))
    .find((f) => f[1] === source)?.[0];
  return (await rig.recordStreams()).filter((s) => String(s.source) === index).length;
}
