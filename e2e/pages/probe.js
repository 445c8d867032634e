// Forges micoff's page -> content events (the page world's reports and release questions) and reads the
// content -> page answers, as any page script can: `await probe(labels)` claims to capture from every
// label, asks about each (all at once), and returns { label: answer | null } (null: no answer within
// 1.5 s).
// The event names micoff used before the secret channel (readable in page.js by any page); since then the
// channel's names carry a per-frame secret and these reach nothing.
const PAGE_EVENT = 'micoff:page';
const CONTENT_EVENT = 'micoff:content';

window.probe = async (labels) => {
  const pending = new Map();
  const onContent = (e) => {
    let m;
    try {
      m = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (m?.type === 'policy' && pending.has(m.query))
      pending.get(m.query)({ allow: m.allow, reason: m.reason });
  };
  window.addEventListener(CONTENT_EVENT, onContent);
  const send = (m) => window.dispatchEvent(new CustomEvent(PAGE_EVENT, { detail: JSON.stringify(m) }));
  const now = Date.now();
  send({
    type: 'state',
    groups: labels.map((label, i) => ({
      id: `9.${i}`,
      state: 'capturing',
      since_ms: now,
      reason: null,
      label,
      tracks: 1,
      enabled: 1,
    })),
  });
  let query = 900_000 + Math.floor(Math.random() * 1000) * 100;
  const asked = labels.map((label) => {
    const q = query++;
    return new Promise((resolve) => {
      pending.set(q, resolve);
      setTimeout(() => resolve(null), 1500);
      send({ type: 'policy_query', query: q, label });
    });
  });
  const answers = Object.fromEntries((await Promise.all(asked)).map((a, i) => [labels[i], a]));
  window.removeEventListener(CONTENT_EVENT, onContent);
  return answers;
};

const frame = new URLSearchParams(location.search).get('frame');
if (frame) {
  const f = document.createElement('iframe');
  f.src = frame;
  document.body.append(f);
}
