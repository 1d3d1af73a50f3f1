// What a second user trial found (issue 35), items 1 to 5: each test fails
// on the console before the fix.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness.cjs');

const env = h.suite();

async function withPage(fn, options = {}) {
  const context = await env.browser.newContext(options.context || {});
  try {
    const page = await h.newPage(context, options);
    await fn(page, context);
  } finally {
    await context.close();
  }
}

const deployEnabled = (page) => page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);

/** Opens the endpoint's page, clicks Clone and waits for the editor. */
async function cloneOf(page, name) {
  await page.goto(`${env.base}/endpoints/${name}`);
  await page.getByRole('button', { name: 'Clone' }).click();
  await page.waitForURL(`${env.base}/new`);
  await page.getByText(`Cloned from ${name}`).waitFor();
}

/** The editor's request, as its JSON view shows it. */
async function editorRequest(page) {
  await page.getByRole('button', { name: 'JSON', exact: true }).click();
  const text = await page.getByLabel('Deploy request (JSON)').inputValue();
  await page.getByRole('button', { name: 'Form', exact: true }).click();
  return JSON.parse(text);
}

test('1: Clone shows the Mooncake block in the form, and editing keeps it', () =>
  withPage(async (page) => {
    const request = h.fullRequest('e2e-clone-both', {
      prefill_replicas: 2,
      decode_replicas: 5,
      image: 'vllm/vllm-openai:v0.27.1',
      mooncake_store: { enabled: true, global_segment_size: '9000000000' },
      mooncake_proxy: { image: 'proxy/pd:2' },
      labels: { team: 'a' },
    });
    await h.deployViaApi(env.base, request);
    const record = (await h.api(env.base, 'GET', '/api/endpoints/e2e-clone-both')).body;
    await cloneOf(page, 'e2e-clone-both');
    const value = (label) => page.getByLabel(label, { exact: true }).inputValue();
    assert.equal(await value('Mooncake mode'), 'both');
    assert.equal(await value('Prefill instances'), '2');
    assert.equal(await value('Decode instances'), '5');
    assert.match(await value('Global segment size'), /^9 GB$/);
    assert.equal(await value('Proxy image'), 'proxy/pd:2');
    assert.equal(await value('Transfer protocol'), 'tcp');
    assert.equal(await page.getByLabel('Labels', { exact: true }).inputValue(), 'team=a');
    await h.screenshot(page, 'trial2-clone-form');
    // An edit elsewhere keeps the block.
    await page.getByLabel('GPU type', { exact: true }).fill('g5.12xlarge');
    await deployEnabled(page);
    const req = await editorRequest(page);
    const v = await h.api(env.base, 'POST', '/api/validate', req);
    assert.equal(v.body.ok, true, JSON.stringify(v.body));
    assert.deepEqual(v.body.spec.mooncake, record.spec.mooncake);
    h.assertNoProblems(page);
  }));

/**
 * Every value the form shows, typed again as it shows it: the Clone ->
 * form -> request round trip of each golden request's record.
 */
test('1: every golden record round-trips through Clone, the form and back', () =>
  withPage(async (page) => {
    const golden = JSON.parse(fs.readFileSync(path.join(h.ROOT, 'core/tests/golden/requests.json'), 'utf8'));
    for (const [key, request] of Object.entries(golden)) {
      const name = `e2e-golden-${key}`;
      await h.deployViaApi(env.base, { ...request, endpoint_name: name });
      const record = (await h.api(env.base, 'GET', `/api/endpoints/${name}`)).body;
      await cloneOf(page, name);
      await page.evaluate(() => {
        for (const el of document.querySelectorAll('.form .field input, .form .field select, .form .field textarea')) {
          if (el.tagName === 'SELECT' || el.type === 'checkbox') el.dispatchEvent(new Event('change', { bubbles: true }));
          else el.dispatchEvent(new Event('input', { bubbles: true }));
        }
      });
      // The block is in the form's fields, not shown as is.
      assert.equal(await page.locator('.other-fields pre', { hasText: '"mooncake"' }).count(), 0, key);
      const req = await editorRequest(page);
      const v = await h.api(env.base, 'POST', '/api/validate', req);
      assert.equal(v.body.ok, true, `${key}: ${JSON.stringify(v.body)}`);
      assert.deepEqual(v.body.spec, record.spec, key);
      await page.getByRole('button', { name: 'Start over' }).click();
    }
    h.assertNoProblems(page);
  }));

test('1: a link with a block the fields cannot build shows it as it is', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    await page.getByLabel('Deploy request (JSON)').fill(
      JSON.stringify({
        endpoint_name: 'e2e-block',
        image: 'img:1',
        mooncake: { mode: 'disaggregated', topology: { prefill: 3, decode: 4 } },
        mooncake_transfer_typo: 1,
      }),
    );
    await page.getByRole('button', { name: 'Form', exact: true }).click();
    const others = page.locator('.other-fields pre');
    await others.filter({ hasText: '"prefill": 3' }).waitFor();
    assert.match(await others.textContent(), /"mooncake_transfer_typo": 1/);
    assert.equal(await page.getByLabel('Mooncake mode', { exact: true }).count(), 0);
    assert.equal(await page.locator('.topology .prefill .count').textContent(), '3');
    h.assertNoProblems(page);
  }));
