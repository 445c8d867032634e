// The phase of the call for the host's history (docs/design/popup-savings.md): all tabs' views folded
// into one, sent to micoff-host on every change and again to a host that (re)connects. These are the
// only messages the history costs the background while no popup is open: events, not ticks; the host
// samples the audio path itself. Each answer carries the CPU-seconds the host's releases saved so far.
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import { type MicState, micStateOf } from '../shared/mic-state.ts';
import type { Phase } from '../shared/protocol.ts';
import type { HostClient } from './host-client.ts';
import type { TabViews } from './popup-tab-views.ts';
import type { SavedCpu } from './saved-cpu.ts';

/** Highest first: an unmuted capture wins; released only when every muted device is. */
const RANK: Phase[] = ['capturing', 'muted', 'kept', 'released', 'idle'];

/** Each tab's microphone (shared/mic-state.ts) as a phase; Firefox's own release counts as released. */
const PHASE_OF: Record<MicState, Phase> = {
  on: 'capturing',
  muted_open: 'muted',
  kept: 'kept',
  released: 'released',
  released_by_firefox: 'released',
};

export function phaseOf(views: Iterable<TabReleaseView>): Phase {
  let phase: Phase = 'idle';
  for (const v of views) {
    const p = PHASE_OF[micStateOf(v)];
    if (RANK.indexOf(p) < RANK.indexOf(phase)) phase = p;
  }
  return phase;
}

export interface CallPhase {
  /** The phase now (all tabs). */
  current(): Phase;
}

export function startCallPhase(deps: {
  host: Pick<HostClient, 'request' | 'status' | 'onStatus'>;
  tabs: Pick<TabViews, 'all' | 'onChange'>;
  saved: Pick<SavedCpu, 'fromHost' | 'hostGone'>;
  log?: (m: string) => void;
}): CallPhase {
  let phase: Phase = phaseOf(deps.tabs.all().values());
  /** What the connected host was last told; a host starts at `idle`; null while none is connected. */
  let told: Phase | null = deps.host.status().state === 'connected' ? 'idle' : null;
  const tell = () => {
    if (told === null || told === phase) return;
    told = phase;
    deps.host.request({ type: 'phase', phase }).then(
      (r) => deps.saved.fromHost(r.saved_cpu_s),
      (err: Error) => deps.log?.(`phase ${phase} not taken by micoff-host: ${err.message}`),
    );
  };
  deps.tabs.onChange(() => {
    phase = phaseOf(deps.tabs.all().values());
    tell();
  });
  deps.host.onStatus((s) => {
    if (s.state === 'connected') {
      if (told !== null) return;
      told = 'idle';
      tell();
    } else if (told !== null) {
      told = null;
      deps.saved.hostGone();
    }
  });
  tell();
  return { current: () => phase };
}
