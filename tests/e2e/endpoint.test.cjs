// The endpoint page in Chromium: a topology change previewed as a diff and
// applied, and a 412 (the endpoint changed behind the page's back) recovered
// from with "Reload and re-apply".
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness.cjs');

const env = h.suite();

/** The diff table's rows as [field, now, after]. */
async function diffRows(page) {
  return page.locator('table.diff tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
}

/** The record's "Topology" value on the endpoint page. */
async function shownTopology(page) {
  return page.locator('.record dl dt', { hasText: /^Topology$/ }).locator('xpath=following-sibling::dd[1]').textContent();
}

async function openEndpoint(page, name) {
  await page.goto(`${env.base}/endpoints/${name}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.locator('.record').waitFor();
}

async function reviewTopology(page, prefill, decode) {
  await page.getByLabel('New prefill count', { exact: true }).fill(String(prefill));
  await page.getByLabel('New decode count', { exact: true }).fill(String(decode));
  await page.getByRole('button', { name: 'Review topology', exact: true }).click();
  await page.locator('section.review').waitFor();
}

test('changing the topology of an existing endpoint shows the diff, then applies it', async () => {
  await h.deployViaApi(env.base, h.fullRequest('e2e-topology'));
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await openEndpoint(page, 'e2e-topology');
    assert.equal(await shownTopology(page), '2p3d');

    await reviewTopology(page, 4, 5);
    assert.equal(await page.getByRole('heading', { name: 'Review: set topology' }).count(), 1);
    const rows = await diffRows(page);
    const prefill = rows.find(([f]) => /(^|\.)mooncake\.topology\.prefill$/.test(f));
    const decode = rows.find(([f]) => /(^|\.)mooncake\.topology\.decode$/.test(f));
    assert.ok(prefill, `a diff row for mooncake.topology.prefill in ${JSON.stringify(rows)}`);
    assert.deepEqual(prefill.slice(1), ['2', '4']);
    assert.deepEqual(decode.slice(1), ['3', '5']);
    await h.screenshot(page, 'endpoint-diff');

    // Nothing is sent before Apply.
    assert.equal((await h.api(env.base, 'GET', '/api/endpoints/e2e-topology')).body.spec.mooncake.topology.prefill, 2);

    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'set topology: done.' }).waitFor();
    await page.locator('section.review').waitFor({ state: 'detached' });
    assert.equal(await shownTopology(page), '4p5d');
    const stored = await h.api(env.base, 'GET', '/api/endpoints/e2e-topology');
    assert.deepEqual(stored.body.spec.mooncake.topology, { prefill: 4, decode: 5 });

    // An invalid count is refused at its field, with the operation's message, and nothing is sent.
    await page.getByLabel('New prefill count', { exact: true }).fill('1001');
    await page.getByRole('button', { name: 'Review topology', exact: true }).click();
    await page.locator('#new-prefill-msg li.error').filter({ hasText: 'topology prefill count out of range [1, 1000]: 1001' }).waitFor();
    assert.equal(await page.getByLabel('New prefill count', { exact: true }).getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('section.review').count(), 0);
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('a 412 (changed behind the page) is reported, and Reload and re-apply recovers', async () => {
  await h.deployViaApi(env.base, h.fullRequest('e2e-stale'));
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await openEndpoint(page, 'e2e-stale');
    await reviewTopology(page, 3, 3);
    assert.deepEqual((await diffRows(page)).find(([f]) => f.endsWith('topology.prefill')).slice(1), ['2', '3']);

    // Someone else changes the endpoint (through the API, with its current ETag).
    const current = await h.api(env.base, 'GET', '/api/endpoints/e2e-stale');
    assert.ok(current.etag, 'GET returns an ETag');
    const other = await h.api(env.base, 'PUT', '/api/endpoints/e2e-stale/topology', { prefill: 7, decode: 2 }, { 'If-Match': current.etag });
    assert.equal(other.status, 200, JSON.stringify(other.body));

    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Someone changed this endpoint' });
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'Someone changed this endpoint since you loaded it; nothing was applied.');
    assert.equal(await page.getByRole('button', { name: 'Apply', exact: true }).count(), 0, 'Apply is replaced while stale');
    assert.deepEqual((await h.api(env.base, 'GET', '/api/endpoints/e2e-stale')).body.spec.mooncake.topology, { prefill: 7, decode: 2 });
    await h.screenshot(page, 'endpoint-412');

    await page.getByRole('button', { name: 'Reload and re-apply', exact: true }).click();
    await alert.waitFor({ state: 'detached' });
    // The preview is recomputed against what is stored now.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('table.diff tbody tr')].some(
        (r) => r.cells[0].textContent.endsWith('topology.prefill') && r.cells[1].textContent === '7',
      ),
    );
    const rows = await diffRows(page);
    assert.deepEqual(rows.find(([f]) => f.endsWith('topology.prefill')).slice(1), ['7', '3']);
    assert.deepEqual(rows.find(([f]) => f.endsWith('topology.decode')).slice(1), ['2', '3']);
    assert.equal(await shownTopology(page), '7p2d', 'the page shows the reloaded record');

    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'set topology: done.' }).waitFor();
    assert.equal(await shownTopology(page), '3p3d');
    assert.deepEqual((await h.api(env.base, 'GET', '/api/endpoints/e2e-stale')).body.spec.mooncake.topology, { prefill: 3, decode: 3 });
    // Chromium logs the expected 412 response; nothing else.
    assert.ok(
      page.problems.some((p) => /status of 412/.test(p.text)),
      `Chromium logged the 412: ${JSON.stringify(page.problems)}`,
    );
    h.assertNoProblems(page, [412]);
  } finally {
    await context.close();
  }
});

test('an endpoint that does not exist is reported on its page', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await page.goto(`${env.base}/endpoints/e2e-nowhere`);
    const alert = page.getByRole('alert').filter({ hasText: 'There is no endpoint named' });
    await alert.waitFor();
    assert.match(await alert.textContent(), /^There is no endpoint named "e2e-nowhere"\. It may never have existed, or GCO purged it after its deletion completed\./);
    assert.equal(await page.locator('.record').count(), 0);
    h.assertNoProblems(page, [404]);
  } finally {
    await context.close();
  }
});

/**
 * Deploys `count` endpoints `<prefix>-000`... in `region`, a region of their
 * own that keeps other tests' endpoints out of the list filtered to it.
 */
async function deployMany(prefix, region, count) {
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${String(i).padStart(3, '0')}`;
    await h.deployViaApi(env.base, { endpoint_name: name, image: 'img:1', target_regions: [region] });
  }
}

/** Opens the list filtered to `region`. */
async function openListIn(page, region) {
  await page.goto(`${env.base}/`);
  await page.getByLabel('Region').fill(region);
  await page.getByLabel('Region').press('Tab');
}

test('the list comes in pages of 100, the rest on "Show more"', async () => {
  const region = 'ap-northeast-3';
  await deployMany('e2e-page', region, 103);
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await openListIn(page, region);
    const rows = page.locator('.list tbody tr');
    // Newest first: the first page ends before the three oldest.
    await page.getByRole('link', { name: 'e2e-page-102', exact: true }).waitFor();
    assert.equal(await rows.count(), 100);
    assert.equal(await page.getByRole('link', { name: 'e2e-page-002', exact: true }).count(), 0);
    await page.getByRole('button', { name: 'Show more' }).click();
    await page.getByRole('link', { name: 'e2e-page-000', exact: true }).waitFor();
    assert.equal(await rows.count(), 103);
    assert.equal(await page.getByRole('button', { name: 'Show more' }).count(), 0, 'nothing more to show');
    const names = await rows.locator('td:first-child').allTextContents();
    assert.equal(new Set(names).size, 103, 'no record twice');
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('"Show more" is disabled while it loads; a failed page is reported, and a retry appends it', async () => {
  const region = 'ap-southeast-4';
  await deployMany('e2e-more', region, 101);
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await openListIn(page, region);
    const rows = page.locator('.list tbody tr');
    await page.getByRole('link', { name: 'e2e-more-100', exact: true }).waitFor();
    assert.equal(await rows.count(), 100);

    // The next page (the only request with `after=`) is held, then fails.
    const nextPage = (url) => url.pathname === '/api/endpoints' && url.searchParams.has('after');
    let release;
    const released = new Promise((resolve) => (release = resolve));
    const held = [];
    await page.route(nextPage, async (route) => {
      held.push(route.request().url());
      await released;
      await route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'e2e: the next page could not be read', errors: [] }),
      });
    });
    await page.getByRole('button', { name: 'Show more', exact: true }).click();
    const loading = page.getByRole('button', { name: 'Loading…', exact: true });
    await loading.waitFor();
    assert.equal(await loading.isDisabled(), true, 'no second request while one is in flight');
    assert.equal(held.length, 1);
    assert.match(held[0], /[?&]region=ap-southeast-4&limit=100&after=[A-Za-z0-9_-]+$/);

    release();
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load more endpoints' });
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'Could not load more endpoints: e2e: the next page could not be read');
    const showMore = page.getByRole('button', { name: 'Show more', exact: true });
    assert.equal(await showMore.isEnabled(), true, 'Show more can be tried again');
    assert.equal(await rows.count(), 100, 'the list stays as it was');

    // Let it through: the page is appended and the error goes.
    await page.unroute(nextPage);
    await showMore.click();
    await page.getByRole('link', { name: 'e2e-more-000', exact: true }).waitFor();
    assert.equal(await rows.count(), 101);
    assert.equal(await alert.count(), 0, 'the error is gone');
    assert.equal(await showMore.count(), 0, 'nothing more to show');
    const names = await rows.locator('td:first-child').allTextContents();
    assert.equal(new Set(names).size, 101, 'no record twice');
    assert.equal(held.length, 1, 'the failing route saw one request');
    h.assertNoProblems(page, [500]);
  } finally {
    await context.close();
  }
});

