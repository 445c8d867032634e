// The popup's copy of the host's history while a popup is open (the `history` subscription): the
// subscription's first event is the whole history (its `report` is null), each later one brings the
// one sample just taken, with its report. Pure.
import type { HistorySnapshot, HostEvent } from '../shared/protocol.ts';

type HistoryEvent = Extract<HostEvent, { type: 'history' }>;

export function nextHistory(prev: HistorySnapshot | null, e: HistoryEvent): HistorySnapshot {
  if (prev === null || e.report === null) return e.history;
  const from = e.history.now_ms - e.history.span_ms;
  return { ...e.history, points: [...prev.points, ...e.history.points].filter((p) => p.t_ms >= from) };
}
