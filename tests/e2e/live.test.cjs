// Live status in Chromium, on a DynamoDB table GCO's monitors also write:
// a monitor's status write shows on the endpoint page and in the list
// without a reload within the console's refresh interval of the table (3 s)
// and a page's poll (3 s), a change made elsewhere shows with a notice
// where the user has unsent edits, and an idle page asks at most once per
// 2 s (304 while nothing changed).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

/** A write made elsewhere shows within the view's refresh (3 s) plus a poll (3 s), with a margin. */
const ELSEWHERE_MS = 8000;

const env = h.suiteOnDynalite();

const RUNNING = {
  state: 'running',
  replicas_ready: 5,
  replicas_desired: 5,
  roles: { prefill: { ready: 2, desired: 2 }, decode: { ready: 3, desired: 3 } },
  store: { ready: true, master: 'mooncake-master:50051' },
};

test('a monitor write shows on the open endpoint page and in the list within 8 s', async () => {
  const base = env.dynamo.backend.url;
  await h.deployViaApi(base, h.fullRequest('e2e-live', { target_regions: ['us-east-1', 'eu-west-1'] }));
  const page = await h.newPage(await env.browser.newContext());
  const gets = [];
  page.on('response', (r) => {
    if (r.url().endsWith('/api/endpoints/e2e-live') && r.request().method() === 'GET') gets.push({ at: Date.now(), status: r.status() });
  });
  await page.goto(`${base}/endpoints/e2e-live`);
  const row = (region) => page.locator(`table.status tr[data-region="${region}"]`);
  await row('us-east-1').getByText('waiting for the region\'s monitor to sync').waitFor();

  const written = Date.now();
  await env.dynamo.monitorWrite('e2e-live', 'us-east-1', RUNNING);
  await row('us-east-1').locator('.state.running').waitFor({ timeout: ELSEWHERE_MS });
  const shown = Date.now() - written;
  console.log(`TIMING monitor write to the endpoint page: ${shown} ms`);
  const cells = await row('us-east-1').locator('td').allTextContents();
  assert.equal(cells[1], 'running');
  assert.equal(cells[2], '5/5');
  assert.equal(cells[3], '2/2');
  assert.equal(cells[4], '3/3');
  assert.equal(cells[5], 'ready');
  assert.match(cells[6], /just now|\d+ s ago/);

  // A refusal by the monitor, with its words.
  const error = "cross-region boundary violation: 'kv-peer.example.com:50051' resolves to region unknown; expected region eu-west-1";
  await env.dynamo.monitorWrite('e2e-live', 'eu-west-1', { state: 'failed', replicas_ready: 0, replicas_desired: 0, error });
  await page.getByText(error).waitFor({ timeout: ELSEWHERE_MS });
  await h.screenshot(page, 'live-status');

  // Idle: at most one request per 2 s, answered 304 while nothing changes.
  const before = gets.length;
  await h.waitUntil(() => gets.length >= before + 4, { timeout: 20_000, interval: 100, what: 'four requests of the idle page' });
  const idle = gets.slice(before, before + 4);
  const gaps = idle.map((g, i) => g.at - (i === 0 ? gets[before - 1].at : idle[i - 1].at));
  console.log(`TIMING idle endpoint page: requests ${gaps.join(', ')} ms apart, statuses ${[...new Set(idle.map((g) => g.status))].join(',')}`);
  assert.ok(gaps.every((gap) => gap >= 2000), `requests ${gaps.join(', ')} ms apart`);
  assert.ok(idle.every((g) => g.status === 304), JSON.stringify(idle));

  // The list shows each region's state and follows the monitor too.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints', exact: true }).click();
  const chip = page.locator('tr[data-name="e2e-live"] .region-chip[data-region="us-east-1"]');
  await chip.waitFor();
  assert.equal((await chip.textContent()).trim(), 'us-east-1 · running');
  await env.dynamo.monitorWrite('e2e-live', 'us-east-1', { ...RUNNING, state: 'updating' });
  await page.waitForFunction(
    () => document.querySelector('tr[data-name="e2e-live"] .region-chip[data-region="us-east-1"]').textContent.includes('updating'),
    null,
    { timeout: ELSEWHERE_MS },
  );
  h.assertNoProblems(page);
});

test('a change made elsewhere shows within 8 s, with a notice where edits are unsent', async () => {
  const base = env.dynamo.backend.url;
  await h.deployViaApi(base, { endpoint_name: 'e2e-elsewhere', image: 'img:1', target_regions: ['us-east-1'] });
  const page = await h.newPage(await env.browser.newContext());
  await page.goto(`${base}/endpoints/e2e-elsewhere`);
  const image = page.getByLabel('New image');
  await image.waitFor();
  await image.fill('img:mine');
  // Another tab (or GCO's CLI) changes the endpoint; a monitor writes too.
  const read = await h.api(base, 'GET', '/api/endpoints/e2e-elsewhere');
  const changed = await h.api(base, 'PUT', '/api/endpoints/e2e-elsewhere/replicas', { replicas: 3 }, { 'If-Match': read.etag });
  assert.equal(changed.status, 200);
  await env.dynamo.monitorWrite('e2e-elsewhere', 'us-east-1', { state: 'updating', replicas_ready: 1, replicas_desired: 3 });
  await page.getByText('This endpoint was changed elsewhere').waitFor({ timeout: ELSEWHERE_MS });
  assert.equal(await image.inputValue(), 'img:mine', 'the unsent edit stays');
  // The page's own change, sent with the version it now holds, lands
  // although the monitor keeps writing.
  await env.dynamo.monitorWrite('e2e-elsewhere', 'us-east-1', { state: 'running', replicas_ready: 3, replicas_desired: 3 });
  await page.getByRole('button', { name: 'Review image' }).click();
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('update image: done.').waitFor();
  const after = await h.api(base, 'GET', '/api/endpoints/e2e-elsewhere');
  assert.equal(after.body.spec.image, 'img:mine');
  assert.equal(after.body.spec.replicas, 3);
  assert.equal(after.body.region_status['us-east-1'].state, 'running');
  await h.screenshot(page, 'changed-elsewhere');
  h.assertNoProblems(page);
});
