// The console as users found it wrong (issue: "what a user finds wrong
// today"), each mistake made as a user makes it, in Chromium; then the list,
// delete, sizes, the topology's scale, Clone and the visual language.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

const env = h.suite();

const deployButton = (page) => page.locator('.toolbar').getByRole('button', { name: 'Deploy', exact: true });
const copyLinkButton = (page) => page.getByRole('button', { name: 'Copy link', exact: true });

async function withPage(fn, options = {}) {
  const context = await env.browser.newContext(options.context || {});
  try {
    const page = await h.newPage(context, options);
    await fn(page, context);
  } finally {
    await context.close();
  }
}

test('JSON view: text that does not parse blocks Deploy and Copy link and leads the problems', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    const json = page.getByLabel('Deploy request (JSON)');
    await json.fill('{"endpoint_name": "e2e-json", "image": "img:1"}');
    await page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);
    // A change and a trailing comma: the text no longer parses.
    await json.fill('{"endpoint_name": "e2e-json", "image": "img:2",}');
    await page.waitForFunction(() => document.querySelector('.toolbar button.primary').disabled);
    assert.equal(await copyLinkButton(page).isDisabled(), true);
    const first = await page.locator('.summary li').first().textContent();
    assert.match(first, /^request invalid JSON: /);
    assert.doesNotMatch(await page.locator('#summary-title').textContent(), /No problems/);
    // Ctrl+Enter does not deploy either.
    await json.press('Control+Enter');
    // A deploy would have shown by the next frame.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    assert.equal(await page.getByText('Deploying…').count(), 0);
    assert.equal((await h.api(env.base, 'GET', '/api/endpoints/e2e-json')).status, 404);
    // The form says what it shows; the text waits in the JSON view.
    await page.getByRole('button', { name: 'Form', exact: true }).click();
    await page.getByText('The JSON view holds text that does not parse').waitFor();
    await page.getByRole('button', { name: 'Back to the JSON' }).click();
    assert.match(await json.inputValue(), /"img:2",}$/);
    // Fixed, it deploys what it says.
    await json.fill('{"endpoint_name": "e2e-json", "image": "img:2"}');
    await page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);
    await deployButton(page).click();
    await page.waitForURL(`${env.base}/endpoints/e2e-json`);
    const stored = await h.api(env.base, 'GET', '/api/endpoints/e2e-json');
    assert.equal(stored.body.spec.image, 'img:2');
    h.assertNoProblems(page);
  }));

test('the editor refuses what the server refuses: names that cannot be a path segment', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Image', { exact: true }).fill('img:1');
    for (const [name, held] of [['chat pd', "' '"], ['a/b', "'/'"]]) {
      await page.getByLabel('Endpoint name', { exact: true }).fill(name);
      await page.waitForFunction(() => document.querySelector('.toolbar button.primary').disabled);
      const messages = await h.messagesAt(page, 'endpoint_name');
      assert.ok(
        messages.some((m) => m.includes('cannot be one segment of a URL path') && m.endsWith(`it holds ${held}`)),
        JSON.stringify(messages),
      );
      const server = await h.api(env.base, 'POST', '/api/validate', { endpoint_name: name, image: 'img:1' });
      assert.deepEqual(
        server.body.errors.map((e) => e.message),
        messages.filter((m) => m.includes('cannot be one segment')),
      );
    }
    h.assertNoProblems(page);
  }));

test('topology count boxes keep what was typed; an empty box is an error at the box', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-counts');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    const box = page.locator('#topo-prefill');
    await box.fill('2');
    await box.press('End');
    await box.press('Backspace');
    assert.equal(await box.inputValue(), '');
    // Empty is an error at the box, not a silent 1.
    await page.locator('#topo-prefill-msg li.error').waitFor();
    assert.equal(await deployButton(page).isDisabled(), true);
    await box.press('Backspace');
    await box.type('8');
    assert.equal(await box.inputValue(), '8');
    await page.waitForFunction(() => document.querySelector('.topology .badge').textContent === '8p1d');
    assert.equal(await page.locator('#topo-prefill-msg li').count(), 0);
    // The form's field follows, and an invalid text is an error there too.
    assert.equal(await page.getByLabel('Prefill instances', { exact: true }).inputValue(), '8');
    await box.fill('x');
    await page.locator('#topo-prefill-msg li.error').waitFor();
    assert.equal(await box.inputValue(), 'x');
    h.assertNoProblems(page);
  }));

