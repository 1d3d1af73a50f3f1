// What a second user trial found (issue 35), items 1 to 5: each test fails
// on the console before the fix.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness.cjs');

// Item 3: us-east-1's monitor has a master image, eu-west-1's has none.
const SETTINGS = path.join(require('node:os').tmpdir(), `gco-e2e-monitors-${process.pid}.toml`);
fs.writeFileSync(SETTINGS, '[default]\ncluster_name = "gco-cluster"\n\n[regions.us-east-1]\nmaster_image = "mooncake/master:0.3.6"\n');
const env = h.suite({ args: ['--monitor-settings', SETTINGS] });

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
    await page.setViewportSize({ width: 420, height: 900 });
    await h.screenshot(page, 'trial2-clone-form-420');
    await page.setViewportSize({ width: 1280, height: 720 });
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
      // The form shows the block.
      const block = record.spec.mooncake;
      const value = (label) => page.getByLabel(label, { exact: true }).inputValue();
      assert.equal(await value('Mooncake mode'), block ? block.mode : '', key);
      if (block && block.topology) {
        assert.equal(await value('Prefill instances'), String(block.topology.prefill), key);
        assert.equal(await value('Decode instances'), String(block.topology.decode), key);
      }
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

test('2: a lost server shows within one poll interval and clears on recovery', () =>
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

test('2: ages tick, and a region silent for three monitor passes is stale, in the page and the list', async () => {
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

test('3: a region without a master image is a warning at the field, in the editor and the server; the preview uses the settings', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-master');
    await page.getByLabel('Target regions', { exact: true }).fill('us-east-1, eu-west-1');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    const at = h.field(page, 'mooncake.store.master_image');
    await at.locator('.messages li.warning').first().waitFor();
    const messages = await h.messagesAt(page, 'mooncake.store.master_image');
    assert.equal(messages.length, 1, messages.join('\n'));
    assert.match(messages[0], /^eu-west-1 has no master image/);
    assert.doesNotMatch(await page.locator('#summary-title').textContent(), /No problems/);
    // Deploy stays enabled: a warning.
    await deployEnabled(page);
    // The server agrees.
    const req = await editorRequest(page);
    const v = await h.api(env.base, 'POST', '/api/validate', req);
    assert.deepEqual(
      v.body.warnings.filter((w) => w.path === 'mooncake.store.master_image').map((w) => w.message),
      messages,
    );
    // us-east-1's preview uses its monitor's master image.
    const region = page.locator('details.region-plan[data-region="us-east-1"]');
    await region.evaluate((d) => (d.open = true));
    await region.getByRole('button', { name: 'Manifests (YAML)', exact: true }).click();
    const yaml = region.getByLabel('Kubernetes manifests');
    await yaml.waitFor();
    assert.match(await yaml.textContent(), /image: mooncake\/master:0\.3\.6$/m);
    await h.screenshot(page, 'trial2-master-image-warning');
    await page.setViewportSize({ width: 420, height: 900 });
    await at.scrollIntoViewIfNeeded();
    await h.screenshot(page, 'trial2-master-image-warning-420', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 720 });
    // A master image in the request ends the warning.
    await page.getByLabel('Master image', { exact: true }).fill('mooncake/master:0.3.7');
    await page.waitForFunction(() => !document.querySelector('[data-path="mooncake.store.master_image"] .messages li'));
    h.assertNoProblems(page);
  }));

test('4: a name Kubernetes refuses for a Service is an error in the editor and the server; a stored one still opens and deletes', async () => {
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
    const v = await h.api(base, 'POST', '/api/validate', await editorRequest(page));
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

test('5: a region status shows its message and unknown fields; degraded and failed are problems', async () => {
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

// Items 6 to 12.

test('6: the review takes focus, is a dialog, closes on Escape, and focus returns after Apply', () =>
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

test('8: an env line without "=" is not sent and said so; a label Kubernetes refuses is an error; a zero segment warns', () =>
  withPage(async (page) => {
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-coerce');
    await page.getByLabel('Image', { exact: true }).fill('img:1');
    await page.getByLabel('Environment', { exact: true }).fill('A=1\nFOO');
    const note = h.field(page, 'env').locator('.pairs-note');
    await note.filter({ hasText: "line 2: 'FOO' has no '='" }).waitFor();
    assert.deepEqual((await editorRequest(page)).env, { A: '1' });
    await page.getByLabel('Labels', { exact: true }).fill('bad label=x');
    await h.field(page, 'labels').locator('.messages li.error', { hasText: "labels key 'bad label' is not a Kubernetes label key" }).waitFor();
    await page.getByLabel('Labels', { exact: true }).fill('team=a');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('store');
    await page.getByLabel('Global segment size', { exact: true }).fill('0');
    await h.field(page, 'mooncake.store.global_segment_size').locator('.messages li.warning', { hasText: 'global_segment_size is 0' }).waitFor();
    h.assertNoProblems(page);
  }));

test('9, 10: a review outdated by a change elsewhere says so before Apply and offers to review again; the notice goes once done', () =>
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

test('10: after the token prompt the action is sent again, and its banner goes', async () => {
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

test('11: the endpoint page shows replicas, labels, the ingress path, a canary and what State means', () =>
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

test('12: not found, chips that do not break, steppers at their bounds, the search box in dark mode', () =>
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

test('9: an image that is no reference is refused; a no-op change cannot be applied, and says why', () =>
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

test('1: a share link with the block given as is opens with it in the form fields', () =>
  withPage(async (page) => {
    await page.goto(`${env.base}/`);
    const request = {
      endpoint_name: 'e2e-link-block',
      image: 'img:1',
      mooncake: { mode: 'both', topology: { prefill: 2, decode: 5 }, store: { global_segment_size: '9000000000', enabled: true }, proxy: { image: 'img:1' } },
    };
    const fragment = await page.evaluate(async (t) => {
      const stream = new Blob([t]).stream().pipeThrough(new CompressionStream('deflate-raw'));
      const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
      let bin = '';
      for (const b of bytes) bin += String.fromCharCode(b);
      return '#s=' + btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    }, JSON.stringify(request));
    await h.openEditor(page, env.base, fragment);
    const value = (label) => page.getByLabel(label, { exact: true }).inputValue();
    await page.waitForFunction(() => document.getElementById('f-mooncake-mode') && document.getElementById('f-mooncake-mode').value === 'both');
    assert.equal(await value('Prefill instances'), '2');
    assert.equal(await value('Decode instances'), '5');
    assert.equal(await value('Global segment size'), '9 GB');
    assert.equal(await value('Proxy image'), 'img:1');
    const v = await h.api(env.base, 'POST', '/api/validate', await editorRequest(page));
    const direct = await h.api(env.base, 'POST', '/api/validate', request);
    assert.deepEqual(v.body.spec, direct.body.spec);
    h.assertNoProblems(page);
  }));
