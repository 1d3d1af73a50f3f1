// Wire part of scripts/benchmarks.sh: what a browser downloads to open the
// console's editor (`/new`), counted by Chromium itself through its DevTools
// protocol (`Network.loadingFinished`'s encodedDataLength: the bytes
// received for each request, headers included), on the release backend and
// dist/ through the e2e harness. Measures only; no bound is asserted here.
//
//   cold      a fresh browser context (empty cache): every byte of the page,
//             its assets and its API answers until the network is idle
//   reload    the same tab reloaded: what the cache does not spare
//   throttled a fresh context on an emulated 10 Mbit/s link with 40 ms
//             round trips: time from navigation to the editor's first field
//
// Prints JSON lines {"what": "wire", "release": WIRE_LABEL, "name": ..., ...}. RUNS (default 3;
// QUICK=1: 1) throttled loads are made and the median kept. GCO_DIST names
// another built console to measure (an older release, for a before figure),
// GCO_CONSOLE_BIN another backend.
'use strict';

const h = require('../tests/e2e/harness.cjs');
const t = require('../tests/e2e/timing.cjs');

const RUNS = process.env.QUICK === '1' ? 1 : 3;
const LABEL = process.env.WIRE_LABEL || 'after';
const emit = (o) => console.log(JSON.stringify({ what: 'wire', release: LABEL, ...o }));

/** A tab whose every finished request's received bytes are counted. */
async function countingTab(browser, conditions) {
  const context = await browser.newContext();
  const page = await h.newPage(context);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  if (conditions) await cdp.send('Network.emulateNetworkConditions', { offline: false, ...conditions });
  const received = new Map();
  const urls = new Map();
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
  cdp.on('Network.loadingFinished', (e) => received.set(e.requestId, e.encodedDataLength));
  const take = () => {
    const parts = [...received].map(([id, bytes]) => ({ url: new URL(urls.get(id)).pathname, bytes }));
    received.clear();
    return { bytes: parts.reduce((sum, p) => sum + p.bytes, 0), parts };
  };
  return { context, page, take };
}

async function openEditor(page, base) {
  const started = Date.now();
  await page.goto(`${base}/new`);
  await page.getByLabel('Endpoint name', { exact: true }).waitFor({ timeout: 60_000 });
  const ready = Date.now() - started;
  await page.waitForLoadState('networkidle');
  return ready;
}

async function main() {
  const backend = await h.startBackend();
  const browser = await h.launchBrowser();
  try {
    const tab = await countingTab(browser);
    await openEditor(tab.page, backend.url);
    const cold = tab.take();
    emit({ name: 'cold_load_bytes', bytes: cold.bytes, parts: cold.parts });
    await tab.page.reload();
    await tab.page.getByLabel('Endpoint name', { exact: true }).waitFor();
    await tab.page.waitForLoadState('networkidle');
    const reload = tab.take();
    emit({ name: 'reload_bytes', bytes: reload.bytes, parts: reload.parts });
    await tab.context.close();

    const throttled = [];
    for (let i = 0; i < RUNS; i++) {
      const slow = await countingTab(browser, { latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 10e6 / 8 });
      throttled.push(await openEditor(slow.page, backend.url));
      await slow.context.close();
    }
    emit({ name: 'throttled_cold_to_editor', ms: t.median(throttled), samples: throttled, link: '10 Mbit/s, 40 ms' });
  } finally {
    await browser.close().catch(() => {});
    await backend.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
