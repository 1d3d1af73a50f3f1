// The list in Chromium over a DynamoDB table that another program also
// writes: an item the console cannot read is named in a banner, and the
// records it can read are listed as usual.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const h = require('./harness.cjs');

const TABLE = 'gco-inference-endpoints';

const { dynamo } = h;

test('an item the console cannot read is named above the list', async () => {
  const port = await h.freePort();
  const dynalite = spawn(path.join(h.ROOT, 'node_modules', '.bin', 'dynalite'), ['--port', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  let backend;
  let browser;
  try {
    // Listening before the console creates its table there.
    await h.waitUntil(() => h.answers(endpoint), { what: 'dynalite to start' });
    backend = await h.startBackend({
      args: ['--dynamodb-endpoint', endpoint, '--dynamodb-region', 'us-east-1', '--dynamodb-table', TABLE, '--create-table', '--history-table', 'off'],
    });
    await h.deployViaApi(backend.url, { endpoint_name: 'e2e-readable', image: 'img:1' });
    // A state this console does not know, as a newer GCO might write.
    await dynamo(endpoint, 'PutItem', {
      TableName: TABLE,
      Item: { endpoint_name: { S: 'e2e-odd' }, desired_state: { S: 'paused' }, target_regions: { L: [] } },
    });
    browser = await h.launchBrowser();
    const page = await h.newPage(await browser.newContext());
    await page.goto(`${backend.url}/`);
    await page.getByRole('link', { name: 'e2e-readable', exact: true }).waitFor();
    const banner = page.getByRole('alert');
    assert.equal(
      (await banner.textContent()).trim(),
      "1 stored endpoint could not be read and is not listed:e2e-odd (desired_state: unknown state 'paused')",
    );
    assert.equal(await page.locator('.list tbody tr').count(), 1);
    h.assertNoProblems(page);
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (backend) await backend.stop();
    dynalite.kill('SIGKILL');
  }
});