test('the list at 420x800 (screenshot)', async () => {
  await h.deployViaApi(env.base, h.fullRequest('e2e-narrow-list-with-a-long-name', { target_regions: ['us-east-1', 'eu-west-1'] }));
  const context = await env.browser.newContext({ viewport: { width: 420, height: 800 } });
  try {
    const page = await h.newPage(context);
    await page.goto(`${env.base}/`);
    await page.getByRole('link', { name: 'e2e-narrow-list-with-a-long-name' }).waitFor();
    await h.screenshot(page, 'list-narrow-420x800', { fullPage: false });
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(width[0] <= width[1], `no horizontal scrolling (${width})`);
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test(
  'the endpoint page at 420x800 keeps its margins',
  {},
  async () => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-narrow-page'));
    const context = await env.browser.newContext({ viewport: { width: 420, height: 800 } });
    try {
      const page = await h.newPage(context);
      await openEndpoint(page, 'e2e-narrow-page');
      await h.screenshot(page, 'endpoint-narrow-420x800', { fullPage: false });
      const m = await page.evaluate(() => {
        const main = document.querySelector('main').getBoundingClientRect();
        const pad = parseFloat(getComputedStyle(document.querySelector('main')).paddingRight);
        const card = document.querySelector('.record').getBoundingClientRect();
        return { left: card.left - main.left, right: main.right - card.right, pad };
      });
      assert.ok(m.right >= m.pad - 1, `the record card keeps main's right padding (${m.right.toFixed(0)} px right vs ${m.left.toFixed(0)} px left, padding ${m.pad} px)`);
      h.assertNoProblems(page);
    } finally {
      await context.close();
    }
  },
);

test(
  'at 420x800, Review shows the preview where the user is',
  {},
  async () => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-narrow-review'));
    const context = await env.browser.newContext({ viewport: { width: 420, height: 800 } });
    try {
      const page = await h.newPage(context);
      await openEndpoint(page, 'e2e-narrow-review');
      await reviewTopology(page, 4, 5);
      // The review takes the focus, which scrolls it into view.
      await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'review-title');
      await h.screenshot(page, 'endpoint-narrow-after-review', { fullPage: false });
      const inView = await page.evaluate(() => {
        const r = document.querySelector('section.review').getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight;
      });
      assert.ok(inView, 'after "Review topology" the diff and its Apply button are scrolled into view (or focused)');
      const overflow = await page.evaluate(() => {
        const review = document.querySelector('section.review').getBoundingClientRect();
        return document.querySelector('section.review table.diff').getBoundingClientRect().right - review.right;
      });
      assert.ok(overflow <= 0, `the review's table fits its card (it runs ${overflow}px past it)`);
      h.assertNoProblems(page);
    } finally {
      await context.close();
    }
  },
);

