// A tiny element builder for the extension's own pages (never used in the page world). Text goes in
// through textContent only, so strings from the host or a site can never become markup.
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
  return el;
}

/** A read-only command with a copy button. */
export function commandBox(command: string): HTMLElement {
  const button = h('button', { type: 'button', class: 'copy', title: 'Copy to clipboard' }, 'Copy');
  button.addEventListener('click', () => {
    void navigator.clipboard.writeText(command).then(
      () => {
        button.textContent = 'Copied';
        setTimeout(() => {
          button.textContent = 'Copy';
        }, 1200);
      },
      () => {
        button.textContent = 'Select + Ctrl-C';
      },
    );
  });
  return h('div', { class: 'command' }, h('code', null, command), button);
}

export function fmtPct(v: number): string {
  return v >= 10 ? v.toFixed(0) : v.toFixed(1);
}
