// Browser part of scripts/benchmarks.sh: the console (dist/) and the release
// backend in headless Chromium, through the e2e harness (tests/e2e/), with the
// e2e tests' own timing code (tests/e2e/timing.cjs). Measures only; no bound
// is asserted here (the e2e tests hold the loose ones).
//
// Prints JSON lines:
//   {"what": "browser", "name": "first_render_cold" | "first_render_warm", "ms": ..., ...}
//   {"what": "browser", "name": "keystroke_to_message", "ms": <median>, "samples": [...]}
//   {"what": "browser", "name": "topology_1000x1000", "ms": <the slower of the two>, "prefill": .., "decode": ..}
// First render is sampled RUNS times (fresh context each) and the median kept.
// QUICK=1 takes one run and a few samples.
'use strict';

const h = require('../tests/e2e/harness.cjs');
const t = require('../tests/e2e/timing.cjs');

const QUICK = process.env.QUICK === '1';
const RUNS = QUICK ? 1 : 5;
const KEY_SAMPLES = QUICK ? 3 : 21;
const TOPOLOGY = 1000;

const emit = (o) => console.log(JSON.stringify({ what: 'browser', ...o }));
const r1 = (x) => Math.round(x * 10) / 10;

async function withPage(browser, fn) {
  const context = await browser.newContext();
  try {
    const page = await h.newPage(context);
    return await fn(page);
  } finally {
    await context.close();
  }
}

/** Monitor writes timed, and how long the page is watched idle. */
const LIVE_WRITES = 5;
const IDLE_MS = 30_000;

async function main() {
  const backend = await h.startBackend();
  const browser = await h.launchBrowser();
  try {
    const renders = [];
    for (let i = 0; i < RUNS; i++) renders.push(await withPage(browser, (page) => t.measureFirstRender(page, backend.url)));
    for (const kind of ['cold', 'warm']) {
      const labels = renders.map((r) => r[kind].label);
      emit({ name: `first_render_${kind}`, ms: r1(t.median(labels)), samples: labels.map(r1), frame_ms: r1(t.median(renders.map((r) => r[kind].frame))) });
    }

    await withPage(browser, async (page) => {
      await h.openEditor(page, backend.url);
      await t.fillFullRequest(page, 'bench-keystroke');
      await t.waitForDeployable(page);
      const samples = await t.measureKeystrokeToMessage(page, KEY_SAMPLES);
      const dom = samples.map((s) => s.dom);
      emit({ name: 'keystroke_to_message', ms: r1(t.median(dom)), frame_ms: r1(t.median(samples.map((s) => s.frame))), samples: dom.map(r1) });
    });

    // The same keystroke on a request with 1,000 environment entries.
    await withPage(browser, async (page) => {
      await h.openEditor(page, backend.url);
      await t.fillFullRequest(page, 'bench-env');
      const env = Array.from({ length: 1000 }, (_, i) => `VAR_${i}=value-${i}`).join('\n');
      await page.getByLabel('Environment', { exact: true }).fill(env);
      await t.waitForDeployable(page);
      const samples = await t.measureKeystrokeToMessage(page, KEY_SAMPLES);
      const dom = samples.map((s) => s.dom);
      emit({ name: 'keystroke_to_message_env1000', ms: r1(t.median(dom)), frame_ms: r1(t.median(samples.map((s) => s.frame))), samples: dom.map(r1) });
    });

    await withPage(browser, async (page) => {
      await h.openEditor(page, backend.url);
      await t.fillFullRequest(page, 'bench-topology');
      await t.waitForDeployable(page);
      const r = await t.measureTopology(page, TOPOLOGY);
      emit({ name: `topology_${TOPOLOGY}x${TOPOLOGY}`, ms: r1(Math.max(r.prefill, r.decode)), prefill: r1(r.prefill), decode: r1(r.decode), badge: r.badge });
    });
  } finally {
    await browser.close().catch(() => {});
    await backend.stop();
  }
  await live();
}

/**
 * Live status on DynamoDB (dynalite), as GCO's monitors write it: from a
 * monitor's status write to the open endpoint page showing it, and the
 * requests an idle endpoint page makes per minute (and how many are 304).
 */
async function live() {
  const env = await h.startOnDynalite();
  const browser = await h.launchBrowser();
  try {
    const base = env.backend.url;
    await h.deployViaApi(base, h.fullRequest('bench-live', { target_regions: ['us-east-1'] }));
    await withPage(browser, async (page) => {
      const gets = [];
      page.on('response', (r) => {
        if (r.url().endsWith('/api/endpoints/bench-live') && r.request().method() === 'GET') gets.push(r.status());
      });
      await page.goto(`${base}/endpoints/bench-live`);
      await page.locator('table.status').waitFor();
      const shown = [];
      for (let i = 0; i < LIVE_WRITES; i++) {
        const state = i % 2 ? 'running' : 'updating';
        const written = Date.now();
        await env.monitorWrite('bench-live', 'us-east-1', { state, replicas_ready: i, replicas_desired: 5 });
        await page.locator(`table.status tr[data-region="us-east-1"] .state.${state}`).waitFor({ timeout: 10_000 });
        shown.push(Date.now() - written);
      }
      emit({ name: 'monitor_write_to_page', ms: r1(t.median(shown)), max_ms: Math.max(...shown), samples: shown });
      const before = gets.length;
      // The measurement window: requests per minute while nothing changes.
      await new Promise((r) => setTimeout(r, IDLE_MS));
      const idle = gets.slice(before);
      emit({
        name: 'idle_endpoint_page',
        per_minute: r1((idle.length * 60_000) / IDLE_MS),
        not_modified: idle.filter((s) => s === 304).length,
        requests: idle.length,
        seconds: IDLE_MS / 1000,
      });
    });
  } finally {
    await browser.close().catch(() => {});
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
