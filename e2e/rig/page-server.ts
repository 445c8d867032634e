// Serves e2e/pages/ on 127.0.0.1 at a random port (127.0.0.1 is a secure context for getUserMedia).
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { PAGES_DIR } from './paths.ts';

/** Content types by file extension, for the rig's static servers. */
export const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** Answers `res` with the file at `path` (a URL path; `/` ends in index.html) under `root`, or 404
 * when it is not a file inside `root`. Nothing is cached: the specs change pages between runs. */
export function serveFileUnder(res: ServerResponse, root: string, path: string): void {
  const base = resolve(root);
  const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path));
  let ok = file.startsWith(base + sep);
  try {
    ok &&= statSync(file).isFile();
  } catch {
    ok = false;
  }
  if (!ok) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    return;
  }
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
    'cache-control': 'no-store',
  });
  createReadStream(file).pipe(res);
}

export interface PageServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  url(path: string): string;
  close(): Promise<void>;
}

export async function startPageServer(root = PAGES_DIR): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    serveFileUnder(res, root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
  });
  await new Promise<void>((r, j) => {
    server.once('error', j);
    server.listen(0, '127.0.0.1', () => r());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: (p) => `${origin}/${p.replace(/^\//, '')}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