test('an endpoint that does not exist says so, and nothing keeps loading', () =>
  withPage(async (page) => {
    await page.goto(`${env.base}/endpoints/does-not-exist`);
    await page.getByText('There is no endpoint named "does-not-exist"').waitFor();
    // A refresh later, still no spinner.
    await page.waitForResponse((r) => r.url().endsWith('/api/endpoints/does-not-exist'));
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    assert.equal(await page.getByText('Loading…').count(), 0);
    await page.getByRole('link', { name: 'Back to all endpoints' }).waitFor();
    h.assertNoProblems(page, [404]);
  }));

test('at 420 px the form comes first and the preview is closed', () =>
  withPage(
    async (page) => {
      await h.openEditor(page, env.base);
      await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-narrow');
      await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
      const y = async (locator) => (await locator.boundingBox()).y;
      const nameY = await y(page.getByLabel('Endpoint name', { exact: true }));
      assert.ok(nameY < 400, `Endpoint name at ${nameY} px`);
      assert.ok(nameY < (await y(page.locator('section.topology'))));
      assert.ok(nameY < (await y(page.locator('section.summary'))));
      assert.equal(await page.locator('details.preview').getAttribute('open'), null);
      await h.screenshot(page, 'narrow-editor');
      h.assertNoProblems(page);
    },
    { viewport: { width: 420, height: 900 } },
  ));

test('a draft survives leaving at once and coming Back; New endpoint asks before discarding it', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-draft');
    await page.getByLabel('Image', { exact: true }).fill('img:draft');
    // Away within the link's pause, then Back.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints', exact: true }).click();
    await page.waitForURL(`${env.base}/`);
    await page.goBack();
    await page.getByLabel('Endpoint name', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Endpoint name', { exact: true }).inputValue(), 'e2e-draft');
    assert.equal(await page.getByLabel('Image', { exact: true }).inputValue(), 'img:draft');
    await page.getByText('Restored the draft you were editing in this tab.').waitFor();
    // A reload keeps it too.
    await page.reload();
    await page.getByLabel('Endpoint name', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Endpoint name', { exact: true }).inputValue(), 'e2e-draft');

    const newEndpoint = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New endpoint' });
    const dialogs = [];
    const dismissed = new Promise((resolve) =>
      page.once('dialog', (d) => {
        dialogs.push(d.message());
        d.dismiss().then(resolve);
      }),
    );
    await newEndpoint.click();
    await dismissed;
    assert.deepEqual(dialogs, ['Start a new endpoint? This discards the draft you are editing.']);
    assert.equal(await page.getByLabel('Endpoint name', { exact: true }).inputValue(), 'e2e-draft');
    page.once('dialog', (d) => d.accept());
    await newEndpoint.click();
    await page.waitForFunction(() => document.querySelector('[data-path="endpoint_name"] input').value === '');
    h.assertNoProblems(page);
  }));

test('list: search, filters and sort live in the URL; an empty table says how to start', () =>
  withPage(async (page) => {
    // Before anything is deployed in this run's other tests? The list may
    // hold some: filter to a region nobody uses for the empty case.
    await page.goto(`${env.base}/?region=ap-south-2`);
    await page.getByText('No endpoint matches this search and these filters.').waitFor();
    for (const name of ['e2e-list-b', 'e2e-list-a', 'e2e-list-c']) {
      await h.deployViaApi(env.base, { endpoint_name: name, image: 'img:1', target_regions: ['us-east-1'] });
    }
    await page.goto(`${env.base}/`);
    await page.getByLabel('Search endpoints').fill('e2e-list');
    await page.getByLabel('Sort by').selectOption('name');
    await page.waitForFunction(() => location.search === '?q=e2e-list&sort=name');
    const names = async () => page.locator('.list tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.name));
    await page.waitForFunction(() => document.querySelectorAll('.list tbody tr').length === 3);
    assert.deepEqual(await names(), ['e2e-list-a', 'e2e-list-b', 'e2e-list-c']);
    // A reload (or the address shared) shows the same list.
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('.list tbody tr').length === 3);
    assert.equal(await page.getByLabel('Search endpoints').inputValue(), 'e2e-list');
    assert.deepEqual(await names(), ['e2e-list-a', 'e2e-list-b', 'e2e-list-c']);
    await page.getByLabel('Search endpoints').fill('e2e-list-c');
    await page.waitForFunction(() => document.querySelectorAll('.list tbody tr').length === 1);
    await h.screenshot(page, 'list-search');
    h.assertNoProblems(page);
  }));

