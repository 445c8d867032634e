// Options page: edits the settings object (shared/settings.ts) and shows what was stored.
import {
  choiceLabel,
  choiceValue,
  configuredLine,
  configuredMs,
  parseChoice,
} from '../shared/capture-latency.ts';
import { h } from '../shared/dom.ts';
import type { LatencyReply, LatencyRequest } from '../shared/messages/ui-latency.ts';
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

// ---- capture latency: through the background to micoff-host -------------------------------
const latencySelect = $<HTMLSelectElement>('latency-select');

function renderLatency(r: LatencyReply): void {
  showError('latency-error', r.error);
  $('latency-managed').hidden = !r.managed.managed;
  const current = r.managed.managed ? r.managed.capture_ms : r.status ? configuredMs(r.status) : null;
  latencySelect.value = choiceValue(current);
  // Not editable while managed, nor while the host cannot apply it.
  latencySelect.disabled = r.managed.managed || r.status === null;
  $('latency-configured').textContent = r.status
    ? `${r.status.server.kind} ${r.status.server.version ?? ''}: ${configuredLine(r.status)}`
    : 'micoff-host is not reachable: the capture latency cannot be read or set.';
  if (!r.managed.managed && r.managed.invalid) $('latency-configured').append(` (${r.managed.invalid})`);
  $('latency-result').textContent = r.set
    ? `${r.set.message}${r.set.needs_restart.length ? ` Restart needed: ${r.set.needs_restart.join(', ')}.` : ''}`
    : '';
}

const askLatency = (m: LatencyRequest) =>
  chrome.runtime
    .sendMessage<LatencyRequest, LatencyReply>(m)
    .then(renderLatency, (e: Error) =>
      showError('latency-error', `The background did not answer: ${e.message}`),
    );

latencySelect.addEventListener('change', () => {
  const ms = parseChoice(latencySelect.value);
  if (ms === undefined) return;
  latencySelect.disabled = true;
  $('latency-result').textContent = `Applying ${choiceLabel(ms)}…`;
  void askLatency({ type: 'micoff_latency_set', capture_ms: ms });
});
chrome.storage.onChanged.addListener((_c, area) => {
  if (area === 'managed') void askLatency({ type: 'micoff_latency_get' });
});
void askLatency({ type: 'micoff_latency_get' });
