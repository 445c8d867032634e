// Page-world side of the page <-> content channel (shared/messages/page-content.ts): JSON strings over
// the frame's secret channel (shared/messages/page-channel.ts), which page scripts can neither forge nor
// read.
// Until the content script hands over the site's config (it fetches it from the background once the
// frame captures), the defaults apply (the default delay, release on): a release always asks the
// background first, and a question left unanswered keeps the device open (UNANSWERED), so neither the
// defaults nor a stale config release what the settings keep open.
import { awaitChannel, captureNatives } from '../../shared/messages/page-channel.ts';
import type { GroupReport, PageToContent } from '../../shared/messages/page-content.ts';
import { parseContentMessage } from '../../shared/messages/page-content.ts';
import { type ReleaseConfig, UNANSWERED } from '../../shared/release-decision.ts';
import {
  DEFAULT_SETTINGS,
  GRANT_KEEPALIVE_MAX_MS,
  GRANT_KEEPALIVE_MIN_MS,
  RELEASE_DELAY_MAX_MS,
  RELEASE_DELAY_MIN_MS,
} from '../../shared/settings.ts';

export type { ReleaseConfig };

export interface PolicyAnswer {
  allow: boolean;
  reason: string | null;
}

export interface Bridge {
  config(): ReleaseConfig;
  onConfig(listener: () => void): void;
  /** The current groups of one realm (the top document or a frame patched from it). */
  report(realm: number, groups: GroupReport[]): void;
  /** Ask the background whether the source may be released (site switch, Bluetooth policy). */
  askPolicy(label: string): Promise<PolicyAnswer>;
  /** Every how many ms one realm wants the background's ticks (its capture watch reads in a hidden
   * tab), or null; the frame asks for them at the shortest period any realm wants. */
  ticks(realm: number, everyMs: number | null): void;
  /** One tick in `inMs`, besides the period (a read wanted sooner). */
  tickOnce(inMs: number): void;
  onTick(listener: () => void): void;
}

/** How long a release waits for the background's answer before the device is kept open (UNANSWERED).
 * The answer normally takes a few ms; a service worker woken from idle can take several hundred. */
const POLICY_TIMEOUT_MS = 2000;

export function createBridge(w: Window & typeof globalThis): Bridge {
  // Captured before page scripts run. The channel to content.js is open once content.js (which runs
  // right after page.js) hands over the frame's secret; what is sent before that is queued.
  const channel = awaitChannel(captureNatives(w));
  const stringify = JSON.stringify;
  const setTimer = w.setTimeout.bind(w);

  let config: ReleaseConfig = {
    delay_ms: DEFAULT_SETTINGS.releaseDelayMs,
    release: true,
    reason: null,
    keepalive_ms: DEFAULT_SETTINGS.grantKeepaliveMs,
  };
  const configListeners: (() => void)[] = [];
  const tickListeners: (() => void)[] = [];
  const ticking = new Map<number, number>();
  let ticksAsked = 0;
  const realms = new Map<number, GroupReport[]>();
  const pending = new Map<number, (a: PolicyAnswer) => void>();
  let nextQuery = 1;
  let lastSent = '';

  const send = (m: PageToContent) => channel.send(stringify(m));

  channel.onMessage((text) => {
    const msg = parseContentMessage(text);
    if (!msg) return;
    if (msg.type === 'config') {
      const delay = Math.round(msg.delay_ms) || 0;
      const delay_ms = Math.min(RELEASE_DELAY_MAX_MS, Math.max(RELEASE_DELAY_MIN_MS, delay));
      const keepalive = Math.round(msg.keepalive_ms ?? DEFAULT_SETTINGS.grantKeepaliveMs);
      const keepalive_ms = Math.min(GRANT_KEEPALIVE_MAX_MS, Math.max(GRANT_KEEPALIVE_MIN_MS, keepalive));
      config = {
        delay_ms,
        release: msg.release,
        reason: msg.reason,
        paths: msg.paths ?? true,
        keepalive_ms,
        keep_sending: msg.keep_sending ?? null,
      };
      for (const l of configListeners) l();
    } else if (msg.type === 'tick') {
      for (const l of tickListeners) l();
    } else {
      const resolve = pending.get(msg.query);
      pending.delete(msg.query);
      resolve?.({ allow: msg.allow, reason: msg.reason });
    }
  });
  send({ type: 'hello' });

  return {
    config: () => config,
    onConfig(listener) {
      configListeners.push(listener);
    },
    report(realm, groups) {
      realms.set(realm, groups);
      const all = [...realms.values()].flat();
      const text = stringify(all);
      if (text === lastSent) return;
      lastSent = text;
      send({ type: 'state', groups: all });
    },
    askPolicy(label) {
      const query = nextQuery++;
      return new Promise((resolve) => {
        pending.set(query, resolve);
        setTimer(() => {
          if (pending.delete(query)) resolve(UNANSWERED);
        }, POLICY_TIMEOUT_MS);
        send({ type: 'policy_query', query, label });
      });
    },
    ticks(realm, everyMs) {
      if (everyMs !== null) ticking.set(realm, everyMs);
      else ticking.delete(realm);
      const want = ticking.size > 0 ? Math.min(...ticking.values()) : 0;
      if (want === ticksAsked) return;
      ticksAsked = want;
      send({ type: 'ticks', every_ms: want });
    },
    tickOnce(inMs) {
      if (ticksAsked > 0) send({ type: 'tick_once', in_ms: inMs });
    },
    onTick(listener) {
      tickListeners.push(listener);
    },
  };
}
