// Each region as GCO names its state, in Chromium, on a table GCO's
// monitors write: every state of GCO's RegionSyncState (and `failed`) has
// its own label and colour on the endpoint page and in the list, a region
// no monitor has written is `pending`, and a region that runs where GCO's
// inference proxy will not route (a Mooncake endpoint stays `deploying`)
// says so with the proxy's answer.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

const env = h.suiteOnDynalite();

// One region per state GCO's monitors write; the first is left unwritten.
const STATES = ['creating', 'running', 'updating', 'stopping', 'stopped', 'deleting', 'deleted', 'error', 'failed'];
const REGIONS = ['ca-central-1', 'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'eu-west-1', 'eu-west-2', 'eu-central-1', 'ap-south-1', 'ap-northeast-1'];

test('every region state GCO names has its own label and colour, on the page and in the list', async () => {
  const base = env.dynamo.backend.url;
  await h.deployViaApi(base, { endpoint_name: 'e2e-states', image: 'vllm/vllm-openai:v0.31.0', target_regions: REGIONS });
  for (const [i, state] of STATES.entries()) {
    await env.dynamo.monitorWrite('e2e-states', REGIONS[i + 1], { state, replicas_ready: 0, replicas_desired: 1 });
  }
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await page.goto(`${base}/endpoints/e2e-states`);
    await page.locator('tr[data-region="ap-northeast-1"] .state[data-state="failed"]').waitFor();
    const labels = await page.evaluate((regions) => regions.map((r) => {
      const label = document.querySelector(`table.status tr[data-region="${r}"] .state`);
      return { text: label.textContent, title: label.title, colour: getComputedStyle(label).color };
    }), REGIONS);
    assert.deepEqual(labels.map((l) => l.text), ['pending', ...STATES], 'GCO\'s words, and pending for no sync yet');
    for (const l of labels) assert.match(l.title, new RegExp(`^${l.text}: `), l.text);
    // GCO's RegionSyncState (all but failed, which shares error's problem red
    // with the console's error text): nine states, nine colours.
    const named = labels.filter((l) => l.text !== 'failed');
    assert.equal(new Set(named.map((l) => l.colour)).size, named.length, JSON.stringify(labels));
    await h.screenshot(page, 'regions-states-endpoint');

    await page.goto(`${base}/`);
    const chips = page.locator('tr[data-name="e2e-states"] .region-chip');
    await chips.first().waitFor();
    const list = await chips.evaluateAll((cs) => cs.map((c) => ({ state: c.dataset.state, title: c.title, colour: getComputedStyle(c).color })));
    assert.deepEqual(list.map((c) => c.state), ['pending', ...STATES]);
    const namedChips = list.filter((c) => c.state !== 'failed');
    assert.equal(new Set(namedChips.map((c) => c.colour)).size, namedChips.length, JSON.stringify(list));
    for (const c of list) assert.ok(c.title.startsWith(`${c.state}: `), c.state);
    await h.screenshot(page, 'regions-states-list');
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('a running region GCO\'s inference proxy will not route says so, with the proxy\'s answer', async () => {
  const base = env.dynamo.backend.url;
  // A Mooncake endpoint: deploy writes deploying, and GCO's monitor never
  // promotes it (as read), though its region runs.
  await h.deployViaApi(base, { endpoint_name: 'e2e-pd', mooncake_mode: 'disaggregated', mooncake_transfer: { protocol: 'tcp' }, target_regions: ['us-east-1'] });
  await env.dynamo.monitorWrite('e2e-pd', 'us-east-1', { state: 'running', replicas_ready: 2, replicas_desired: 2 });
  // A classic endpoint, running everywhere: routed, nothing to say.
  await h.deployViaApi(base, { endpoint_name: 'e2e-web', image: 'vllm/vllm-openai:v0.31.0', target_regions: ['us-east-1'] });
  await h.api(base, 'POST', '/api/endpoints/e2e-web/stop');
  await h.api(base, 'POST', '/api/endpoints/e2e-web/start');
  await env.dynamo.monitorWrite('e2e-web', 'us-east-1', { state: 'running', replicas_ready: 1, replicas_desired: 1 });
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await page.goto(`${base}/endpoints/e2e-pd`);
    const answer = page.locator('tr[data-region="us-east-1"] + tr.region-detail .proxy-answer');
    await answer.waitFor();
    assert.equal(
      await answer.textContent(),
      'GCO\'s inference proxy answers 503 Inference endpoint is not ready in this region: it routes only while the endpoint\'s desired state and this region\'s state are both running, and the endpoint is deploying (as read: GCO\'s monitor promotes only classic endpoints to running, so a Mooncake endpoint stays deploying).',
    );
    await h.screenshot(page, 'regions-proxy-not-ready');

    await page.goto(`${base}/endpoints/e2e-web`);
    await page.locator('tr[data-region="us-east-1"] .state[data-state="running"]').waitFor();
    assert.equal((await h.api(base, 'GET', '/api/endpoints/e2e-web')).body.desired_state, 'running');
    assert.equal(await page.locator('.proxy-answer').count(), 0);
    // Try it, as GCO's newest CLI takes it.
    const commands = await page.locator('section.try-it pre.commands').textContent();
    assert.equal(commands, [
      'gco inference models e2e-web --framework vllm --region us-east-1',
      'gco inference invoke e2e-web -p \'Hello, my name is\' --path /v1/completions --region us-east-1',
    ].join('\n'));
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});
