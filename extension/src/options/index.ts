// Options page: edits the settings object (shared/settings.ts) and shows what was stored.
import { h } from '../shared/dom.ts';
import {
  type BluetoothPolicy,
  browserSettingsStore,
  normalizeOrigin,
  parseReleaseDelay,
  RELEASE_DELAY_MAX_MS,
  RELEASE_DELAY_MIN_MS,
  type Settings,
} from '../shared/settings.ts';

const store = browserSettingsStore();
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const releaseOnMute = $<HTMLInputElement>('release-on-mute');
const followPaths = $<HTMLInputElement>('follow-paths');
const delay = $<HTMLInputElement>('release-delay');

function showError(id: string, message: string | null): void {
  const el = $(id);
  el.textContent = message ?? '';
  el.hidden = message === null;
}

function render(s: Settings): void {
  releaseOnMute.checked = s.releaseOnMute;
  followPaths.checked = s.followPaths;
  if (document.activeElement !== delay) delay.value = String(s.releaseDelayMs);
  for (const r of document.querySelectorAll<HTMLInputElement>('input[name="bluetooth"]')) {
    r.checked = r.value === s.bluetoothPolicy;
  }
  const rows = Object.entries(s.siteOverrides)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([origin, o]) => {
      const remove = h('button', { type: 'button' }, 'Remove');
      remove.addEventListener('click', () => void save(store.setSiteOverride(origin, null)));
      return h(
        'tr',
        null,
        h('td', null, origin),
        h('td', null, o.release ? 'always' : 'never'),
        h('td', null, remove),
      );
    });
  $('sites').replaceChildren(
    ...(rows.length ? rows : [h('tr', null, h('td', { class: 'muted', colspan: '3' }, 'No overrides.'))]),
  );
}

async function save(p: Promise<Settings>): Promise<void> {
  try {
    render(await p);
    $('saved').textContent = `Saved ${new Date().toLocaleTimeString()}.`;
  } catch (err) {
    $('saved').textContent = `Not saved: ${(err as Error).message}`;
  }
}

releaseOnMute.addEventListener(
  'change',
  () => void save(store.update({ releaseOnMute: releaseOnMute.checked })),
);
followPaths.addEventListener('change', () => void save(store.update({ followPaths: followPaths.checked })));
delay.addEventListener('input', () => {
  const ms = parseReleaseDelay(delay.value);
  if (ms === null) {
    showError(
      'delay-error',
      `Enter a number of milliseconds from ${RELEASE_DELAY_MIN_MS} to ${RELEASE_DELAY_MAX_MS}.`,
    );
    return;
  }
  showError('delay-error', null);
  void save(store.update({ releaseDelayMs: ms }));
});
for (const r of document.querySelectorAll<HTMLInputElement>('input[name="bluetooth"]')) {
  r.addEventListener(
    'change',
    () => void save(store.update({ bluetoothPolicy: r.value as BluetoothPolicy })),
  );
}
$('site-add').addEventListener('click', () => {
  const input = $<HTMLInputElement>('site-input');
  const origin = normalizeOrigin(input.value);
  if (!origin) {
    showError('site-error', 'Enter a web site, e.g. meet.example.com or https://meet.example.com.');
    return;
  }
  showError('site-error', null);
  input.value = '';
  void save(store.setSiteOverride(origin, { release: $<HTMLSelectElement>('site-mode').value === 'true' }));
});

store.onChange(render);
void store.get().then(render);