test('delete is deliberate: the name typed enables the review, which says what GCO removes', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-delete'));
    await page.goto(`${env.base}/endpoints/e2e-delete`);
    const review = page.getByRole('button', { name: 'Review delete…' });
    await review.waitFor();
    assert.equal(await review.isDisabled(), true);
    const confirm = page.getByLabel('Type the endpoint name to confirm');
    await confirm.fill('e2e-delet');
    assert.equal(await review.isDisabled(), true);
    await confirm.fill('e2e-delete');
    assert.equal(await review.isDisabled(), false);
    await review.click();
    const notes = await page.locator('.review .notes li').allTextContents();
    assert.ok(
      notes.some((n) => n.startsWith('In us-east-1, GCO\'s monitor removes: ') && n.includes('Deployment e2e-delete-prefill') && n.includes('ConfigMap e2e-delete-mooncake')),
      JSON.stringify(notes),
    );
    await h.screenshot(page, 'delete-review');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('delete: done.').waitFor();
    assert.equal((await h.api(env.base, 'GET', '/api/endpoints/e2e-delete')).body.desired_state, 'deleted');
    h.assertNoProblems(page);
  }));

test('byte sizes show what they resolve to, and a bad one the forms a size takes', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('store');
    const size = page.getByLabel('Global segment size', { exact: true });
    await size.fill('8 GB');
    const note = page.locator('[data-path="mooncake.store.global_segment_size"] .size-note');
    assert.equal(await note.textContent(), '= 8,000,000,000 bytes = 7.45 GiB = 8 GB');
    await size.fill('16 GBB');
    // One message at the field, naming the accepted forms once.
    assert.equal(
      await note.textContent(),
      "'16 GBB' is not a size: a size is whole bytes (4294967296) or a number and a unit: B, KB, MB, GB, TB, PB, EB (powers of 1000) or KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024).",
    );
    assert.deepEqual(await h.messagesAt(page, 'mooncake.store.global_segment_size'), []);
    // The stored value keeps the reference's rule and message, in the summary.
    const summary = await page.locator('.summary li').allTextContents();
    assert.ok(summary.some((m) => m.includes('must be a base-10 integer string')), JSON.stringify(summary));
    // The topology draws no size that is none.
    assert.doesNotMatch(await page.locator('.topology .kv').textContent(), /GBB/);
    h.assertNoProblems(page);
  }));

test('image update on a Mooncake endpoint: the review says what happens to the proxy and the pods', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-image', { image: 'img:1' }));
    await page.goto(`${env.base}/endpoints/e2e-image`);
    await page.getByLabel('New image').fill('img:2');
    await page.getByRole('button', { name: 'Review image' }).click();
    const notes = (await page.locator('.review .notes li').allTextContents()).join('\n');
    assert.match(notes, /The PD proxy keeps its own image, img:1/);
    assert.match(notes, /running pods keep their image/);
    // Offered: the proxy moves too.
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByLabel('Also update the PD proxy image').check();
    await page.getByRole('button', { name: 'Review image' }).click();
    const moved = (await page.locator('.review .notes li').allTextContents()).join('\n');
    assert.match(moved, /The PD proxy moves to img:2 too/);
    assert.ok(
      (await page.locator('table.diff tbody tr').allTextContents()).some((row) => row.startsWith('spec.mooncake.proxy.image')),
      'the diff shows the proxy image',
    );
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('update image: done.').waitFor();
    const stored = (await h.api(env.base, 'GET', '/api/endpoints/e2e-image')).body.spec;
    assert.equal(stored.image, 'img:2');
    assert.equal(stored.mooncake.proxy.image, 'img:2');
    h.assertNoProblems(page);
  }));

