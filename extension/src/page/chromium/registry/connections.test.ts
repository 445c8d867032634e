// What the far end plays: the loudest received audio source, the page's own streams coming back left
// out, closed connections forgotten.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Originals } from '../../common/originals.ts';
import { createConnections } from './connections.ts';

interface FakePc {
  state: RTCPeerConnectionState;
  receivers: { kind: string; sources: { source: number; audioLevel: number; timestamp: number }[] }[];
  outbound: number[];
}

function world(now = 1_000_000) {
  const o = {
    dateNow: () => now,
    kind: function (this: { kind: string }) {
      return this.kind;
    },
    getReceivers: function (this: FakePc) {
      return this.receivers;
    },
    receiverTrack: function (this: { kind: string }) {
      return { kind: this.kind };
    },
    syncSources: function (this: { sources: unknown[] }) {
      return this.sources;
    },
    connectionState: function (this: FakePc) {
      return this.state;
    },
    getStats: function (this: FakePc) {
      return Promise.resolve(
        new Map(this.outbound.map((ssrc, i) => [`o${i}`, { type: 'outbound-rtp', ssrc }])),
      );
    },
  } as unknown as Originals;
  return { now, c: createConnections(o) };
}

test('the loudest recent audio source of every connection; video and stale sources do not count', () => {
  const { now, c } = world();
  const pc: FakePc = {
    state: 'connected',
    receivers: [
      { kind: 'audio', sources: [{ source: 1, audioLevel: 0.05, timestamp: now - 20 }] },
      { kind: 'video', sources: [{ source: 2, audioLevel: 0.9, timestamp: now }] },
      { kind: 'audio', sources: [{ source: 3, audioLevel: 0.5, timestamp: now - 5000 }] },
    ],
    outbound: [],
  };
  c.add(pc as unknown as RTCPeerConnection);
  assert.equal(c.farEndLevel(), 0.05);
});

test("the page's own stream coming back is not the far end, once its SSRCs are read", async () => {
  const { now, c } = world();
  const sender: FakePc = { state: 'connected', receivers: [], outbound: [7] };
  const loopback: FakePc = {
    state: 'connected',
    receivers: [{ kind: 'audio', sources: [{ source: 7, audioLevel: 0.4, timestamp: now }] }],
    outbound: [],
  };
  c.add(sender as unknown as RTCPeerConnection);
  c.add(loopback as unknown as RTCPeerConnection);
  assert.equal(c.farEndLevel(), 0.4, 'not known yet');
  await c.refreshOwn();
  assert.equal(c.farEndLevel(), 0);
});

test('a closed connection is forgotten', () => {
  const { now, c } = world();
  const pc: FakePc = {
    state: 'closed',
    receivers: [{ kind: 'audio', sources: [{ source: 1, audioLevel: 0.3, timestamp: now }] }],
    outbound: [],
  };
  c.add(pc as unknown as RTCPeerConnection);
  assert.equal(c.farEndLevel(), 0);
  assert.equal(c.size(), 0);
});
