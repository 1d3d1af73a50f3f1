#!/usr/bin/env node
// The audit view at scale (scripts/benchmarks.sh's `audit` part; not a
// test): a history table of ENTRIES entries (default 100,000) on dynalite,
// written as the console writes them (BatchWriteItem, 25 a call), read by
// the console through its index by time (`by_operation_time`):
//
//   - the API's first page (GET /api/history), unfiltered and with each
//     filter, REPEAT times each (median and 95th percentile);
//   - the console in Chromium: from a click on "History" in the header to
//     the first page's rows on screen, a filter's change to its rows, and a
//     cold load of /history (navigation start to rows), each REPEAT times.
//
//   GCO_CONSOLE_BIN=target/release/gco-console node scripts/bench_audit.cjs \
//     [--entries 100000] [--repeat 10]
//
// Prints one JSON line per figure (what: "audit"). The seeded table is kept
// in the temp directory (gco-bench-audit-<entries>) and copied per run.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('../tests/e2e/harness.cjs');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const ENTRIES = opt('entries', 100_000);
const REPEAT = opt('repeat', 10);
const HISTORY = 'gco-inference-endpoints-history';
const OPERATIONS = ['deploy', 'scale', 'scale', 'scale', 'set-topology', 'update-image', 'stop', 'start', 'configure-store', 'add-region', 'revert'];
const ENDPOINTS = 500;
const PEOPLE = 20;
const DAY_MS = 86_400_000;
// The entries span 100 days up to the start of this run.
const END = Date.parse('2026-12-07T00:00:00Z');