// The second user trial (issue 35): what it found about this page, each
// test failing on the console before its fix (items as numbered there).

const withPage = (fn) => h.withPage(env.browser, fn);

/** A GCO timestamp `secondsAgo` seconds ago. */
const isoAgo = (secondsAgo) => new Date(Date.now() - secondsAgo * 1000).toISOString().replace('Z', '000+00:00');

/** The release backend on a fixed port and data directory, for stopping and starting again. */
async function spawnBackend(port, dataDir) {
  const { spawn } = require('node:child_process');
  const child = spawn(
    env.backend.binary,
    ['--addr', `127.0.0.1:${port}`, '--data-dir', dataDir, '--regions', h.REGIONS.join(','), '--dist', h.DIST],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  await h.waitUntil(() => fetch(`${url}/healthz`).then((r) => r.ok, () => false), {
    timeout: 30_000,
    interval: 100,
    what: 'the backend to start',
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGKILL');
      }),
  };
}

test('trial 2, 2: a lost server shows within one poll interval and clears on recovery', () =>
  withPage(async (page) => {
    const os = require('node:os');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-outage-'));
    const port = await h.freePort();
    let backend = await spawnBackend(port, dataDir);
    try {
      await h.deployViaApi(backend.url, { endpoint_name: 'e2e-outage', image: 'img:1', target_regions: ['us-east-1'] });
      await page.goto(`${backend.url}/endpoints/e2e-outage`);
      await page.locator('.record dl').waitFor();
      assert.equal(await page.locator('.connection-lost').count(), 0);
      await backend.stop();
      const lostAt = Date.now();
      await page.locator('.connection-lost').waitFor({ timeout: 8000 });
      // One poll interval (3 s), and the time a request takes to fail.
      assert.ok(Date.now() - lostAt < 6000, `the notice took ${Date.now() - lostAt} ms`);
      assert.match(await page.locator('.connection-lost').textContent(), /^Connection lost, retrying every 3 s: /);
      await h.screenshot(page, 'trial2-connection-lost');
      await page.setViewportSize({ width: 420, height: 900 });
      await h.screenshot(page, 'trial2-connection-lost-420', { fullPage: false });
      backend = await spawnBackend(port, dataDir);
      await page.locator('.connection-lost').waitFor({ state: 'detached', timeout: 8000 });
      // Chromium logs each refused request.
      h.assertNoProblems(page.problems ? { problems: page.problems.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to fetch|Failed to load resource/.test(p.text)) } : page);
    } finally {
      await backend.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }));

