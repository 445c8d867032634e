// User settings: one object under one storage key, validated on every read so a hand-edited or older
// stored value can never hand the rest of the extension an out-of-range delay or a malformed origin.
//
// Readers: the options page (edits everything), the popup (flips the current site), the release-on-mute
// code (`releaseDelayFor`, `releaseEnabledFor`, `bluetoothPolicy`).

/** What to do when the capture source is a Bluetooth device (`device.bus = "bluetooth"`): releasing it
 * switches the headset between its call and music profiles (audible glitch, 1-2 s of silence). */
export type BluetoothPolicy = 'keep-open' | 'release';

export interface SiteOverride {
  /** false: never release on this site; true: release even if the global switch is off. */
  release: boolean;
}

export interface Settings {
  /** Master switch for release-on-mute. */
  releaseOnMute: boolean;
  /** Firefox's rule: release at max(0, delay - time since the device was last turned on). 0..10000. */
  releaseDelayMs: number;
  bluetoothPolicy: BluetoothPolicy;
  /** Keyed by origin (`https://meet.example.com`), see `normalizeOrigin`. */
  siteOverrides: Record<string, SiteOverride>;
  /** Follow the audio past the track (page/chromium/graph/audibility.ts): release a mic whose pipelines or senders
   * are muted although its track is enabled. Off: only the plain disabled-track rule. */
  followPaths: boolean;
  /** Per-site exceptions to `followPaths`, keyed by origin. */
  followPathsSites: Record<string, boolean>;
  /** Per site (by origin): while the microphone is released, keep sending silence (true) or not
   * (false). A site without an entry gets it where the page uses a far end that watches for packets
   * (`keepSendingFor`; docs/design/release-on-mute.md "Far ends that watch the packets"). */
  keepSendingSites: Record<string, boolean>;
  /** The grant keeper's interval (page/chromium/guards/grant-keeper.ts). Not on the options page: the
   * default is the one to ship; the e2e tests shorten it through the test surface. */
  grantKeepaliveMs: number;
}

export const SETTINGS_KEY = 'settings';
export const RELEASE_DELAY_MIN_MS = 0;
export const RELEASE_DELAY_MAX_MS = 10_000;
/** The grant keeper's interval (docs/design/release-on-mute.md "One-time grants"): at most 3 minutes,
 * so that a minute of Chromium's timer throttling in a hidden page still lands before its 5 minutes;
 * at least 5 s, so that no stored value turns the microphone on and off by the second. */
export const GRANT_KEEPALIVE_MIN_MS = 5_000;
export const GRANT_KEEPALIVE_MAX_MS = 180_000;

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  releaseOnMute: true,
  releaseDelayMs: 3000,
  bluetoothPolicy: 'keep-open',
  siteOverrides: {},
  followPaths: true,
  followPathsSites: {},
  keepSendingSites: {},
  grantKeepaliveMs: GRANT_KEEPALIVE_MAX_MS,
});

/** A delay from user input or storage; null when it is not a number in range (fractions round). */
export function parseReleaseDelay(input: unknown): number | null {
  const n = typeof input === 'string' && input.trim() !== '' ? Number(input) : input;
  if (typeof n !== 'number' || !Number.isFinite(n)) return null;
  const ms = Math.round(n);
  return ms >= RELEASE_DELAY_MIN_MS && ms <= RELEASE_DELAY_MAX_MS ? ms : null;
}

/** A grant keeper interval from storage or a test; null when it is not a number in range. */
export function parseGrantKeepalive(input: unknown): number | null {
  if (typeof input !== 'number' || !Number.isFinite(input)) return null;
  const ms = Math.round(input);
  return ms >= GRANT_KEEPALIVE_MIN_MS && ms <= GRANT_KEEPALIVE_MAX_MS ? ms : null;
}

/** `https://meet.example.com/abc?x` -> `https://meet.example.com`; a bare host means https. Only
 * http(s) origins: other schemes have no site to override. null when it is not one. */
