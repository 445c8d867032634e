// Who may open the popup port: only micoff's own UI pages (the action popup, the options page), never
// a content script (which runs in a web page's renderer and shares it with the page's own scripts) and
// never another extension (runtime.onConnect only hears this extension's contexts; checked anyway).
// The check is on `port.sender`, which the browser fills in, not on anything the connecting side says.
// An extension page opened in a tab (a user, or a test, opening popup.html as a page) has `sender.tab`
// but still our URL: web pages cannot load or frame our pages (none is web-accessible), so the URL and
// the extension id are what decide.

/** The parts of `runtime.MessageSender` the check reads (Chrome and Firefox both fill id and url). */
export interface SenderLike {
  id?: string;
  url?: string;
  /** Chrome only: the sender's origin. */
  origin?: string;
  tab?: { id?: number };
  frameId?: number;
}

export interface ExtensionSelf {
  /** `runtime.id` */
  id: string;
  /** `runtime.getURL('')`: `chrome-extension://<id>/` or `moz-extension://<uuid>/` */
  baseUrl: string;
  /** The UI pages allowed to connect, relative to baseUrl (from the manifest: action popup, options). */
  pages: readonly string[];
}

/** The manifest's own UI pages, relative to `baseUrl` (the one home of their names is
 * manifests/base.json). Chrome's getManifest() gives them as written ("popup.html"); Firefox's gives
 * them resolved ("moz-extension://<uuid>/popup.html"). */
export function uiPagesOf(
  manifest: {
    action?: { default_popup?: string };
    browser_action?: { default_popup?: string };
    options_ui?: { page?: string };
  },
  baseUrl: string,
): string[] {
  const pages = [
    manifest.action?.default_popup,
    manifest.browser_action?.default_popup,
    manifest.options_ui?.page,
  ];
  return pages
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .map((p) => (p.startsWith(baseUrl) ? p.slice(baseUrl.length) : p.replace(/^\//, '')));
}

/** Null when the sender is one of our UI pages, else why it is refused. */
export function uiSenderRefusal(sender: SenderLike | undefined, self: ExtensionSelf): string | null {
  if (!sender) return 'no sender';
  if (sender.id !== self.id) return `another extension (${sender.id ?? 'no id'})`;
  const url = sender.url ?? '';
  if (!url.startsWith(self.baseUrl)) return `not an extension page (${url.slice(0, 100) || 'no url'})`;
  if (sender.origin !== undefined && `${sender.origin}/` !== self.baseUrl) {
    return `origin ${sender.origin.slice(0, 100)} is not ours`;
  }
  const page = url.slice(self.baseUrl.length).replace(/[?#].*$/, '');
  if (!self.pages.includes(page)) return `not a UI page (${page.slice(0, 100)})`;
  if (sender.frameId !== undefined && sender.frameId !== 0) return 'a subframe';
  return null;
}

/** This extension, as the browser running it names it (call from the background only). */
export function ownExtension(): ExtensionSelf {
  const baseUrl = chrome.runtime.getURL('');
  return { id: chrome.runtime.id, baseUrl, pages: uiPagesOf(chrome.runtime.getManifest(), baseUrl) };
}
