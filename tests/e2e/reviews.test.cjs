// Reviews and hints a third trial found wanting (issue 43), in Chromium on
// the embedded store: a review outdated while open says so without "nothing
// was applied" and shows what is stored now; adding a region no monitor is
// known in warns, and the review's command box says GCO's CLI has no
// command for it; a Model path on SGLang gets the console's hint with
// "Use it as MODEL", beside GCO's own message.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

const env = h.suite();

const withPage = (fn) => h.withPage(env.browser, fn);

/** The review's diff rows as [field, now, after]. */
async function diffRows(page) {
  return page.locator('section.review table.diff tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
}

async function openEndpoint(page, name) {
  await page.goto(`${env.base}/endpoints/${name}`);
  await page.locator('.record').waitFor();
}

test('10: a review outdated while open says so before Apply, without "nothing was applied", and "Now" is what is stored', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, { endpoint_name: 'e2e-now', image: 'img:1', replicas: 3, target_regions: ['us-east-1'] });
    await openEndpoint(page, 'e2e-now');
    await page.getByLabel('Replicas', { exact: true }).fill('4');
    await page.getByRole('button', { name: 'Review scale', exact: true }).click();
    assert.deepEqual((await diffRows(page)).find(([f]) => f === 'spec.replicas'), ['spec.replicas', '3', '4']);

    // Someone scales it to 6 meanwhile; the page follows within a poll.
    const read = await h.api(env.base, 'GET', '/api/endpoints/e2e-now');
    const other = await h.api(env.base, 'PUT', '/api/endpoints/e2e-now/replicas', { replicas: 6 }, { 'If-Match': read.etag });
    assert.equal(other.status, 200);
    const notice = page.locator('section.review [role=alert]');
    await notice.waitFor({ timeout: 8000 });
    const text = await notice.textContent();
    assert.doesNotMatch(text, /nothing was applied/, 'Apply was never pressed');
    assert.match(text, /^This endpoint changed while this review was open: Apply would be refused\./);
    const shown = page.locator('.record dl dt', { hasText: /^Replicas$/ }).locator('xpath=following-sibling::dd[1]');
    assert.equal(await shown.textContent(), '6');
    assert.deepEqual((await diffRows(page)).find(([f]) => f === 'spec.replicas'), ['spec.replicas', '6', '4'], '"Now" as the page shows it');
    await h.screenshot(page, 'reviews-outdated', { fullPage: false });

    // Reviewed again on the current version, it applies.
    await page.getByRole('button', { name: 'Reload and re-apply', exact: true }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'scale: done.' }).waitFor();
    assert.equal((await h.api(env.base, 'GET', '/api/endpoints/e2e-now')).body.spec.replicas, 4);
    h.assertNoProblems(page);
  }));

test('9: a region no monitor is known in is warned about, and the review\'s command box says GCO\'s CLI has no command', () =>
  withPage(async (page) => {
    await h.deployViaApi(env.base, { endpoint_name: 'e2e-region', image: 'img:1', target_regions: ['us-east-1'] });
    await openEndpoint(page, 'e2e-region');
    const warning = 'No GCO monitor is known in ap-south-1: this console\'s regions (--regions) are us-east-1, eu-west-1. Unless GCO is deployed there too, nothing renders the endpoint in ap-south-1 and it stays pending.';
    await page.getByLabel('Add a region', { exact: true }).fill('eu-west-1');
    assert.equal(await page.locator('.unmonitored-region').count(), 0, 'a known region');
    await page.getByLabel('Add a region', { exact: true }).fill('ap-south-1');
    assert.equal(await page.locator('.unmonitored-region').textContent(), warning);
    await page.getByRole('button', { name: 'Review region', exact: true }).click();
    const review = page.locator('section.review');
    await review.waitFor();
    assert.equal(await review.locator('.notes li').first().textContent(), warning);
    const box = review.getByLabel('gco inference commands');
    assert.equal(await box.textContent(), '# no gco inference command makes this change: the GCO CLI has no command to change an endpoint\'s regions');
    assert.equal(await review.getByRole('button', { name: 'Copy as CLI' }).isDisabled(), true);
    await h.screenshot(page, 'reviews-unknown-region', { fullPage: false });
    h.assertNoProblems(page);
  }));

test('6: a Model path on SGLang gets the console\'s hint beside GCO\'s message, and "Use it as MODEL" moves it', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-sglang-path');
    await page.getByLabel('Image', { exact: true }).fill('lmsysorg/sglang:v0.5.4');
    await page.waitForFunction(() => {
      const select = document.querySelector('[data-path="framework"] select');
      return select && [...select.options].some((o) => o.value === 'sglang');
    });
    await page.getByLabel('Framework', { exact: true }).selectOption('sglang');
    await page.getByLabel('Model path', { exact: true }).fill('Qwen/Qwen3-8B');
    // GCO's own rule and words, unchanged.
    const gco = "framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>";
    await h.field(page, 'env').locator('.messages li.error', { hasText: gco }).waitFor();
    // The console's own hint at the field.
    const note = h.field(page, 'model_path').locator('.model-path-note');
    await note.waitFor();
    assert.match(await note.textContent(), /^GCO does not hand the model path to SGLang: /);
    await h.screenshot(page, 'reviews-sglang-model-path', { fullPage: false });
    await note.getByRole('button', { name: 'Use it as MODEL', exact: true }).click();
    assert.equal(await page.getByLabel('Environment', { exact: true }).inputValue(), 'MODEL=Qwen/Qwen3-8B');
    assert.equal(await page.getByLabel('Model path', { exact: true }).inputValue(), '');
    await page.waitForFunction(() => !document.querySelector('[data-path="env"] .messages li.error'));
    assert.equal(await note.count(), 0);
    // One step: Undo puts the path back.
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    assert.equal(await page.getByLabel('Model path', { exact: true }).inputValue(), 'Qwen/Qwen3-8B');
    h.assertNoProblems(page);
  }));