test('trial 2, 2: ages tick, and a region silent for three monitor passes is stale, in the page and the list', async () => {
  const d = await h.startOnDynalite();
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await h.deployViaApi(d.backend.url, { endpoint_name: 'e2e-stale', image: 'img:1', target_regions: ['us-east-1', 'eu-west-1'] });
    await d.monitorWrite('e2e-stale', 'us-east-1', { state: 'running', replicas_ready: 1, replicas_desired: 1, last_sync: isoAgo(40) });
    await d.monitorWrite('e2e-stale', 'eu-west-1', { state: 'running', replicas_ready: 1, replicas_desired: 1, last_sync: isoAgo(0) });
    await page.goto(`${d.backend.url}/endpoints/e2e-stale`);
    const east = page.locator('tr[data-region="us-east-1"]');
    const west = page.locator('tr[data-region="eu-west-1"]');
    await east.locator('.state').waitFor();
    const before = await west.locator('td').last().textContent();
    // No write, no reload: the age moves and us-east-1 turns stale at 45 s.
    await page.waitForFunction((t) => document.querySelector('tr[data-region="eu-west-1"] td:last-child').textContent !== t, before, { timeout: 8000 });
    await east.locator('.badge.stale').waitFor({ timeout: 15000 });
    assert.equal(await west.locator('.badge.stale').count(), 0);
    await h.screenshot(page, 'trial2-stale-endpoint');
    await page.setViewportSize({ width: 420, height: 900 });
    await h.screenshot(page, 'trial2-stale-endpoint-420', { fullPage: false });
    await page.goto(`${d.backend.url}/`);
    const chip = page.locator('tr[data-name="e2e-stale"] .region-chip[data-region="us-east-1"]');
    await chip.waitFor();
    assert.match(await chip.textContent(), /stale/);
    assert.doesNotMatch(await page.locator('tr[data-name="e2e-stale"] .region-chip[data-region="eu-west-1"]').textContent(), /stale/);
    h.assertNoProblems(page);
  } finally {
    await context.close();
    await d.stop();
  }
});

