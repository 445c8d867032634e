// What a user does just before unmuting, so a released device reopens ahead of the unmute ("priming",
// docs/design/release-on-mute.md "First words"): the tab turning visible, the pointer reaching or
// pressing the control that unmuted last time, a key that unmuted last time. What counts is learned:
// an unmute within LEARN_WINDOW_MS of a press teaches that control or key, so clicks elsewhere never
// reopen the microphone. Pure apart from `IntentSource`, so the rules run under `node --test`.

/** Why a reopen ahead of an unmute is worth it now. */
export type IntentKind = 'visible' | 'pointer' | 'key';

/** An unmute this soon after a press teaches the press. */
export const LEARN_WINDOW_MS = 1500;
/** One signal per kind within this (the pointer moving over a control fires many events). */
export const SIGNAL_EVERY_MS = 1000;
/** How long a device reopened ahead of an unmute stays on while the page keeps it muted. */
export const PRIME_HOLD_MS = 5000;

const MODIFIERS = new Set(['Control', 'Alt', 'Shift', 'Meta']);

/** What the page world reads of an input event: the fields are read by the caller, in a try. */
export interface PointerSeen {
  /** The event's composed path, innermost first (elements only). */
  path: object[];
}
export interface KeySeen {
  /** `KeyboardEvent.code`, e.g. `KeyD`, `Space`. */
  code: string;
  /** `KeyboardEvent.key` of the key itself, e.g. `Control` for a modifier. */
  key: string;
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
  meta: boolean;
}

export interface IntentSource {
  now(): number;
  /** Is this node a control a user presses (a button, a link, a checkbox, a role=button)? */
  interactive(node: object): boolean;
}

/** `Ctrl+Shift+KeyD`: the modifiers held, then the key's code. */
export function comboOf(k: KeySeen): string {
  const mods = [k.ctrl && 'Ctrl', k.alt && 'Alt', k.shift && 'Shift', k.meta && 'Meta'].filter(Boolean);
  return [...mods, k.code].join('+');
}

/** The modifiers a combination needs, by their `KeyboardEvent.key` names. */
function modifiersOf(combo: string): string[] {
  const names: Record<string, string> = { Ctrl: 'Control', Alt: 'Alt', Shift: 'Shift', Meta: 'Meta' };
  return combo
    .split('+')
    .slice(0, -1)
    .map((m) => names[m] ?? m);
}

export interface Intent {
  /** The pointer went down on (or moved onto) `seen.path`; returns the signal it raised, if any. */
  pointer(kind: 'down' | 'over', seen: PointerSeen): IntentKind | null;
  /** A key went down. */
  key(seen: KeySeen): IntentKind | null;
  /** The document's visibility changed. */
  visibility(visible: boolean): IntentKind | null;
  /** A muted device is heard again: learn the press that came just before, if any. */
  noteUnmute(): void;
  /** What has been learned (the popup and tests read it). */
  learned(): { controls: number; keys: string[] };
}

export function createIntent(src: IntentSource): Intent {
  const controls = new WeakSet<object>();
  let controlCount = 0;
  const keys = new Set<string>();
  const leadingModifiers = new Set<string>();
  let lastPress: { at: number; control: object | null; combo: string | null } | null = null;
  const lastSignal = new Map<IntentKind, number>();

  function raise(kind: IntentKind): IntentKind | null {
    const now = src.now();
    const last = lastSignal.get(kind);
    if (last !== undefined && now - last < SIGNAL_EVERY_MS) return null;
    lastSignal.set(kind, now);
    return kind;
  }

  /** The innermost control on the path, else the innermost node. */
  function controlOn(path: object[]): object | null {
    for (const node of path) if (src.interactive(node)) return node;
    return path[0] ?? null;
  }

  return {
    pointer(kind, seen) {
      if (kind === 'down') lastPress = { at: src.now(), control: controlOn(seen.path), combo: null };
      return seen.path.some((n) => controls.has(n)) ? raise('pointer') : null;
    },
    key(seen) {
      const combo = comboOf(seen);
      if (!MODIFIERS.has(seen.key)) lastPress = { at: src.now(), control: null, combo };
      return keys.has(combo) || leadingModifiers.has(seen.key) ? raise('key') : null;
    },
    visibility(visible) {
      return visible ? raise('visible') : null;
    },
    noteUnmute() {
      const press = lastPress;
      if (!press || src.now() - press.at > LEARN_WINDOW_MS) return;
      lastPress = null;
      if (press.control && !controls.has(press.control)) {
        controls.add(press.control);
        controlCount++;
      }
      if (press.combo && !keys.has(press.combo)) {
        keys.add(press.combo);
        // The first modifier of a combination goes down before the key: prime on it.
        const first = modifiersOf(press.combo)[0];
        if (first) leadingModifiers.add(first);
      }
    },
    learned: () => ({ controls: controlCount, keys: [...keys] }),
  };
}
