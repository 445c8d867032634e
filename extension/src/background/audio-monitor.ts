// The audio server as micoff-host sees it: one persistent `audio` subscription folded into a snapshot
// (server info + every stream). The host replays the current state on each subscribe (also after a
// reconnect), so the snapshot never needs a separate refresh.
import type { AudioSnapshot } from '../shared/messages/popup-background.ts';
import type { HostEvent } from '../shared/protocol.ts';
import type { HostClient } from './host-client.ts';

export const EMPTY_AUDIO: AudioSnapshot = Object.freeze({
  connected: false,
  server: null,
  reason: 'micoff-host not connected',
  streams: [],
});

/** Pure: the snapshot after one event. Streams stay sorted by (kind, index). */
export function applyAudioEvent(s: AudioSnapshot, e: HostEvent): AudioSnapshot {
  switch (e.type) {
    case 'audio_connected':
      return { connected: true, server: e.server, reason: null, streams: [] };
    case 'audio_disconnected':
      return { connected: false, server: null, reason: e.reason, streams: [] };
    case 'stream_added':
    case 'stream_changed': {
      const rest = s.streams.filter((x) => !(x.kind === e.stream.kind && x.index === e.stream.index));
      const streams = [...rest, e.stream].sort((a, b) => a.kind.localeCompare(b.kind) || a.index - b.index);
      return { ...s, streams };
    }
    case 'stream_removed':
      return { ...s, streams: s.streams.filter((x) => !(x.kind === e.kind && x.index === e.index)) };
    default:
      return s;
  }
}

export interface AudioMonitor {
  snapshot(): AudioSnapshot;
  onChange(listener: (s: AudioSnapshot) => void): () => void;
  stop(): Promise<void>;
}

export function createAudioMonitor(host: Pick<HostClient, 'subscribe' | 'onStatus'>): AudioMonitor {
  let state: AudioSnapshot = EMPTY_AUDIO;
  const listeners = new Set<(s: AudioSnapshot) => void>();
  const set = (next: AudioSnapshot) => {
    if (next === state) return;
    state = next;
    for (const l of listeners) l(state);
  };
  const sub = host.subscribe({ type: 'subscribe', topic: 'audio' }, (e) => set(applyAudioEvent(state, e)));
  const offStatus = host.onStatus((st) => {
    if (st.state !== 'connected' && state !== EMPTY_AUDIO) {
      set({ ...EMPTY_AUDIO, reason: st.message ?? EMPTY_AUDIO.reason });
    }
  });
  return {
    snapshot: () => state,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      offStatus();
      await sub.close();
    },
  };
}