test('trial 2, 4: a name Kubernetes refuses for a Service is an error in the editor and the server; a stored one still opens and deletes', async () => {
  const d = await h.startOnDynalite();
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const base = d.backend.url;
    await h.openEditor(page, base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('Chat_PD');
    await page.getByLabel('Image', { exact: true }).fill('img:1');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    const message = h.field(page, 'endpoint_name').locator('.messages li.error');
    await message.filter({ hasText: "Service 'Chat_PD-prefill'" }).waitFor();
    assert.match(await message.textContent(), /DNS-1035 label/);
    assert.equal(await page.locator('.toolbar button.primary').isDisabled(), true, 'Deploy is disabled');
    const v = await h.api(base, 'POST', '/api/validate', await h.editorRequest(page));
    assert.deepEqual(v.body.errors.filter((e) => e.path === 'endpoint_name').map((e) => e.message), [await message.textContent()]);
    assert.equal((await h.api(base, 'POST', '/api/endpoints', { endpoint_name: 'Chat_PD', image: 'img:1' })).status, 422);

    // A record another writer stored under such a name.
    await h.deployViaApi(base, { endpoint_name: 'chat-pd', image: 'img:1', target_regions: ['us-east-1'] });
    const item = (await h.dynamo(d.endpoint, 'GetItem', { TableName: 'gco-inference-endpoints', Key: { endpoint_name: { S: 'chat-pd' } } })).Item;
    item.endpoint_name = { S: 'Chat_PD' };
    await h.dynamo(d.endpoint, 'PutItem', { TableName: 'gco-inference-endpoints', Item: item });
    await page.goto(`${base}/endpoints/Chat_PD`);
    const banner = page.locator('.banner.error[data-path="endpoint_name"]');
    await banner.waitFor();
    assert.match(await banner.textContent(), /Service 'Chat_PD-canary'.*DNS-1035/);
    await h.screenshot(page, 'trial2-refused-name');
    await page.getByLabel('Type the endpoint name to confirm').fill('Chat_PD');
    await page.getByRole('button', { name: 'Review delete…' }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByText('delete: done.').waitFor();
    assert.equal((await h.api(base, 'GET', '/api/endpoints/Chat_PD')).body.desired_state, 'deleted');
    h.assertNoProblems(page);
  } finally {
    await context.close();
    await d.stop();
  }
});

test('trial 2, 5: a region status shows its message and unknown fields; degraded and failed are problems', async () => {
  const d = await h.startOnDynalite();
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const base = d.backend.url;
    await h.deployViaApi(base, { endpoint_name: 'e2e-status', image: 'img:1', target_regions: ['us-east-1', 'eu-west-1'] });
    await d.monitorWrite('e2e-status', 'us-east-1', {
      state: 'failed', replicas_ready: 0, replicas_desired: 1, message: 'Back-off pulling image "img:1"', reason_code: 'ImagePullBackOff',
    });
    await d.monitorWrite('e2e-status', 'eu-west-1', { state: 'degraded', replicas_ready: 1, replicas_desired: 2, message: 'one replica is not ready' });
    await page.goto(`${base}/endpoints/e2e-status`);
    const detail = (region) => page.locator(`tr[data-region="${region}"] + tr.region-detail`);
    await detail('us-east-1').locator('[data-key="message"]').waitFor();
    assert.equal(await detail('us-east-1').locator('[data-key="message"]').textContent(), 'message: Back-off pulling image "img:1"');
    assert.equal(await detail('us-east-1').locator('[data-key="reason_code"]').textContent(), 'reason_code: ImagePullBackOff');
    assert.equal(await detail('eu-west-1').locator('[data-key="message"]').textContent(), 'message: one replica is not ready');
    // Problems look like problems: the error colour, not the healthy one.
    const colours = await page.evaluate(() => {
      const c = (sel) => getComputedStyle(document.querySelector(sel)).color;
      const probe = document.createElement('span');
      probe.className = 'error';
      document.body.append(probe);
      const error = getComputedStyle(probe).color;
      probe.className = 'state running';
      const ok = getComputedStyle(probe).color;
      probe.remove();
      return { failed: c('tr[data-region="us-east-1"] .state'), degraded: c('tr[data-region="eu-west-1"] .state'), error, ok };
    });
    assert.equal(colours.failed, colours.error);
    assert.equal(colours.degraded, colours.error);
    assert.notEqual(colours.degraded, colours.ok);
    assert.match(await detail('eu-west-1').locator('[data-key="message"]').getAttribute('class'), /\berror\b/);
    await h.screenshot(page, 'trial2-region-status');
    await page.setViewportSize({ width: 420, height: 900 });
    await h.screenshot(page, 'trial2-region-status-420');
    await page.goto(`${base}/`);
    const chip = page.locator('tr[data-name="e2e-status"] .region-chip[data-region="eu-west-1"]');
    await chip.waitFor();
    assert.equal(await chip.evaluate((e) => getComputedStyle(e).color), colours.error);
    h.assertNoProblems(page);
  } finally {
    await context.close();
    await d.stop();
  }
});

