// The editor's Preview panel in Chromium: per-region objects and the GCO CLI
// commands follow each edit; Copy as CLI puts the commands on the clipboard;
// Manifests (YAML) shows and downloads a region's objects, and its errors.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const h = require('./harness.cjs');

const env = h.suite();

/** The objects shown for one region: kind, name, badges and top-level settings. */
async function objectsIn(page, region) {
  return page.locator(`details.region-plan[data-region="${region}"]`).evaluate((el) =>
    [...el.querySelectorAll(':scope > ul.tree > li.object')].map((li) => {
      const settings = {};
      const dl = li.querySelector(':scope > dl.settings');
      for (const dt of dl ? dl.querySelectorAll(':scope > dt') : []) {
        settings[dt.textContent] = dt.nextElementSibling.textContent;
      }
      return {
        kind: li.querySelector('.kind').textContent,
        name: li.querySelector('.name').textContent,
        badges: [...li.querySelectorAll(':scope > .badge')].map((b) => b.textContent),
        settings,
      };
    }),
  );
}

function find(objects, kind, name) {
  const o = objects.find((x) => x.kind === kind && x.name === name);
  assert.ok(o, `${kind} ${name} in ${objects.map((x) => `${x.kind} ${x.name}`).join(', ')}`);
  return o;
}

const commandsText = (page) => page.locator('.preview pre.commands').textContent();

function kvConfig(role, protocol) {
  const transfer = `{"kv_connector": "MooncakeConnector", "kv_role": "${role}", "kv_connector_extra_config": {"mooncake_protocol": "${protocol}", "device_name": ""}}`;
  const store = `{"kv_connector": "MooncakeStoreConnector", "kv_role": "${role}"}`;
  return `{"kv_connector": "MultiConnector", "kv_role": "${role}", "kv_connector_extra_config": {"connectors": [${transfer}, ${store}]}}`;
}

