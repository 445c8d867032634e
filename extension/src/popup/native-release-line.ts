// The popup's line about Firefox's own release (Firefox build), "Firefox's part" of a muted call: in
// effect or not, as the background judged it at the audio server (background/native-release.ts), and
// when it is not, the command that switches it on with micoff's delay, copyable like the doctor's fix
// commands. micoff's own part has the line after it (quiet-part-line.ts).
import { commandBox, h } from '../shared/dom.ts';
import type {
  NativeReleaseFinding,
  NativeReleaseVerdict,
  NativeReleaseView,
} from '../shared/messages/popup-background.ts';

export interface NativeReleaseLine {
  /** 'ok' in effect, 'warn' not in effect (or later than micoff's delay), '' otherwise. */
  tone: 'ok' | 'warn' | '';
  text: string;
  /** The command to show, when one would fix what the line says. */
  command: string | null;
  /** The finding the line reports (this mute's or the last one's), null when none yet. */
  finding: NativeReleaseFinding['state'] | null;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** When the release came: Firefox counts its delay from when the device was last turned on, so a
 * microphone on for longer than that is released at the mute itself. */
const afterMute = (ms: number) => (ms < 50 ? 'as you muted' : `${secs(ms)} after the mute`);

function findingLine(f: NativeReleaseFinding, v: NativeReleaseView, earlier: boolean): NativeReleaseLine {
  const when = earlier ? 'At the last mute, ' : '';
  const delay = `micoff's release delay is ${secs(v.delay_ms)}`;
  if (f.state === 'in_effect' && !f.late) {
    return {
      tone: 'ok',
      text: `${when}Firefox released the microphone ${afterMute(f.after_ms)}: its own release is in effect.`,
      command: null,
      finding: f.state,
    };
  }
  if (f.state === 'in_effect') {
    return {
      tone: 'warn',
      text: `${when}Firefox released the microphone only ${secs(f.after_ms)} after the mute (${delay}): Firefox's own delay is longer. To give Firefox micoff's delay, run this and restart Firefox:`,
      command: v.command,
      finding: f.state,
    };
  }
  return {
    tone: 'warn',
    text: `${when}Firefox's own release is not in effect: the microphone was still open at the audio server ${secs(f.open_ms)} after the mute (${delay}). To switch it on, run this and restart Firefox:`,
    command: v.command,
    finding: f.state,
  };
}

function currentLine(n: NativeReleaseVerdict): NativeReleaseLine | null {
  switch (n.state) {
    case 'pending':
      return {
        tone: '',
        text: "checking at the audio server whether Firefox's own release closes the microphone…",
        command: null,
        finding: null,
      };
    case 'unknown':
      return {
        tone: '',
        text: `Firefox's own release: cannot tell at this mute (${n.why}).`,
        command: null,
        finding: null,
      };
    default:
      return null;
  }
}

/** What the popup says; the current mute's finding first, else the last one, else what is going on.
 * `serverSeen`: micoff-host sees the audio server (the check needs it). */
export function nativeReleaseLine(v: NativeReleaseView, serverSeen = true): NativeReleaseLine {
  const n = v.now;
  if (n.state === 'in_effect' || n.state === 'not_in_effect') return findingLine(n, v, false);
  const current = currentLine(n);
  if (v.last) {
    const last = findingLine(v.last, v, true);
    return current ? { ...last, text: `${current.text} ${last.text}` } : last;
  }
  return (
    current ?? {
      tone: '',
      text: serverSeen
        ? "Firefox's own release of a muted microphone is checked at the audio server at the next mute."
        : "Firefox's own release of a muted microphone is checked at the audio server, which needs micoff-host.",
      command: null,
      finding: null,
    }
  );
}

export function nativeReleaseNodes(v: NativeReleaseView, serverSeen = true): HTMLDivElement {
  const line = nativeReleaseLine(v, serverSeen);
  return h(
    'div',
    {
      id: 'tab-native-release',
      class: line.tone === 'warn' ? 'notice' : undefined,
      'data-state': v.now.state,
      'data-finding': line.finding ?? undefined,
    },
    h('b', null, "Firefox's part: "),
    line.text,
    line.command ? commandBox(line.command) : null,
  );
}