test('trial 2, 6: the review takes focus, is a dialog, closes on Escape, and focus returns after Apply', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-focus', { image: 'img:1' }));
    await page.goto(`${env.base}/endpoints/e2e-focus`);
    await page.getByLabel('New image').fill('img:2');
    const open = page.getByRole('button', { name: 'Review image' });
    await open.click();
    const dialog = page.getByRole('dialog', { name: 'Review: update image' });
    await dialog.waitFor();
    await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'review-title');
    assert.ok(await page.evaluate(() => {
      const r = document.getElementById('review-title').getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight;
    }), 'the heading is in view');
    await h.screenshot(page, 'trial2-review-focus', { fullPage: false });
    await page.setViewportSize({ width: 420, height: 900 });
    await h.screenshot(page, 'trial2-review-focus-420', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement && document.activeElement.textContent === 'Review image');
    await open.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByText('update image: done.').waitFor();
    await page.waitForFunction(() => document.activeElement && document.activeElement !== document.body);
    // The PD proxy box carries no aria-label a plain div may not have.
    assert.equal(await page.locator('.topology .proxy[aria-label]').count(), 0);
    h.assertNoProblems(page);
  }));

test('trial 2, 9, 10: a review outdated by a change elsewhere says so before Apply and offers to review again; the notice goes once done', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, { endpoint_name: 'e2e-outdated', image: 'img:1', target_regions: ['us-east-1'] });
    await page.goto(`${env.base}/endpoints/e2e-outdated`);
    await page.getByLabel('New image').fill('img:2');
    await page.getByRole('button', { name: 'Review image' }).click();
    const read = await h.api(env.base, 'GET', '/api/endpoints/e2e-outdated');
    const other = await h.api(env.base, 'PUT', '/api/endpoints/e2e-outdated/replicas', { replicas: 3 }, { 'If-Match': read.etag });
    assert.equal(other.status, 200);
    await page.getByRole('button', { name: 'Reload and re-apply', exact: true }).waitFor({ timeout: 8000 });
    assert.equal(await page.getByRole('button', { name: 'Apply', exact: true }).count(), 0, 'no Apply on an outdated review');
    await page.getByText('This endpoint was changed elsewhere').waitFor();
    await page.getByRole('button', { name: 'Reload and re-apply', exact: true }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByText('update image: done.').waitFor();
    // Item 10: the notice does not stay beside "done".
    assert.equal(await page.getByText('This endpoint was changed elsewhere').count(), 0);
    const after = (await h.api(env.base, 'GET', '/api/endpoints/e2e-outdated')).body.spec;
    assert.deepEqual([after.image, after.replicas], ['img:2', 3]);
    h.assertNoProblems(page);
  }));