test('the Preview panel and Copy as CLI follow an edit', async () => {
  const context = await env.browser.newContext();
  try {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.base });
    const page = await h.newPage(context);
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('chat');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    await page.getByLabel('Prefill instances', { exact: true }).fill('2');
    await page.getByLabel('Decode instances', { exact: true }).fill('3');

    // No target regions named: the server's deployed regions (GET /api/config).
    const regions = page.locator('details.region-plan');
    await regions.nth(1).waitFor();
    assert.deepEqual(await regions.evaluateAll((els) => els.map((e) => e.dataset.region)), ['us-east-1', 'eu-west-1']);

    let objects = await objectsIn(page, 'us-east-1');
    assert.deepEqual(
      objects.map((o) => `${o.kind} ${o.name}`),
      [
        'ValidatingAdmissionPolicy gco-tenant-write-fence',
        'ValidatingAdmissionPolicyBinding gco-tenant-write-fence',
        'NetworkPolicy allow-inference-proxy-ingress',
        'Service mooncake-master',
        'StatefulSet mooncake-master',
        'NetworkPolicy allow-inference-internal',
        'NetworkPolicy allow-pod-to-master',
        'NetworkPolicy allow-pod-to-metadata',
        'NetworkPolicy allow-rdma-bootstrap',
        'ConfigMap chat-tls-proxy',
        'ConfigMap chat-mooncake',
        'Deployment chat-prefill',
        'Deployment chat-decode',
        'Service chat-prefill',
        'Service chat-decode',
        'ConfigMap chat-pd-proxy',
        'Secret chat-admin',
        'Deployment chat-proxy',
        'Service chat-proxy',
      ],
    );
    assert.deepEqual(find(objects, 'StatefulSet', 'mooncake-master').badges, ['shared']);
    // What GCO's base pass keeps there: the monitor never changes it.
    assert.deepEqual(find(objects, 'NetworkPolicy', 'allow-inference-proxy-ingress').badges, ['keep', 'shared', 'base pass']);
    // Every model Service publishes only the TLS sidecar's port.
    assert.equal(find(objects, 'Service', 'chat-proxy').settings.port, '8443');
    assert.match(find(objects, 'Deployment', 'chat-decode').settings.tls_sidecar, /^endpoint-tls-proxy: https :8443 -> 127\.0\.0\.1:8000$/);
    const prefill = find(objects, 'Deployment', 'chat-prefill');
    assert.equal(prefill.settings.replicas, '2');
    assert.equal(prefill.settings['efa.node_selector.mooncake-efa'], 'true', 'EFA placement over RDMA');
    assert.equal(prefill.settings['efa.tolerations[0].key'], 'vpc.amazonaws.com/efa');
    assert.equal(prefill.settings.kv_transfer_config, kvConfig('kv_producer', 'efa'));
    assert.equal(find(objects, 'Deployment', 'chat-decode').settings.kv_transfer_config, kvConfig('kv_consumer', 'efa'));
    assert.match(find(objects, 'ConfigMap', 'chat-mooncake').settings['mooncake.json'], /^\{"device_name": "", "global_segment_size": "4294967296", /);
    assert.equal(
      await commandsText(page),
      'gco inference deploy chat -i vllm/vllm-openai:v0.27.1 -r us-east-1 -r eu-west-1 --mooncake-mode both --prefill-replicas 2 --decode-replicas 3',
    );
    await h.screenshot(page, 'preview');

    // An edit: four prefill instances over TCP, with a store setting.
    await page.getByLabel('Prefill instances', { exact: true }).fill('4');
    await page.getByLabel('Transfer protocol', { exact: true }).selectOption('tcp');
    await page.getByLabel('Offload', { exact: true }).selectOption('disk');
    await page.waitForFunction(() => document.querySelector('.preview pre.commands')?.textContent.includes('--prefill-replicas 4'));
    objects = await objectsIn(page, 'eu-west-1');
    assert.equal(find(objects, 'Deployment', 'chat-prefill').settings.replicas, '4');
    assert.equal(find(objects, 'Deployment', 'chat-prefill').settings.kv_transfer_config, kvConfig('kv_producer', 'tcp'));
    const efaKeys = (o) => Object.keys(o.settings).filter((k) => k.startsWith('efa.'));
    assert.deepEqual(efaKeys(find(objects, 'Deployment', 'chat-prefill')), [], 'no EFA placement over TCP');
    const commands =
      'gco inference deploy chat -i vllm/vllm-openai:v0.27.1 -r us-east-1 -r eu-west-1 --mooncake-mode both --prefill-replicas 4 --decode-replicas 3 --mooncake-protocol tcp\n' +
      'gco inference configure-store chat --offload disk --enable-store';
    assert.equal(await commandsText(page), commands);

    await page.getByRole('button', { name: 'Copy as CLI', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Copied 2 commands.' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), commands);

    // An invalid count: no preview until it is fixed.
    await page.getByLabel('Prefill instances', { exact: true }).fill('0');
    await page.locator('.preview').getByText('Fix the errors to see what GCO will create.').waitFor();
    assert.equal(await page.locator('details.region-plan').count(), 0);
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('a change on the endpoint page shows its gco inference command', async () => {
  await h.deployViaApi(env.base, h.fullRequest('cli-review'));
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await page.goto(`${env.base}/endpoints/cli-review`);
    const prefill = page.getByLabel('New prefill count', { exact: true });
    await page.waitForFunction(() => document.getElementById('new-prefill')?.value === '2');
    await prefill.fill('5');
    await page.getByRole('button', { name: 'Review topology', exact: true }).click();
    const review = page.locator('section.review');
    await review.waitFor();
    assert.equal(await review.locator('pre.commands').textContent(), 'gco inference set-topology cli-review --prefill 5 --decode 3');
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('Manifests (YAML) shows a region\'s objects; an error is shown, and a retry shows them again', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('e2e-yaml');
    await page.getByLabel('Image', { exact: true }).fill('img:yaml');
    const region = page.locator('details.region-plan[data-region="us-east-1"]');
    const load = region.getByRole('button', { name: 'Manifests (YAML)', exact: true });
    const yaml = region.getByLabel('Kubernetes manifests');
    const alert = region.getByRole('alert');

    await load.click();
    await yaml.waitFor();
    const text = await yaml.textContent();
    assert.match(text, /^apiVersion: v1\nkind: List\nitems:\n/m);
    assert.match(text, /^\s+kind: Deployment\n/m);
    assert.match(text, /^\s+name: e2e-yaml$/m);
    assert.match(text, /image: img:yaml$/m);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      region.getByRole('link', { name: 'Download', exact: true }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'e2e-yaml-us-east-1.yaml');
    assert.equal(fs.readFileSync(await download.path(), 'utf8'), text, 'the file holds the YAML shown');

    // The server fails (the API's error shape), once the route is in place.
    const failed = [];
    await page.route('**/api/manifests', (route) => {
      failed.push(route.request().postDataJSON());
      return route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'e2e: the manifests could not be rendered', errors: [] }),
      });
    });
    await load.click();
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'No manifests: e2e: the manifests could not be rendered');
    assert.equal(await yaml.count(), 0, 'no YAML beside the error');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].region, 'us-east-1');
    assert.equal(failed[0].document.endpoint_name, 'e2e-yaml');

    // A retry reaches the server again.
    await page.unroute('**/api/manifests');
    await load.click();
    await yaml.waitFor();
    assert.equal(await yaml.textContent(), text);
    assert.equal(await alert.count(), 0, 'the error is gone');
    h.assertNoProblems(page, [500]);
  } finally {
    await context.close();
  }
});
