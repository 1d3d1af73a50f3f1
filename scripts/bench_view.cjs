#!/usr/bin/env node
// Read cost against viewers (scripts/benchmarks.sh's `view` part; not a
// test): simulated viewers, each polling the list (`?limit=100`, with
// If-None-Match, as the console does) and one endpoint's page every 3 s,
// against a console on dynalite with N endpoints. A proxy between the
// console and dynalite counts the calls the table receives and the read
// units they consume (it asks the table for them: ReturnConsumedCapacity).
//
//   node scripts/bench_view.cjs --binary target/release/gco-console \
//     --label view --sizes 1000,10000 --viewers 1,10,50 --seconds 60 \
//     [--console-arg=--refresh-interval=3s ...]
//
// Prints one JSON line per run (what: "view").
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const BINARY = opt('binary', path.join(ROOT, 'target/release/gco-console'));
const LABEL = opt('label', 'view');
const SIZES = opt('sizes', '1000,10000').split(',').map(Number);
const VIEWERS = opt('viewers', '1,10,50').split(',').map(Number);
const SECONDS = Number(opt('seconds', '60'));
const PERIOD_MS = 3000;
const CONSOLE_ARGS = args.filter((a) => a.startsWith('--console-arg=')).map((a) => a.slice('--console-arg='.length));
const SEEDS = path.join(os.tmpdir(), 'gco-bench-view-seeds');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url, child, what) {
  for (let i = 0; i < 600; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      if (child.exitCode !== null) throw new Error(`${what} exited`);
      await sleep(50);
    }
  }
  throw new Error(`${what} did not start`);
}

/** dynalite on `dir`. */
async function startDynalite(dir) {
  const port = await freePort();
  const child = spawn(path.join(ROOT, 'node_modules/.bin/dynalite'), ['--port', String(port), '--path', dir], { stdio: 'ignore' });
  await waitFor(`http://127.0.0.1:${port}`, child, 'dynalite');
  return { port, stop: () => child.kill('SIGKILL') };
}

/** A proxy counting DynamoDB calls by target, and the read units they consume. */
async function startProxy(upstreamPort) {
  const counts = { calls: {}, readUnits: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] || '').split('.').pop();
      counts.calls[target] = (counts.calls[target] || 0) + 1;
      let body = Buffer.concat(chunks);
      if (['Scan', 'GetItem', 'Query'].includes(target)) {
        const parsed = JSON.parse(body.toString('utf8'));
        parsed.ReturnConsumedCapacity = 'TOTAL';
        body = Buffer.from(JSON.stringify(parsed));
      }
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const up = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers }, (upRes) => {
        const out = [];
        upRes.on('data', (c) => out.push(c));
        upRes.on('end', () => {
          const text = Buffer.concat(out);
          try {
            const consumed = JSON.parse(text.toString('utf8')).ConsumedCapacity;
            if (consumed && typeof consumed.CapacityUnits === 'number' && target !== 'PutItem' && target !== 'UpdateItem') {
              counts.readUnits += consumed.CapacityUnits;
            }
          } catch {
            // not JSON: passed on as it is
          }
          res.writeHead(upRes.statusCode, upRes.headers);
          res.end(text);
        });
      });
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      up.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port, counts, stop: () => server.close() };
}

async function startConsole(dynamoPort, extra = []) {
  const port = await freePort();
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-bench-view-dist-'));
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html>');
  const child = spawn(BINARY, [
    '--addr', `127.0.0.1:${port}`, '--dist', dist,
    '--dynamodb-endpoint', `http://127.0.0.1:${dynamoPort}`, '--dynamodb-region', 'us-east-1',
    '--create-table', '--history-table', 'off', '--regions', 'us-east-1', ...extra,
  ], { stdio: 'ignore', env: { ...process.env, RUST_LOG: 'warn' } });
  await waitFor(`http://127.0.0.1:${port}/healthz`, child, 'gco-console');
  /** Resident memory now, in MB (Linux). */
  const rss = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  };
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL'), rss };
}

/** A dynalite directory holding `n` endpoints, seeded once through the API. */
async function seeded(n) {
  const dir = path.join(SEEDS, String(n));
  if (fs.existsSync(path.join(dir, 'done'))) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const db = await startDynalite(dir);
  const c = await startConsole(db.port);
  const request = path.join(dir, '..', 'request.json');
  fs.writeFileSync(request, JSON.stringify({ image: 'vllm/vllm-openai:v0.27.1', target_regions: ['us-east-1'] }));
  const r = spawnSync('python3', [path.join(ROOT, 'scripts/bench_seed.py'), c.url, '0', String(n), request], { stdio: 'inherit' });
  c.stop();
  db.stop();
  if (r.status !== 0) throw new Error('seeding failed');
  fs.writeFileSync(path.join(dir, 'done'), '');
  return dir;
}

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function viewer(base, n, until, listTimes) {
  let listTag = null;
  let pageTag = null;
  const name = `bench-${String(Math.floor(Math.random() * n)).padStart(5, '0')}`;
  await sleep(Math.random() * PERIOD_MS);
  while (Date.now() < until) {
    const tick = Date.now();
    const started = performance.now();
    const list = await fetch(`${base}/api/endpoints?limit=100`, { headers: listTag ? { 'If-None-Match': listTag } : {} });
    await list.arrayBuffer();
    listTimes.push(performance.now() - started);
    listTag = list.headers.get('etag') || listTag;
    const page = await fetch(`${base}/api/endpoints/${name}`, { headers: pageTag ? { 'If-None-Match': pageTag } : {} });
    await page.arrayBuffer();
    pageTag = page.headers.get('etag') || pageTag;
    await sleep(Math.max(0, PERIOD_MS - (Date.now() - tick)));
  }
}

async function run(size, viewers) {
  const source = await seeded(size);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-bench-view-db-'));
  fs.cpSync(source, dir, { recursive: true });
  const db = await startDynalite(dir);
  const proxy = await startProxy(db.port);
  const c = await startConsole(proxy.port, CONSOLE_ARGS);
  try {
    await (await fetch(`${c.url}/api/endpoints?limit=100`)).arrayBuffer();
    await sleep(500);
    proxy.counts.calls = {};
    proxy.counts.readUnits = 0;
    const listTimes = [];
    const until = Date.now() + SECONDS * 1000;
    await Promise.all(Array.from({ length: viewers }, () => viewer(c.url, size, until, listTimes)));
    const minutes = SECONDS / 60;
    listTimes.sort((a, b) => a - b);
    return {
      what: 'view', label: LABEL, endpoints: size, viewers, seconds: SECONDS,
      scans_per_minute: (proxy.counts.calls.Scan || 0) / minutes,
      get_items_per_minute: (proxy.counts.calls.GetItem || 0) / minutes,
      read_units_per_minute: proxy.counts.readUnits / minutes,
      lists: listTimes.length,
      list_p50_ms: quantile(listTimes, 0.5),
      list_p99_ms: quantile(listTimes, 0.99),
      rss_mb: c.rss(),
    };
  } finally {
    c.stop();
    proxy.stop();
    db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

(async () => {
  for (const size of SIZES) {
    for (const viewers of VIEWERS) {
      console.log(JSON.stringify(await run(size, viewers)));
    }
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