test('trial 2, 10: after the token prompt the action is sent again, and its banner goes', async () => {
  const backend = await h.startBackend({ token: 's3cret-token-0123456789' });
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    const auth = { Authorization: 'Bearer s3cret-token-0123456789' };
    const r = await h.api(backend.url, 'POST', '/api/endpoints', { endpoint_name: 'e2e-token', image: 'img:1', target_regions: ['us-east-1'] }, auth);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    // Reads need the token too (issue 32): the page asks for it first.
    await page.goto(`${backend.url}/endpoints/e2e-token`);
    await page.getByLabel('Token', { exact: true }).fill('s3cret-token-0123456789');
    await page.getByRole('button', { name: 'Save token' }).click();
    await page.getByLabel('New image').fill('img:2');
    await page.getByRole('button', { name: 'Review image' }).click();
    // Then the server stops taking the tab's token (rotated) just as the
    // change is applied; the page's own reads are held meanwhile, so the
    // change is what the 401 stops.
    await page.route(`${backend.url}/api/endpoints/e2e-token`, (route) =>
      route.request().method() === 'GET' ? route.fulfill({ status: 304 }) : route.continue(),
    );
    await page.evaluate(() => sessionStorage.setItem('gco-console-token', 'rotated-away'));
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByText('Saving the token sends the change again').waitFor();
    await page.getByLabel('Token', { exact: true }).fill('s3cret-token-0123456789');
    await page.getByRole('button', { name: 'Save token' }).click();
    await page.getByText('update image: done.').waitFor();
    assert.equal(await page.getByText('Saving the token sends the change again').count(), 0, 'the banner is gone');
    assert.equal((await h.api(backend.url, 'GET', '/api/endpoints/e2e-token', undefined, auth)).body.spec.image, 'img:2');
    h.assertNoProblems(page, [401]);
  } finally {
    await context.close();
    await backend.stop();
  }
});

test('trial 2, 11: the endpoint page shows replicas, labels, the ingress path, a canary and what State means', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, { endpoint_name: 'e2e-rows', image: 'img:1', replicas: 2, target_regions: ['us-east-1'], labels: { team: 'a' } });
    const c = await h.api(env.base, 'POST', '/api/endpoints/e2e-rows/canary', { image: 'img:canary', weight: 20 });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    await page.goto(`${env.base}/endpoints/e2e-rows`);
    const dl = page.locator('.record dl');
    await dl.waitFor();
    const rows = await dl.evaluate((d) => Object.fromEntries([...d.querySelectorAll('dt')].map((t) => [t.textContent, t.nextElementSibling.textContent])));
    assert.equal(rows.Replicas, '2');
    assert.equal(rows.Labels, 'team=a');
    assert.equal(rows['Ingress path'], '/inference/e2e-rows');
    assert.match(rows.Canary, /^img:canary · 20% of traffic/);
    assert.match(rows['Desired state'], /^deploying/);
    assert.equal(await page.getByText('Choose a Mooncake mode').count(), 0);
    h.assertNoProblems(page);
  }));

test('trial 2, 9: an image that is no reference is refused; a no-op change cannot be applied, and says why', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, { endpoint_name: 'e2e-noop', image: 'img:1', target_regions: ['us-east-1'] });
    await page.goto(`${env.base}/endpoints/e2e-noop`);
    const image = page.getByLabel('New image');
    await image.fill('not an image ref!!');
    await page.getByRole('button', { name: 'Review image' }).click();
    await page.getByText("image 'not an image ref!!' is not an image reference").waitFor();
    assert.equal(await page.getByRole('dialog').count(), 0, 'no review of a refused change');
    await image.fill('img:1');
    await page.getByRole('button', { name: 'Review image' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Nothing to apply: the endpoint already runs img:1.').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Apply', exact: true }).isDisabled(), true);
    await page.keyboard.press('Escape');
    await page.getByLabel('Add a region').fill('us-east-1');
    await page.getByRole('button', { name: 'Review region' }).click();
    await dialog.getByText('Nothing to apply').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Apply', exact: true }).isDisabled(), true);
    assert.equal((await h.api(env.base, 'GET', '/api/endpoints/e2e-noop')).body.desired_state, 'deploying');
    h.assertNoProblems(page);
  }));