test('the topology picture conveys scale: 2x3, 50x50 and 1000x1000 differ', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    await page.getByLabel('GPU count', { exact: true }).fill('8');
    const seen = [];
    for (const [p, d] of [[2, 3], [50, 50], [1000, 1000]]) {
      await page.locator('#topo-prefill').fill(String(p));
      await page.locator('#topo-decode').fill(String(d));
      await page.waitForFunction((label) => document.querySelector('.topology .badge').textContent === label, `${p}p${d}d`);
      const totals = await page.locator('.topology .totals').textContent();
      const legend = await page.locator('.topology .legend').count() ? await page.locator('.topology .legend').textContent() : '';
      const blocks = await page.locator('.topology .prefill .node').count();
      seen.push({ totals, legend, blocks });
      await h.screenshot(page, `topology-${p}x${d}`, { fullPage: false });
    }
    assert.deepEqual(seen.map((s) => s.totals), [
      '5 instances · 40 GPUs · 5 EFA devices',
      '100 instances · 800 GPUs · 100 EFA devices',
      '2,000 instances · 16,000 GPUs · 2,000 EFA devices',
    ]);
    assert.deepEqual(seen.map((s) => s.legend), ['', 'each block: 10 instances', 'each block: 100 instances']);
    assert.deepEqual(seen.map((s) => s.blocks), [2, 5, 10]);
    h.assertNoProblems(page);
  }));

test('Clone opens any endpoint in the editor as a starting point', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, h.fullRequest('e2e-clone'));
    await page.goto(`${env.base}/endpoints/e2e-clone`);
    await page.getByRole('button', { name: 'Clone' }).click();
    await page.waitForURL(`${env.base}/new`);
    await page.getByText('Cloned from e2e-clone').waitFor();
    assert.equal(await page.getByLabel('Endpoint name', { exact: true }).inputValue(), 'e2e-clone-copy');
    await page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);
    h.assertNoProblems(page);
  }));

test('keyboard: Ctrl+Enter deploys from any field; dark mode follows the system', () =>
  withPage(
    async (page) => {
      await h.openEditor(page, env.base);
      await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-keys');
      await page.getByLabel('Image', { exact: true }).fill('img:1');
      await page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);
      const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      assert.equal(bg, 'rgb(17, 21, 28)');
      await h.screenshot(page, 'dark-editor');
      await page.getByLabel('Image', { exact: true }).press('Control+Enter');
      await page.waitForURL(`${env.base}/endpoints/e2e-keys`);
      await h.screenshot(page, 'dark-endpoint');
      h.assertNoProblems(page);
    },
    { context: { colorScheme: 'dark' } },
  ));

// The second user trial (issue 35): what it found about this page, each
// test failing on the console before its fix (items as numbered there).

test('trial 2, 12: not found, chips that do not break, steppers at their bounds, the search box in dark mode', () =>
  withPage(
    async (page) => {
      await page.goto(`${env.base}/no/such/page`);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await h.openEditor(page, env.base);
      await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
      const minus = page.getByRole('button', { name: 'Remove a prefill instance' });
      await page.waitForFunction(() => document.querySelector('[aria-label="Remove a prefill instance"]').disabled);
      await page.getByRole('button', { name: 'Add a prefill instance' }).click();
      assert.equal(await minus.isDisabled(), false);
      await page.goto(`${env.base}/`);
      const search = page.getByLabel('Search endpoints');
      await search.waitFor();
      const [bg, other] = await page.evaluate(() => [
        getComputedStyle(document.getElementById('filter-search')).backgroundColor,
        getComputedStyle(document.getElementById('filter-region')).backgroundColor,
      ]);
      assert.equal(bg, other);
      const chip = page.locator('.region-chip').first();
      await chip.waitFor();
      assert.equal(await chip.evaluate((e) => getComputedStyle(e).whiteSpace), 'nowrap');
      await page.setViewportSize({ width: 420, height: 900 });
      await h.screenshot(page, 'trial2-list-420-dark');
      h.assertNoProblems(page);
    },
    { context: { colorScheme: 'dark' } },
  ));
