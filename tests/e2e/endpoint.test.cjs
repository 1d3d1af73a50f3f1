// The endpoint page in Chromium: a topology change previewed as a diff and
// applied, and a 412 (the endpoint changed behind the page's back) recovered
// from with "Reload and re-apply".
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
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
