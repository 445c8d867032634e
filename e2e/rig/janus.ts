// A real SFU/MCU for the far end: Debian's Janus 1.1.2 (`janus`, `janus-demos`), started with its own
// configuration copied to a private folder, in a network namespace of its own joined to this one by a
// veth pair. Janus gathers no ICE candidate on a loopback interface, so it needs another one; the
// namespace gives it one without touching the machine's interfaces, and its HTTP transport the default
// port 8088 whatever else runs here. The demo pages (janus-demos, offline: their scripts come from
// Debian's libjs packages) are served on 127.0.0.1 (a secure context for getUserMedia) with a
// `settings.js` that points janus.js at this Janus. Docs: docs/test-rig.md#janus.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTENT_TYPES, serveFileUnder } from './page-server.ts';
import { PAGES_DIR } from './paths.ts';
import { assertAlive, type Child, RigError, run, startChild, stopChild, waitFor, which } from './proc.ts';

const JANUS = '/usr/bin/janus';
const JANUS_CONF = '/etc/janus';
export const JANUS_DEMOS = '/usr/share/janus/demos';
/** The plugins and transport the specs use; every other one is disabled (faster start, no ports). */
const PLUGINS = ['libjanus_audiobridge.so', 'libjanus_videoroom.so'];
const TRANSPORTS = ['libjanus_http.so'];
const HTTP_PORT = 8088;

/** Why Janus cannot run here, or null (for `need`, e2e/rig/needs.ts). */
export function janusMissing(): string | null {
  if (!existsSync(JANUS)) return 'Janus is not installed (apt: janus janus-demos; scripts/ensure-deps.sh)';
  if (!existsSync(join(JANUS_DEMOS, 'javascript', 'janus-gateway', 'janus.js')))
    return 'janus-demos (janus.js) is not installed';
  if (!which('ip')) return 'iproute2 (`ip`) is not installed';
  if (process.getuid?.() !== 0) return 'a network namespace needs root';
  return null;
}

export interface Janus {
  /** janus.js's `server`: `http://<address>:8088/janus`. */
  readonly server: string;
  /** The demo pages on 127.0.0.1, `settings.js` pointing at this Janus: `http://127.0.0.1:<port>`. */
  readonly demos: string;
  readonly logFile: string;
  /** Janus's log so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Every option of a libconfig `key = value` line, commented out or not, in `section`, set to `value`. */
export function setOption(conf: string, section: string, key: string, value: string): string {
  const start = conf.search(new RegExp(`^${section}:\\s*\\{`, 'm'));
  if (start < 0) throw new Error(`janus.jcfg: no section ${section}`);
  const end = conf.indexOf('\n}', start);
  const body = conf.slice(start, end);
  const line = new RegExp(`^(\\s*)#?\\s*${key}\\s*=.*$`, 'm');
  const next = line.test(body)
    ? body.replace(line, `$1${key} = ${value}`)
    : body.replace(/\{/, `{\n\t${key} = ${value}`);
  return conf.slice(0, start) + next + conf.slice(end);
}

/** janus.jcfg for the private instance: its configuration folder, the other plugins and transports
 * off, ICE on the namespace's veth only, the no-media timer at Janus's default (1 s) said out loud. */
export function janusConfig(original: string, o: { configs: string; iface: string }): string {
  const soNames = (dir: string, keep: string[]) => {
    const all = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.so')) : [];
    return all.filter((f) => !keep.includes(f)).join(',');
  };
  let c = original;
  c = setOption(c, 'general', 'configs_folder', JSON.stringify(o.configs));
  c = setOption(c, 'media', 'no_media_timer', '1');
  c = setOption(c, 'nat', 'ice_enforce_list', JSON.stringify(o.iface));
  c = setOption(
    c,
    'plugins',
    'disable',
    JSON.stringify(soNames(pluginDir(original, 'plugins_folder'), PLUGINS)),
  );
  c = setOption(
    c,
    'transports',
    'disable',
    JSON.stringify(soNames(pluginDir(original, 'transports_folder'), TRANSPORTS)),
  );
  return c;
}

function pluginDir(conf: string, key: string): string {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]+)"`, 'm').exec(conf);
  return m?.[1] ?? '';
}