async function startDynalite(dir) {
  const port = await h.freePort();
  const child = spawn(path.join(h.ROOT, 'node_modules/.bin/dynalite'), ['--port', String(port), '--path', dir], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  await h.waitUntil(() => h.answers(endpoint), { what: 'dynalite to start' });
  return { endpoint, stop: () => child.kill('SIGKILL') };
}

const consoleOn = (endpoint) =>
  h.startBackend({ args: ['--dynamodb-endpoint', endpoint, '--dynamodb-region', 'us-east-1', '--create-table'] });

/** Entry `i` as the console's DynamoDB store writes it (`entry_item`). */
function entry(i) {
  const at = new Date(END - Math.floor(((ENTRIES - i) / ENTRIES) * 100 * DAY_MS));
  const micros = String(i % 1_000_000).padStart(6, '0');
  const iso = at.toISOString().slice(0, 19);
  const name = `bench-${String(i % ENDPOINTS).padStart(4, '0')}`;
  const record = (replicas) =>
    JSON.stringify({
      endpoint_name: name,
      desired_state: 'running',
      target_regions: ['us-east-1', 'eu-west-1'],
      namespace: 'gco-inference',
      spec: { image: 'vllm/vllm-openai:v0.27.1', replicas, gpu_count: 1, port: 8000, health_check_path: '/health' },
      created_at: '2026-08-01T00:00:00.000000+00:00',
      lifecycle_id: '0192f6c1-8f4e-7a7b-9c1d-2e3f4a5b6c7d',
    });
  const op = OPERATIONS[i % OPERATIONS.length];
  return {
    endpoint_name: { S: name },
    change_id: { S: `${iso}.${micros}Z.${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}` },
    at: { S: `${iso}.${micros}+00:00` },
    operation: { S: op },
    who: { S: `user-${String(i % PEOPLE).padStart(2, '0')}@example.com` },
    request_id: { S: `0192f6c1-8f4e-7a7b-9c1d-${String(i).padStart(12, '0')}` },
    ...(op === 'deploy' ? {} : { before: { S: record(1 + (i % 7)) } }),
    after: { S: record(2 + (i % 7)) },
  };
}

/** A dynalite directory holding the history table with ENTRIES entries. */
async function seeded() {
  const dir = path.join(os.tmpdir(), `gco-bench-audit-${ENTRIES}`);
  if (fs.existsSync(path.join(dir, 'done'))) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const db = await startDynalite(dir);
  const backend = await consoleOn(db.endpoint); // makes both tables, the index too
  await backend.stop();
  const started = Date.now();
  let next = 0;
  const writer = async () => {
    while (next < ENTRIES) {
      const from = next;
      next = Math.min(ENTRIES, next + 25);
      let items = Array.from({ length: next - from }, (_, k) => ({ PutRequest: { Item: entry(from + k) } }));
      while (items.length) {
        const out = await h.dynamo(db.endpoint, 'BatchWriteItem', { RequestItems: { [HISTORY]: items } });
        items = (out.UnprocessedItems && out.UnprocessedItems[HISTORY]) || [];
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, writer));
  db.stop();
  fs.writeFileSync(path.join(dir, 'done'), '');
  h.log(`seeded ${ENTRIES.toLocaleString()} entries in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return dir;
}

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { runs: sorted.length, p50_ms: q(0.5), p95_ms: q(0.95), max_ms: sorted[sorted.length - 1] };
}

const print = (line) => console.log(JSON.stringify({ what: 'audit', store: 'dynalite', entries: ENTRIES, ...line }));

async function main() {
  const source = await seeded();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-bench-audit-db-'));
  fs.cpSync(source, dir, { recursive: true });
  const db = await startDynalite(dir);
  const backend = await consoleOn(db.endpoint);
  const browser = await h.launchBrowser();
  try {
    const base = backend.url;
    // The API: the first page, and with each filter.
    const day = new Date(END - 10 * DAY_MS).toISOString().slice(0, 10);
    const cases = [
      ['no filter', ''],
      ['operation', '?operation=stop'],
      ['who', '?who=user-07%40example.com'],
      ['endpoint', '?endpoint=bench-0042'],
      ['search', '?q=bench-004'],
      ['one day', `?from=${day}&to=${day}`],
      ['who, rare (1 in 20) and operation (1 in 11)', '?who=user-07%40example.com&operation=stop'],
    ];
    for (const [name, query] of cases) {
      const times = [];
      let items = 0;
      let next = null;
      for (let i = 0; i < REPEAT + 1; i++) {
        const t0 = performance.now();
        const r = await fetch(`${base}/api/history${query}`);
        const body = await r.json();
        if (r.status !== 200) throw new Error(`${query}: ${r.status} ${JSON.stringify(body)}`);
        if (i > 0) times.push(performance.now() - t0); // the first warms the connection
        items = body.items.length;
        next = body.next !== null;
      }
      print({ case: `api: ${name}`, query, items, more: next, ...stats(times) });
    }
    // The console in Chromium.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByRole('link', { name: 'History', exact: true }).waitFor();
    const toHistory = [];
    const filter = [];
    for (let i = 0; i < REPEAT; i++) {
      toHistory.push(
        await page.evaluate(async () => {
          const rows = () => document.querySelectorAll('table.audit-table tbody tr').length;
          const t0 = performance.now();
          [...document.querySelectorAll('header a')].find((a) => a.textContent === 'History').click();
          while (rows() < 50) await new Promise((r) => requestAnimationFrame(r));
          return performance.now() - t0;
        }),
      );
      filter.push(
        await page.evaluate(async () => {
          const select = document.getElementById('audit-operation');
          const done = () => {
            const trs = [...document.querySelectorAll('table.audit-table tbody tr')];
            return trs.length >= 50 && trs.every((tr) => tr.dataset.operation === 'stop');
          };
          const t0 = performance.now();
          select.value = 'stop';
          select.dispatchEvent(new Event('change', { bubbles: true }));
          while (!done()) await new Promise((r) => requestAnimationFrame(r));
          return performance.now() - t0;
        }),
      );
      await page.getByRole('link', { name: 'Endpoints', exact: true }).click();
      await page.waitForURL(`${base}/`);
    }
    print({ case: 'console: History clicked to its first page', ...stats(toHistory) });
    print({ case: 'console: an operation chosen to its first page', ...stats(filter) });
    const cold = [];
    for (let i = 0; i < REPEAT; i++) {
      const fresh = await browser.newContext();
      const p = await fresh.newPage();
      await p.goto(`${base}/history`);
      await p.locator('table.audit-table tbody tr').nth(49).waitFor();
      cold.push(await p.evaluate(() => performance.now()));
      await fresh.close();
    }
    print({ case: 'console: cold load of /history (wasm included) to its first page', ...stats(cold) });
    fs.mkdirSync(h.ARTIFACTS, { recursive: true });
    await page.goto(`${base}/history?operation=scale&who=user-07%40example.com&from=${day}`);
    await page.locator('table.audit-table tbody tr').first().waitFor();
    await page.screenshot({ path: path.join(h.ARTIFACTS, 'audit-view-100k.png') });
    await context.close();
  } finally {
    await browser.close();
    await backend.stop();
    db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