export function normalizeOrigin(input: string): string | null {
  const text = input.trim();
  if (text === '') return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  try {
    const url = new URL(withScheme);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.hostname === '') return null;
    return url.origin;
  } catch {
    return null;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A stored origin -> boolean map, its keys normalized and anything else dropped. */
function siteBooleans(raw: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (!isRecord(raw)) return out;
  for (const [key, value] of Object.entries(raw)) {
    const origin = normalizeOrigin(key);
    if (origin && typeof value === 'boolean') out[origin] = value;
  }
  return out;
}

/** Anything (stored value, older version, junk) -> valid Settings. Invalid fields take their default;
 * invalid site entries are dropped. */
export function validateSettings(raw: unknown): Settings {
  const r = isRecord(raw) ? raw : {};
  const siteOverrides: Record<string, SiteOverride> = {};
  if (isRecord(r.siteOverrides)) {
    for (const [key, value] of Object.entries(r.siteOverrides)) {
      const origin = normalizeOrigin(key);
      if (origin && isRecord(value) && typeof value.release === 'boolean') {
        siteOverrides[origin] = { release: value.release };
      }
    }
  }
  return {
    followPaths: typeof r.followPaths === 'boolean' ? r.followPaths : DEFAULT_SETTINGS.followPaths,
    followPathsSites: siteBooleans(r.followPathsSites),
    keepSendingSites: siteBooleans(r.keepSendingSites),
    releaseOnMute: typeof r.releaseOnMute === 'boolean' ? r.releaseOnMute : DEFAULT_SETTINGS.releaseOnMute,
    releaseDelayMs: parseReleaseDelay(r.releaseDelayMs) ?? DEFAULT_SETTINGS.releaseDelayMs,
    bluetoothPolicy:
      r.bluetoothPolicy === 'keep-open' || r.bluetoothPolicy === 'release'
        ? r.bluetoothPolicy
        : DEFAULT_SETTINGS.bluetoothPolicy,
    siteOverrides,
    grantKeepaliveMs: parseGrantKeepalive(r.grantKeepaliveMs) ?? DEFAULT_SETTINGS.grantKeepaliveMs,
  };
}

/** Whether release-on-mute applies to a page of this origin (any URL is accepted). */
export function releaseEnabledFor(settings: Settings, urlOrOrigin: string): boolean {
  const origin = normalizeOrigin(urlOrOrigin);
  const override = origin ? settings.siteOverrides[origin] : undefined;
  return override ? override.release : settings.releaseOnMute;
}

/** Whether the pipeline/sender rules apply to a page of this origin (any URL is accepted). */
export function followPathsFor(settings: Settings, urlOrOrigin: string): boolean {
  const origin = normalizeOrigin(urlOrOrigin);
  const site = origin ? settings.followPathsSites[origin] : undefined;
  return site ?? settings.followPaths;
}

/** The per-site boolean maps of the settings. */
type SiteBooleans = 'followPathsSites' | 'keepSendingSites';

/** The settings patch that sets (or with null clears) one site's entry in the map `key`; null when
 * `urlOrOrigin` names no site. */
function siteBooleanPatch<K extends SiteBooleans>(
  settings: Settings,
  key: K,
  urlOrOrigin: string,
  value: boolean | null,
): Pick<Settings, K> | null {
  const origin = normalizeOrigin(urlOrOrigin);
  if (!origin) return null;
  const sites: Record<string, boolean> = { ...settings[key] };
  if (value === null) delete sites[origin];
  else sites[origin] = value;
  return { [key]: sites } as Pick<Settings, K>;
}

/** The settings patch that sets (or with null clears) one site's `followPaths` exception. */
export function followPathsSitePatch(
  settings: Settings,
  urlOrOrigin: string,
  value: boolean | null,
): Pick<Settings, 'followPathsSites'> | null {
  return siteBooleanPatch(settings, 'followPathsSites', urlOrOrigin, value);
}

/** This site's answer to "keep sending silence while released": true, false, or null (none: the page
 * world decides, keeping it where the page uses a far end that watches for packets). */
export function keepSendingFor(settings: Settings, urlOrOrigin: string): boolean | null {
  const origin = normalizeOrigin(urlOrOrigin);
  return (origin ? settings.keepSendingSites[origin] : undefined) ?? null;
}

/** The settings patch that sets (or with null clears) one site's keep-sending answer. */
export function keepSendingSitePatch(
  settings: Settings,
  urlOrOrigin: string,
  value: boolean | null,
): Pick<Settings, 'keepSendingSites'> | null {
  return siteBooleanPatch(settings, 'keepSendingSites', urlOrOrigin, value);
}

/** Whether to release a source, given whether the host reports it as Bluetooth. */
export function releaseAllowedForSource(settings: Settings, isBluetooth: boolean): boolean {
  return !isBluetooth || settings.bluetoothPolicy === 'release';
}

/** The part of chrome.storage.StorageArea the store uses (a Map-backed fake in tests). */
export interface StorageAreaLike {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
}

/** The part of chrome.storage.onChanged the store uses. */
export interface StorageChangedLike {
  addListener(cb: (changes: Record<string, { newValue?: unknown }>, areaName: string) => void): void;
}

export interface SettingsStore {
  get(): Promise<Settings>;
  /** Merge, validate, write; resolves to what was stored. Rejects on invalid explicit values. */
  update(patch: Partial<Settings>): Promise<Settings>;
  /** Set (or with null clear) one site's override. Rejects on an invalid origin. */
  setSiteOverride(urlOrOrigin: string, override: SiteOverride | null): Promise<Settings>;
  /** Called with the new settings whenever they change (from any page of the extension). */
  onChange(listener: (settings: Settings) => void): () => void;
}

export function createSettingsStore(
  area: StorageAreaLike,
  changed?: StorageChangedLike,
  areaName = 'sync',
): SettingsStore {
  const listeners = new Set<(s: Settings) => void>();
  changed?.addListener((changes, name) => {
    const change = changes[SETTINGS_KEY];
    if (name !== areaName || !change) return;
    const next = validateSettings(change.newValue);
    for (const l of listeners) l(next);
  });

  async function get(): Promise<Settings> {
    const stored = await area.get(SETTINGS_KEY);
    return validateSettings(stored[SETTINGS_KEY]);
  }

  async function write(next: Settings): Promise<Settings> {
    const valid = validateSettings(next);
    await area.set({ [SETTINGS_KEY]: valid });
    return valid;
  }

  return {
    get,
    async update(patch) {
      if (patch.releaseDelayMs !== undefined && parseReleaseDelay(patch.releaseDelayMs) === null) {
        throw new RangeError(
          `release delay must be ${RELEASE_DELAY_MIN_MS}-${RELEASE_DELAY_MAX_MS} ms, got ${patch.releaseDelayMs}`,
        );
      }
      if (patch.grantKeepaliveMs !== undefined && parseGrantKeepalive(patch.grantKeepaliveMs) === null) {
        throw new RangeError(
          `grant keepalive must be ${GRANT_KEEPALIVE_MIN_MS}-${GRANT_KEEPALIVE_MAX_MS} ms, got ${patch.grantKeepaliveMs}`,
        );
      }
      return write({ ...(await get()), ...patch });
    },
    async setSiteOverride(urlOrOrigin, override) {
      const origin = normalizeOrigin(urlOrOrigin);
      if (!origin) throw new TypeError(`not an http(s) site: ${urlOrOrigin}`);
      const current = await get();
      const siteOverrides = { ...current.siteOverrides };
      if (override) siteOverrides[origin] = { release: override.release };
      else delete siteOverrides[origin];
      return write({ ...current, siteOverrides });
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The store over the browser's storage.sync (available to every extension page and the background). */
export function browserSettingsStore(): SettingsStore {
  return createSettingsStore(chrome.storage.sync, chrome.storage.onChanged, 'sync');
}
