// GCO's SGLang release in Chromium: the editor offers the frameworks the
// server accepts, asks an SGLang endpoint for its model, and previews GCO's
// launcher; a `tgi` record (written to DynamoDB by a console on an older
// GCO's list) is marked in the list, warned about on its page, and cloned
// onto SGLang with its model carried over.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

const env = h.suite();

const frameworkOptions = (page) =>
  page.getByLabel('Framework', { exact: true }).locator('option').evaluateAll((os) => os.map((o) => o.value));

test('an SGLang endpoint: the model is asked for, and the preview shows GCO\'s launcher', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('chat');
    await page.getByLabel('Image', { exact: true }).fill('lmsysorg/sglang:v0.5.4');
    await page.waitForFunction(() => {
      const select = document.querySelector('[data-path="framework"] select');
      return select && [...select.options].some((o) => o.value === 'sglang');
    });
    assert.deepEqual(await frameworkOptions(page), ['', 'vllm', 'sglang'], 'the server\'s frameworks, no tgi');
    await page.getByLabel('Framework', { exact: true }).selectOption('sglang');

    const model = "framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>";
    await page.waitForFunction(
      (m) => [...document.querySelectorAll('[data-path="env"] .messages li')].some((li) => li.textContent === m),
      model,
    );
    const deploy = page.getByRole('button', { name: 'Deploy', exact: true }).first();
    assert.equal(await deploy.isDisabled(), true, 'no deploy without a model');

    await page.getByLabel('Environment', { exact: true }).fill('MODEL=Qwen/Qwen3-8B');
    await page.waitForFunction(() => !document.querySelector('[data-path="env"] .messages li'));
    assert.equal(await deploy.isDisabled(), false);

    const region = page.locator('details.region-plan[data-region="us-east-1"]');
    await region.waitFor();
    // The Deployment's settings: the base pass's objects and the sidecar's
    // program come first.
    const deployment = region.locator('li.object').filter({ has: page.locator('.kind', { hasText: /^Deployment$/ }) }).first();
    const launcher = await deployment.locator('dl.settings').first().textContent();
    assert.match(launcher, /sglang\.launch_server/);
    await region.getByRole('button', { name: 'Manifests (YAML)', exact: true }).click();
    const yaml = region.getByLabel('Kubernetes manifests');
    await yaml.waitFor();
    const text = await yaml.textContent();
    for (const line of ['- sglang.launch_server', '- --model-path', '- $(MODEL)', 'startupProbe:', 'failureThreshold: 80', 'periodSeconds: 15', 'name: endpoint-tls-proxy', 'operator: NotIn']) {
      assert.ok(text.includes(line), `${line} in\n${text}`);
    }
    await yaml.scrollIntoViewIfNeeded();
    await h.screenshot(page, 'frameworks-sglang-preview');
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('a tgi record from DynamoDB is marked, warned about and cloned onto SGLang', async () => {
  const table = await h.startOnDynalite();
  // A console on an older GCO's list wrote it to the shared table.
  const older = await h.startBackend({
    args: ['--dynamodb-endpoint', table.endpoint, '--dynamodb-region', 'us-east-1', '--history-table', 'off', '--frameworks', 'vllm,tgi'],
  });
  const context = await env.browser.newContext();
  try {
    await h.deployViaApi(older.url, {
      endpoint_name: 'legacy-chat',
      image: 'ghcr.io/huggingface/text-generation-inference:3.3.4',
      framework: 'tgi',
      env: { MODEL_ID: 'Qwen/Qwen3-8B' },
      extra_args: ['--max-input-length', '4096'],
      target_regions: ['us-east-1'],
    });
    const base = table.backend.url;
    const page = await h.newPage(context);

    await page.goto(`${base}/`);
    const row = page.locator('tr[data-name="legacy-chat"]');
    await row.locator('.badge.unserved').waitFor();
    assert.equal(await row.locator('.badge.unserved').textContent(), 'tgi: not served');
    await h.screenshot(page, 'frameworks-tgi-list');

    await row.getByRole('link', { name: 'legacy-chat' }).click();
    const warning = page.locator('.banner.unserved');
    await warning.waitFor();
    assert.match(await warning.textContent(), /GCO does not serve this endpoint\. Its framework 'tgi' is not one this GCO accepts \(vllm, sglang\)/);
    // No "Try it" for a framework GCO's invoke no longer knows.
    assert.equal(await page.locator('section.try-it').count(), 0);
    await h.screenshot(page, 'frameworks-tgi-warning');

    await warning.getByRole('button', { name: 'Clone with sglang', exact: true }).click();
    await page.getByLabel('Endpoint name', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Endpoint name', { exact: true }).inputValue(), 'legacy-chat-copy');
    assert.equal(await page.getByLabel('Framework', { exact: true }).inputValue(), 'sglang');
    assert.equal(await page.getByLabel('Image', { exact: true }).inputValue(), 'lmsysorg/sglang:latest');
    assert.equal(await page.getByLabel('Environment', { exact: true }).inputValue(), 'MODEL=Qwen/Qwen3-8B');
    assert.equal(await page.getByLabel('Extra args', { exact: true }).inputValue(), '--max-input-length\n4096');
    await h.screenshot(page, 'frameworks-clone-with-sglang');

    await page.getByRole('button', { name: 'Deploy', exact: true }).first().click();
    await page.waitForURL(/\/endpoints\/legacy-chat-copy$/);
    const deployed = await h.api(base, 'GET', '/api/endpoints/legacy-chat-copy');
    assert.equal(deployed.body.spec.framework, 'sglang');
    assert.deepEqual(deployed.body.spec.env, { MODEL: 'Qwen/Qwen3-8B' });
    await page.locator('section.try-it pre.commands').waitFor();
    assert.match(await page.locator('section.try-it pre.commands').textContent(),
      /^gco inference models legacy-chat-copy --framework sglang --region us-east-1\ngco inference invoke legacy-chat-copy -p 'Hello, my name is' --path \/generate --region us-east-1$/);
    await h.screenshot(page, 'frameworks-sglang-endpoint');
    h.assertNoProblems(page);
  } finally {
    await context.close();
    await older.stop();
    await table.stop();
  }
});
