// Shared setup of the browser end-to-end tests: the real backend on a free
// port with a fresh data directory and the built console (dist/), Debian's
// Chromium driven by playwright-core, and collectors that fail a test on any
// page error or console error/warning.
'use strict';

const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
// GCO_DIST: another built console (the wire benchmark's before figure).
const DIST = process.env.GCO_DIST ? path.resolve(process.env.GCO_DIST) : path.join(ROOT, 'dist');
const ARTIFACTS = path.join(__dirname, 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];
const REGIONS = ['us-east-1', 'eu-west-1'];

function log(...args) {
  console.log('[e2e]', ...args);
}

/**
 * The backend binary: GCO_CONSOLE_BIN when set, else the newer of the
 * release and debug builds in cargo's target directory (CARGO_TARGET_DIR,
 * as cargo reads it; an older one would test stale code), else built
 * (debug) now.
 */
function backendBinary() {
  if (process.env.GCO_CONSOLE_BIN) return process.env.GCO_CONSOLE_BIN;
  const target = path.resolve(ROOT, process.env.CARGO_TARGET_DIR || 'target');
  const candidates = [path.join(target, 'release', 'gco-console'), path.join(target, 'debug', 'gco-console')];
  const built = candidates.filter((c) => fs.existsSync(c));
  built.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (built.length) return built[0];
  log('no gco-console binary: running cargo build -q -p gco-console');
  const r = spawnSync('cargo', ['build', '-q', '-p', 'gco-console'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('cargo build -p gco-console failed');
  return candidates[1];
}

function checkDist() {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) {
    throw new Error(
      `the console is not built: ${path.join(DIST, 'index.html')} is missing. ` +
        'Run `bash scripts/build-web.sh` (or `bash scripts/test-e2e.sh`, which builds it).',
    );
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Polls `check` (sync or async) until it answers truthy, and resolves to
 * that answer; fails after `timeout` ms, saying what it waited for. The
 * tests' one way to wait for something outside a page (a process, a
 * server's answer) or for an async in-page answer; inside a page,
 * playwright's waitFor and waitForFunction.
 */
async function waitUntil(check, { timeout = 10_000, interval = 50, what = 'a condition' } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const answer = await check();
    if (answer) return answer;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Resolves once `child` has exited, or after `timeout` ms: whether it has. */
function exitOf(child, timeout) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeout);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Whether `url` answers at all (any status). */
const answers = (url) => fetch(url).then(() => true, () => false);

/**
 * Starts gco-console on a free port with a fresh --data-dir (and `args`,
 * e.g. a DynamoDB endpoint; `port`, one chosen beforehand). Resolves to { url, stop(), output() } once
 * /healthz answers.
 */
async function startBackend({ token, args = [], port: wanted, dist = DIST } = {}) {
  checkDist();
  const bin = backendBinary();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-data-'));
  const extra = [...args];
  if (token) {
    const file = path.join(dataDir, 'token');
    fs.writeFileSync(file, token, { mode: 0o600 });
    extra.push('--auth-token-file', file);
  }
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    // A caller that names the port (one it registered elsewhere) gets it.
    const port = wanted && attempt === 0 ? wanted : await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(
      bin,
      ['--addr', `127.0.0.1:${port}`, '--data-dir', path.join(dataDir, 'store'), '--regions', REGIONS.join(','), '--dist', dist, ...extra],
      { cwd: ROOT, env: { ...process.env, RUST_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let exited = null;
    // Never leave the server behind, even when the test process ends early.
    const killOnExit = () => child.kill('SIGKILL');
    const killOnSignal = (sig) => {
      child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(128 + (os.constants.signals[sig] || 1));
    };
    process.once('exit', killOnExit);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(sig, killOnSignal);
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      process.removeListener('exit', killOnExit);
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeListener(sig, killOnSignal);
    });
    const healthy = await waitUntil(
      async () => exited || (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)),
      { timeout: 30_000, interval: 100, what: `${url}/healthz` },
    ).catch(() => false);
    if (healthy && !exited) {
      const stop = async () => {
        if (!exited) {
          child.kill('SIGTERM');
          if (!(await exitOf(child, 5000))) child.kill('SIGKILL');
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
      };
      return { url, stop, output: () => output, binary: bin };
    }
    if (!exited) child.kill('SIGKILL');
    lastError = new Error(
      `gco-console did not become healthy on ${url} (${exited ? `exited ${JSON.stringify(exited)}` : 'timed out'}):\n${output}`,
    );
    if (!/in use|AddrInUse/i.test(output)) break;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  throw lastError;
}

async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (scripts/test-e2e.sh does it)`);
  }
  const { chromium } = require('playwright-core');
  // The default launch gives the browser a fresh temporary profile directory.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Chromium logs every failed response as a console error ("Failed to load
 * resource: the server responded with a status of 412 (Precondition
 * Failed)"). Those are allowed only for the statuses a test expects.
 */
function isAllowedNetworkLog(msg, allowedStatuses) {
  const m = /^Failed to load resource: the server responded with a status of (\d{3})\b/.exec(msg.text);
  return Boolean(m) && (allowedStatuses.includes(Number(m[1])) || isNameCheck(msg, Number(m[1])));
}

/**
 * The editor asks whether the name typed is taken (`GET
 * /api/endpoints/{name}`, web/src/editor/name_check.rs): a 404 is its
 * "no", on every page where a new endpoint's name is typed.
 */
function isNameCheck(msg, status) {
  const url = (msg.location && msg.location.url) || '';
  return status === 404 && /\/api\/endpoints\/[^/?]+$/.test(url) && msg.page === '/new';
}

/**
 * A new page whose page errors and console errors/warnings are collected
 * into page.problems (and every console line into page.consoleLog).
 */
async function newPage(context, { viewport } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await countPolls(page);
  if (viewport) await page.setViewportSize(viewport);
  page.problems = [];
  page.consoleLog = [];
  page.on('pageerror', (e) => page.problems.push({ type: 'pageerror', text: String(e && e.stack ? e.stack : e) }));
  page.on('console', (m) => {
    const entry = { type: m.type(), text: m.text(), location: m.location(), page: new URL(page.url()).pathname };
    page.consoleLog.push(entry);
    if (m.type() === 'error' || m.type() === 'warning') page.problems.push(entry);
  });
  page.on('crash', () => page.problems.push({ type: 'crash', text: 'the page crashed' }));
  return page;
}

/** The console's poll interval (`live::INTERVAL`). */
const POLL_MS = 3000;

/**
 * Counts the ticks of the page's poll timer (the console's setInterval of
 * `POLL_MS`: each is a poll, or one skipped while the tab may not ask) in
 * `window.__pollTicks`, from the page's first script on.
 */
async function countPolls(page) {
  await page.addInitScript((ms) => {
    window.__pollTicks = 0;
    const every = window.setInterval;
    window.setInterval = function (fn, delay, ...args) {
      if (delay !== ms || typeof fn !== 'function') return every.call(window, fn, delay, ...args);
      const tick = (...a) => {
        try {
          return fn(...a);
        } finally {
          window.__pollTicks++;
        }
      };
      return every.call(window, tick, delay, ...args);
    };
  }, POLL_MS);
}

/**
 * Waits for `n` more ticks of the page's poll timer (`countPolls`): what a
 * test that says something does not happen "for a while" waits for.
 */
async function waitForPolls(page, n) {
  const from = await page.evaluate(() => window.__pollTicks);
  await page.waitForFunction(([from, n]) => window.__pollTicks >= from + n, [from, n], { timeout: (n + 2) * POLL_MS });
}

/** Waits for the page to render `n` more frames. */
async function nextFrames(page, n = 2) {
  await page.evaluate(async (n) => {
    for (let i = 0; i < n; i++) await new Promise((r) => requestAnimationFrame(() => r()));
  }, n);
}

/** Fails when the page logged an error or warning (network 4xx logs of `allowedStatuses` aside). */
function assertNoProblems(page, allowedStatuses = []) {
  const bad = page.problems.filter((p) => !(p.type === 'error' && isAllowedNetworkLog(p, allowedStatuses)));
  assert.deepEqual(
    bad.map((p) => `${p.type}: ${p.text}${p.location && p.location.url ? ` (${p.location.url}:${p.location.lineNumber})` : ''}`),
    [],
    'no page errors and no console errors or warnings',
  );
}

/** Takes a screenshot (full page unless told) into tests/e2e/artifacts/ and prints its path. */
async function screenshot(page, name, { fullPage = true } = {}) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  log(`screenshot: ${path.relative(ROOT, file)}`);
  return file;
}

/** One API call from node. Resolves to { status, etag, body }. */
async function api(base, method, route, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const r = await fetch(base + route, init);
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, etag: r.headers.get('etag'), body: json };
}

/** A deploy request for a disaggregated endpoint with every block filled in. */
function fullRequest(name, overrides = {}) {
  return {
    endpoint_name: name,
    target_regions: ['us-east-1'],
    mooncake_mode: 'both',
    prefill_replicas: 2,
    decode_replicas: 3,
    mooncake_store: { enabled: true, global_segment_size: '4294967296', local_buffer_size: '2147483648', offload: 'cpu' },
    mooncake_transfer: { protocol: 'tcp' },
    mooncake_autoscaling: {
      enabled: true,
      prefill: { min_replicas: 1, max_replicas: 4 },
      decode: { min_replicas: 2, max_replicas: 6 },
    },
    ...overrides,
  };
}

/** Deploys through the API (not the UI); asserts 201. */
async function deployViaApi(base, request) {
  const r = await api(base, 'POST', '/api/endpoints', request);
  assert.equal(r.status, 201, `deploy ${request.endpoint_name}: ${JSON.stringify(r.body)}`);
  return r;
}

/** The editor field (the .field wrapper) of a diagnostic path. */
function field(page, diagPath) {
  return page.locator(`[data-path="${diagPath}"]`);
}

/** Texts of the messages shown at a field. */
async function messagesAt(page, diagPath) {
  return field(page, diagPath).locator('.messages li').allTextContents();
}

/** Opens /new and waits until the editor is rendered. */
async function openEditor(page, base, fragment = '') {
  await page.goto(`${base}/new${fragment}`);
  await page.getByLabel('Endpoint name', { exact: true }).waitFor();
}

/** The editor's request, as its JSON view shows it (back on the form after). */
async function editorRequest(page) {
  await page.getByRole('button', { name: 'JSON', exact: true }).click();
  const text = await page.getByLabel('Deploy request (JSON)').inputValue();
  await page.getByRole('button', { name: 'Form', exact: true }).click();
  return JSON.parse(text);
}

/**
 * Waits until the URL's share link holds the editor's current state (the
 * tab's draft, which follows every edit at once): the link follows edits
 * after a pause, and an earlier link may be there meanwhile.
 */
async function waitForCurrentShareUrl(page, timeout = 5000) {
  await waitUntil(
    () =>
      page.evaluate(async () => {
        if (!location.hash.startsWith('#s=')) return false;
        const base64 = location.hash.slice(3).replace(/-/g, '+').replace(/_/g, '/');
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
        return (await new Response(inflated).text()) === sessionStorage.getItem('gco-console-draft');
      }),
    { timeout, what: "the share link of the editor's state" },
  );
  return page.url();
}

/** Waits until the URL carries a share fragment that differs from `previous`. */
async function waitForShareUrl(page, previous = null, timeout = 5000) {
  await page.waitForFunction(
    (prev) => location.hash.startsWith('#s=') && location.hash !== prev,
    previous,
    { timeout },
  );
  return page.url();
}

/**
 * Registers before/after hooks that start one backend and one browser for a
 * test file. The returned object gets `base` and `browser` once started.
 */
function suite(options = {}) {
  const { before, after } = require('node:test');
  const env = { base: null, browser: null, backend: null };
  before(async () => {
    env.backend = await startBackend(options);
    env.base = env.backend.url;
    env.browser = await launchBrowser();
    log(`backend ${path.relative(ROOT, env.backend.binary)} at ${env.base}; ${env.browser.version ? `Chromium ${env.browser.version()}` : ''}`);
  });
  after(async () => {
    if (env.browser) await env.browser.close().catch(() => {});
    if (env.backend) {
      await env.backend.stop();
      const out = env.backend.output().trim();
      if (out) log(`backend output:\n${out}`);
    }
  });
  return env;
}

/** One DynamoDB call, as any other writer of the table makes it (dynalite checks the signature's shape, not its value). */
async function dynamo(endpoint, action, body) {
  const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const r = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `DynamoDB_20120810.${action}`,
      'X-Amz-Date': date,
      Authorization: `AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=00`,
    },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  assert.equal(r.status, 200, `${action}: ${text}`);
  return JSON.parse(text);
}

const TABLE = 'gco-inference-endpoints';

/**
 * A dynalite server on a free port and the console on it (a fresh table).
 * Resolves to { endpoint, backend, monitorWrite(name, region, status), stop() }.
 */
/**
 * [`suite`] on dynalite: before a file's tests, the backend on a fresh
 * dynalite table ([`startOnDynalite`]: `dynamo.backend`, `dynamo.monitorWrite`)
 * and a browser; both stopped after them.
 */
function suiteOnDynalite() {
  const { before, after } = require('node:test');
  const env = { dynamo: null, browser: null };
  before(async () => {
    env.dynamo = await startOnDynalite();
    env.browser = await launchBrowser();
  });
  after(async () => {
    if (env.browser) await env.browser.close().catch(() => {});
    if (env.dynamo) await env.dynamo.stop();
  });
  return env;
}

/** A DynamoDB attribute value of a JSON value, as GCO's writers store it. */
function dynamoAttr(v) {
  if (v === null) return { NULL: true };
  if (typeof v === 'boolean') return { BOOL: v };
  if (typeof v === 'number') return { N: String(v) };
  if (typeof v === 'string') return { S: v };
  if (Array.isArray(v)) return { L: v.map(dynamoAttr) };
  return { M: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, dynamoAttr(x)])) };
}

/** GCO's timestamp of `ms` since the epoch (now by default). */
const gcoTime = (ms = Date.now()) => new Date(ms).toISOString().replace('Z', '000+00:00');

/**
 * GCO's monitor writing one region's status to `table` at `endpoint`
 * (GCO_FACTS_NEWEST section 3), its sync `ago` ms in the past.
 */
async function writeStatus(endpoint, table, name, region, status, { ago = 0 } = {}) {
  await dynamo(endpoint, 'UpdateItem', {
    TableName: table,
    Key: { endpoint_name: { S: name } },
    UpdateExpression: 'SET region_status.#r = :s, updated_at = :u',
    ConditionExpression: 'attribute_exists(endpoint_name)',
    ExpressionAttributeNames: { '#r': region },
    ExpressionAttributeValues: { ':s': dynamoAttr({ last_sync: gcoTime(Date.now() - ago), ...status }), ':u': { S: gcoTime() } },
  });
}

/** Runs `fn` with a fresh page of `browser` (its own context), closed after. */
async function withPage(browser, fn, { context: options = {}, ...pageOptions } = {}) {
  const context = await browser.newContext(options);
  try {
    return await fn(await newPage(context, pageOptions), context);
  } finally {
    await context.close();
  }
}

async function startOnDynalite() {
  const port = await freePort();
  const dynalite = spawn(path.join(ROOT, 'node_modules', '.bin', 'dynalite'), ['--port', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntil(() => answers(endpoint), { what: 'dynalite to start' });
  const backend = await startBackend({
    args: ['--dynamodb-endpoint', endpoint, '--dynamodb-region', 'us-east-1', '--dynamodb-table', TABLE, '--create-table', '--history-table', 'off'],
  });
  /** GCO's monitor writing one region's status (GCO_FACTS_NEWEST section 3). */
  const monitorWrite = (name, region, status) => writeStatus(endpoint, TABLE, name, region, status);
  return {
    endpoint,
    backend,
    monitorWrite,
    async stop() {
      await backend.stop();
      dynalite.kill('SIGKILL');
    },
  };
}

/** moto's DynamoDB (it has transactions, which history needs), one request at a time. Resolves to { endpoint, stop() }. */
async function startMoto() {
  const port = await freePort();
  const script = path.join(ROOT, 'backend', 'tests', 'suite', 'common', 'moto_server.py');
  const child = spawn('python3', [script, String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitUntil(async () => exited || (await answers(endpoint)), { timeout: 30_000, what: 'moto to start' });
  if (exited) throw new Error(`moto did not start: python3 ${script} exited`);
  return { endpoint, stop: () => child.kill('SIGKILL') };
}

module.exports = {
  POLL_MS,
  waitForPolls,
  nextFrames,
  dynamo,
  dynamoAttr,
  gcoTime,
  writeStatus,
  withPage,
  startMoto,
  startOnDynalite,
  suite,
  suiteOnDynalite,
  ROOT,
  DIST,
  ARTIFACTS,
  REGIONS,
  log,
  waitUntil,
  exitOf,
  answers,
  startBackend,
  freePort,
  launchBrowser,
  newPage,
  assertNoProblems,
  screenshot,
  api,
  fullRequest,
  deployViaApi,
  field,
  messagesAt,
  openEditor,
  editorRequest,
  waitForShareUrl,
  waitForCurrentShareUrl,
};