/** Starts Janus in a namespace of its own and the demo pages' server. */
export async function startJanus(): Promise<Janus> {
  const missing = janusMissing();
  if (missing) throw new RigError('janus', missing);
  const dir = mkdtempSync(join(tmpdir(), 'micoff-janus-'));
  // One namespace and /30 per rig: the number from this process (parallel workers differ).
  const n = (process.pid % 200) + 20;
  const ns = `micoff-janus-${n}`;
  const outer = `mjo${n}`;
  const inner = `mji${n}`;
  const [outerIp, innerIp] = [`198.18.${n}.1`, `198.18.${n}.2`];
  const ip = async (...args: string[]) => {
    const r = await run('ip', args);
    if (r.code !== 0) throw new RigError('janus', `ip ${args.join(' ')}: ${r.stderr.trim()}`);
  };
  const teardown = async () => {
    await run('ip', ['netns', 'del', ns]); // takes the veth pair with it
    await run('ip', ['link', 'del', outer]);
  };
  await teardown(); // a leftover of a rig killed hard
  let janus: Child | undefined;
  let pagesClose: (() => Promise<void>) | undefined;
  try {
    await ip('netns', 'add', ns);
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    await ip('link', 'set', inner, 'netns', ns);
    await ip('addr', 'add', `${outerIp}/30`, 'dev', outer);
    await ip('link', 'set', outer, 'up');
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${innerIp}/30`, 'dev', inner);
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');

    const configs = join(dir, 'conf');
    mkdirSync(configs);
    for (const f of [
      'janus.plugin.audiobridge.jcfg',
      'janus.plugin.videoroom.jcfg',
      'janus.transport.http.jcfg',
    ])
      copyFileSync(join(JANUS_CONF, f), join(configs, f));
    const conf = janusConfig(readFileSync(join(JANUS_CONF, 'janus.jcfg'), 'utf8'), { configs, iface: inner });
    writeFileSync(join(configs, 'janus.jcfg'), conf);
    const logFile = join(dir, 'janus.log');
    janus = startChild(
      'janus',
      'ip',
      [
        'netns',
        'exec',
        ns,
        JANUS,
        `--config=${join(configs, 'janus.jcfg')}`,
        `--configs-folder=${configs}`,
        `--log-file=${logFile}`,
        '--disable-colors',
      ],
      join(dir, 'janus.out'),
    );
    const server = `http://${innerIp}:${HTTP_PORT}/janus`;
    const j = janus;
    await waitFor(
      'Janus answering on its HTTP transport',
      async () =>
        (await fetch(`${server}/info`)
          .then((r) => r.ok)
          .catch(() => false)) || null,
      { timeoutMs: 20_000, intervalMs: 200, check: () => assertAlive(j) },
    );
    const pages = await serveDemos(server);
    pagesClose = pages.close;
    return {
      server,
      demos: pages.origin,
      logFile,
      log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
      stop: async () => {
        await pages.close();
        if (janus) await stopChild(janus);
        await teardown();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await pagesClose?.();
    if (janus) await stopChild(janus);
    await teardown();
    throw e;
  }
}

/** The page micoff's specs drive (e2e/pages/janus-call.html: janus.js, audio only), on the demos'
 * origin so that it loads Debian's janus.js from the same `javascript` folder. */
export const JANUS_CALL_PAGE = '/micoff/janus-call.html';

/** The demos folder on 127.0.0.1 (its `javascript` link into Debian's /usr/share/javascript followed),
 * `settings.js` replaced by one naming `server`, and e2e/pages/janus-call.* under /micoff/. */
async function serveDemos(server: string): Promise<{ origin: string; close(): Promise<void> }> {
  const settings = `var server = ${JSON.stringify(server)};\nvar iceServers = null;\n`;
  const http = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/settings.js') {
      res.writeHead(200, { 'content-type': CONTENT_TYPES['.js'] as string }).end(settings);
      return;
    }
    const ours = path.startsWith('/micoff/janus-call.');
    if (ours) serveFileUnder(res, PAGES_DIR, path.slice('/micoff'.length));
    else serveFileUnder(res, JANUS_DEMOS, path);
  });
  await new Promise<void>((r, j) => {
    http.once('error', j);
    http.listen(0, '127.0.0.1', () => r());
  });
  const { port } = http.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
