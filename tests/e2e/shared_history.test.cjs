// The history on a table GCO's CLI and monitors share (moto's DynamoDB, which
// has the transactions history needs), in Chromium (issue 43): a change made
// outside the console keeps the window it was first shown with, whatever the
// monitors and later changes do; and "Deploy again" of a purged endpoint
// reviews the record with who applies it as its creator.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness.cjs');

const TABLE = 'gco-e2e-shared';
const TOKENS = {
  oscar: { token: 'e2e-oscar-token-7c1d55', roles: ['admin'] },
  ada: { token: 'e2e-ada-token-0e93b2', roles: ['admin'] },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-shared-'));
const env = { moto: null, backend: null, browser: null };

test.before(async () => {
  const file = path.join(dir, 'tokens.toml');
  fs.writeFileSync(
    file,
    Object.entries(TOKENS)
      .map(([name, t]) => `[[token]]\nname = "${name}"\nroles = ${JSON.stringify(t.roles)}\nsha256 = "${crypto.createHash('sha256').update(t.token).digest('hex')}"\n`)
      .join('\n'),
  );
  env.moto = await h.startMoto();
  env.backend = await h.startBackend({
    args: ['--auth', 'token', '--tokens-file', file, '--dynamodb-endpoint', env.moto.endpoint, '--dynamodb-region', 'us-east-1', '--dynamodb-table', TABLE, '--create-table'],
  });
  env.browser = await h.launchBrowser();
});

test.after(async () => {
  if (env.browser) await env.browser.close().catch(() => {});
  if (env.backend) await env.backend.stop();
  if (env.moto) env.moto.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One API call as `who`; asserts the status. */
async function call(who, method, route, body, status) {
  const r = await h.api(env.backend.url, method, route, body, { Authorization: `Bearer ${TOKENS[who].token}` });
  assert.equal(r.status, status, `${method} ${route}: ${JSON.stringify(r.body)}`);
  return r;
}

/** A page whose tab holds `who`'s token (as the prompt keeps it). */
async function withPageAs(who, fn) {
  const context = await env.browser.newContext();
  await context.addInitScript((token) => sessionStorage.setItem('gco-console-token', token), TOKENS[who].token);
  try {
    await fn(await h.newPage(context));
  } finally {
    await context.close();
  }
}

const gcoTime = h.gcoTime;

/** Waits for the clock's next whole second: a time no earlier write shares. */
function nextSecond() {
  const now = Math.floor(Date.now() / 1000);
  return h.waitUntil(() => Math.floor(Date.now() / 1000) > now, { interval: 10, what: 'the next second' });
}

test('4: an outside change keeps the window first shown, after monitor writes and a later console change', () =>
  withPageAs('ada', async (page) => {
    const base = env.backend.url;
    await call('oscar', 'POST', '/api/endpoints', { endpoint_name: 'e2e-window', image: 'img:1', target_regions: ['us-east-1'] }, 201);
    await call('oscar', 'PUT', '/api/endpoints/e2e-window/replicas', { replicas: 2 }, 200);
    // GCO's CLI scales it: its own update of the shared table.
    await h.dynamo(env.moto.endpoint, 'UpdateItem', {
      TableName: TABLE,
      Key: { endpoint_name: { S: 'e2e-window' } },
      UpdateExpression: 'SET spec.replicas = :r, updated_at = :u',
      ExpressionAttributeValues: { ':r': { N: '5' }, ':u': { S: gcoTime() } },
    });
    await page.goto(`${base}/endpoints/e2e-window?tab=history`);
    const external = page.locator('.history li.entry[data-operation=external] .entry-head');
    await external.waitFor();
    assert.match(await external.textContent(), /^Changed outside the console\s*between /);
    // The window as the page holds it: its end, and both ends in full on hover.
    const window = () => external.locator('time.when').evaluate((t) => [t.getAttribute('datetime'), t.getAttribute('title'), t.textContent]);
    const shown = await window();

    // In a later second GCO's monitor writes status (moving updated_at),
    // and in a later one still the console changes the endpoint again.
    await nextSecond();
    await h.dynamo(env.moto.endpoint, 'UpdateItem', {
      TableName: TABLE,
      Key: { endpoint_name: { S: 'e2e-window' } },
      UpdateExpression: 'SET region_status.#r = :s, updated_at = :u',
      ExpressionAttributeNames: { '#r': 'us-east-1' },
      ExpressionAttributeValues: { ':s': { M: { state: { S: 'running' }, last_sync: { S: gcoTime() } } }, ':u': { S: gcoTime() } },
    });
    await nextSecond();
    await call('ada', 'PUT', '/api/endpoints/e2e-window/replicas', { replicas: 7 }, 200);

    await page.reload();
    await page.locator('.history li.entry[data-operation=scale]').first().waitFor();
    const operations = await page.locator('.history li.entry').evaluateAll((lis) => lis.map((li) => li.dataset.operation));
    assert.deepEqual(operations, ['scale', 'external', 'scale', 'deploy']);
    assert.deepEqual(await window(), shown, 'the window never widens');
    const rows = await page
      .locator('.history li.entry[data-operation=external] table.diff tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows, [['spec.replicas', '2', '5']]);
    await h.screenshot(page, 'shared-history-window', { fullPage: false });
    h.assertNoProblems(page);
  }));

test('7: "Deploy again" reviews the record created by who applies it', () =>
  withPageAs('ada', async (page) => {
    const base = env.backend.url;
    await call('oscar', 'POST', '/api/endpoints', { endpoint_name: 'e2e-again', image: 'img:1', target_regions: ['us-east-1'] }, 201);
    await call('oscar', 'PUT', '/api/endpoints/e2e-again/replicas', { replicas: 3 }, 200);
    await call('oscar', 'DELETE', '/api/endpoints/e2e-again', undefined, 200);
    // GCO purges the record once every region reports its objects gone.
    await h.dynamo(env.moto.endpoint, 'DeleteItem', { TableName: TABLE, Key: { endpoint_name: { S: 'e2e-again' } } });

    await page.goto(`${base}/endpoints/e2e-again`);
    await page.getByText('There is no endpoint named "e2e-again"').waitFor();
    await page.locator('header .who-name').filter({ hasText: 'token:ada' }).waitFor();
    const entry = page.locator('.history li.entry[data-operation=scale]');
    await entry.getByRole('button', { name: 'Deploy again as this…' }).click();
    const review = page.locator('section.review');
    await review.waitFor();
    const rows = await review.locator('table.diff tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows.find(([f]) => f === 'created_by'), ['created_by', '—', '"token:ada"']);
    await h.screenshot(page, 'shared-history-deploy-again');
    await review.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /: done\.$/ }).waitFor();
    const back = await call('ada', 'GET', '/api/endpoints/e2e-again', undefined, 200);
    assert.equal(back.body.created_by, 'token:ada', 'as reviewed');
    h.assertNoProblems(page, [404]);
  }));
