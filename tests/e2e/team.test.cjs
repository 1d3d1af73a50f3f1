// A console for a team (issue 32) in Chromium: named tokens with roles
// (`--auth token --tokens-file`), the header's identity, actions closed to
// a role with the reason on hover and for screen readers, the History tab
// (who, when, what, each change's diff, paging, a change made outside the
// console), a revert through the review with If-Match, and an endpoint
// that GCO purged deployed again from its history by an admin (on moto's
// DynamoDB, where the test can purge the record as GCO does).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness.cjs');

const TOKENS = {
  viewer: { name: 'vera-viewer', token: 'e2e-viewer-token-51c9a0' },
  operator: { name: 'otto-operator', token: 'e2e-operator-token-8d2f17' },
  admin: { name: 'ada-admin', token: 'e2e-admin-token-3be644' },
};

/** The tokens file: one `[[token]]` per role, the token's SHA-256 only. */
function tokensFile(dir) {
  const file = path.join(dir, 'tokens.toml');
  const entries = Object.entries(TOKENS).map(([role, t]) => {
    const sha = crypto.createHash('sha256').update(t.token).digest('hex');
    return `[[token]]\nname = "${t.name}"\nroles = ["${role}"]\nsha256 = "${sha}"\n`;
  });
  fs.writeFileSync(file, entries.join('\n'));
  return file;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-team-'));
const TOKENS_FILE = tokensFile(dir);
const env = h.suite({ args: ['--auth', 'token', '--tokens-file', TOKENS_FILE] });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const as = (role) => ({ Authorization: `Bearer ${TOKENS[role].token}` });

/** One API call with a role's token; asserts the status. */
async function call(base, role, method, route, body, status, headers = {}) {
  const r = await h.api(base, method, route, body, { ...as(role), ...headers });
  assert.equal(r.status, status, `${method} ${route}: ${JSON.stringify(r.body)}`);
  return r;
}

/** A plain endpoint (no Mooncake block), deployed by the operator. */
async function deploy(base, name) {
  return call(base, 'operator', 'POST', '/api/endpoints', { endpoint_name: name, image: 'nginx:1.27', target_regions: ['us-east-1'] }, 201);
}

/** A browser context whose tab holds `role`'s token (as the prompt keeps it). */
async function contextAs(role) {
  const context = await env.browser.newContext();
  await context.addInitScript((token) => sessionStorage.setItem('gco-console-token', token), TOKENS[role].token);
  return context;
}

async function openEndpoint(page, base, name, query = '') {
  await page.goto(`${base}/endpoints/${name}${query}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/** The header's identity: [name, role]. */
async function signedIn(page) {
  await page.locator('header .who-name').filter({ hasText: /./ }).waitFor();
  return [await page.locator('header .who-name').textContent(), await page.locator('header .badge.role').textContent()];
}

/**
 * How a control is closed: whether it is disabled (itself or by its
 * fieldset), the reason on hover (its own title or the nearest one it
 * inherits) and the text its group's aria-describedby names.
 */
async function closed(locator) {
  return locator.evaluate((el) => {
    const titled = el.closest('[title]');
    const group = el.closest('[aria-describedby]');
    const described = group && document.getElementById(group.getAttribute('aria-describedby'));
    return {
      disabled: el.matches(':disabled'),
      title: titled ? titled.getAttribute('title') : null,
      described: described ? described.textContent : null,
    };
  });
}

test('the token prompt opens on a read, and a viewer finds every change closed, with the reason', async () => {
  const base = env.base;
  await deploy(base, 'team-viewer');
  await call(base, 'operator', 'PUT', '/api/endpoints/team-viewer/replicas', { replicas: 2 }, 200);
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context, { viewport: { width: 1280, height: 900 } });
    const sent = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) sent.push({ method: r.method(), url: r.url(), auth: r.headers()['authorization'] || null });
    });
    // Every read needs an identity now: the list's own GET asks for the token.
    await page.goto(`${base}/`);
    const dialog = page.getByRole('dialog', { name: 'This server needs a token' });
    await dialog.waitFor();
    await page.getByLabel('Token', { exact: true }).fill(TOKENS.viewer.token);
    await page.getByRole('button', { name: 'Save token', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    // The list comes at once (no reload), and the header says who.
    await page.getByRole('link', { name: 'team-viewer' }).waitFor();
    assert.deepEqual(await signedIn(page), ['token:vera-viewer', 'viewer']);
    const afterSave = sent.filter((s) => s.method === 'GET' && !s.url.endsWith('/api/config'));
    assert.ok(afterSave.some((s) => s.auth === `Bearer ${TOKENS.viewer.token}` && s.url.includes('/api/endpoints')), 'reads carry the token');
    for (const s of sent) assert.ok(!s.url.includes(TOKENS.viewer.token), `no token in ${s.url}`);

    await page.getByRole('link', { name: 'team-viewer' }).click();
    await page.getByRole('heading', { level: 1, name: 'team-viewer' }).waitFor();
    await page.locator('.record').waitFor();
    const reason = 'Changing this endpoint needs the operator role; you are a viewer.';
    await page.locator('.actions .guard-reason').filter({ hasText: reason }).waitFor();
    for (const name of ['Review image', 'Review scale', 'Review region', 'Stop…']) {
      assert.deepEqual(await closed(page.getByRole('button', { name, exact: true })), { disabled: true, title: reason, described: reason }, name);
    }
    assert.equal(await page.getByLabel('Replicas', { exact: true }).isEditable(), false, 'the inputs are closed too');
    const deleting = 'Deleting this endpoint needs the admin role; you are a viewer.';
    assert.deepEqual(await closed(page.getByRole('button', { name: 'Review delete…' })), { disabled: true, title: deleting, described: deleting });
    await h.screenshot(page, 'team-viewer-endpoint');

    // The history is the viewer's to read; its reverts are closed too.
    await page.getByRole('tab', { name: 'History' }).click();
    await page.waitForURL(`${base}/endpoints/team-viewer?tab=history`);
    const entries = page.locator('.history li.entry');
    await entries.first().waitFor();
    assert.equal(await entries.count(), 2);
    assert.match(await entries.nth(0).locator('.entry-head').textContent(), /Changed\s*scale.*by token:otto-operator/);
    assert.match(await entries.nth(1).locator('.entry-head').textContent(), /^Deployed\s*\d{4}-.*by token:otto-operator/);
    const reverting = 'Reverting needs the operator role; you are a viewer.';
    await page.locator('.history > .guard-reason').filter({ hasText: reverting }).waitFor();
    assert.deepEqual(await closed(entries.nth(1).getByRole('button', { name: 'Revert to this…' })), { disabled: true, title: reverting, described: reverting });
    assert.equal(await entries.nth(0).locator('.badge').textContent(), 'Current');
    await h.screenshot(page, 'team-viewer-history');

    // The editor checks and previews for a viewer; Deploy is closed.
    await h.openEditor(page, base);
    const deploying = 'Deploying needs the operator role; you are a viewer.';
    await page.locator('.form-end .guard-reason').filter({ hasText: deploying }).waitFor();
    for (const b of await page.getByRole('button', { name: /^Deploy/ }).all()) {
      assert.deepEqual(await closed(b), { disabled: true, title: deploying, described: deploying });
    }
    h.assertNoProblems(page, [401]);
  } finally {
    await context.close();
  }
});

// Issue 43, item 11: a viewer is not invited to create. No "New endpoint"
// in the nav, the list's toolbar or its empty state (which says why), and
// the editor's Deploy says why right beside it, not only at the form's end.
test('a viewer is not invited to create, and a closed Deploy says why beside it', async () => {
  const context = await contextAs('viewer');
  try {
    const page = await h.newPage(context, { viewport: { width: 1280, height: 900 } });
    // An empty list: a fresh console of its own.
    const empty = await h.startBackend({ args: ['--auth', 'token', '--tokens-file', TOKENS_FILE] });
    try {
      await page.goto(`${empty.url}/`);
      assert.deepEqual(await signedIn(page), ['token:vera-viewer', 'viewer']);
      const emptyState = page.locator('.empty');
      await emptyState.waitFor();
      assert.match(await emptyState.innerText(), /Deploying needs the operator role; you are a viewer\. Endpoints your team deploys/);
      assert.equal(await emptyState.getByRole('link', { name: 'New endpoint' }).count(), 0);
      const nav = page.getByRole('navigation', { name: 'Main' });
      assert.equal(await nav.getByRole('link', { name: 'New endpoint' }).isVisible(), false);
      assert.equal(await page.locator('.list .toolbar').getByRole('link', { name: 'New endpoint' }).count(), 0);
      await h.screenshot(page, 'viewer-empty-list', { fullPage: false });
    } finally {
      await empty.stop();
    }

    await h.openEditor(page, env.base);
    const deploying = 'Deploying needs the operator role; you are a viewer.';
    const toolbarDeploy = page.locator('.toolbar').getByRole('button', { name: 'Deploy', exact: true });
    const reason = page.locator('.toolbar .guard-reason').filter({ hasText: deploying });
    await reason.waitFor();
    assert.ok(await reason.isVisible(), 'the reason is shown, not only read out');
    const [b, r] = [await toolbarDeploy.boundingBox(), await reason.boundingBox()];
    const gap = Math.max(0, r.y - (b.y + b.height), b.y - (r.y + r.height));
    assert.ok(gap < 40, `the reason is beside the button (${gap} px apart)`);
    await h.screenshot(page, 'viewer-deploy-reason', { fullPage: false });

    // An operator is still invited.
    const operator = await contextAs('operator');
    const p2 = await h.newPage(operator);
    await p2.goto(`${env.base}/`);
    assert.deepEqual(await signedIn(p2), ['token:otto-operator', 'operator']);
    await p2.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New endpoint' }).waitFor();
    await p2.locator('.list .toolbar').getByRole('link', { name: 'New endpoint' }).waitFor();
    await operator.close();
    h.assertNoProblems(page, [401]);
  } finally {
    await context.close();
  }
});

test('an operator changes an endpoint, reads it in the History tab, and reverts through the review', async () => {
  const base = env.base;
  await deploy(base, 'team-operator');
  const context = await contextAs('operator');
  try {
    const page = await h.newPage(context, { viewport: { width: 1280, height: 900 } });
    const changes = [];
    page.on('request', (r) => {
      if (r.method() !== 'GET' && r.url().includes('/api/endpoints/')) changes.push({ url: r.url(), ifMatch: r.headers()['if-match'] || null, body: r.postData() });
    });
    await openEndpoint(page, base, 'team-operator');
    await page.locator('.record').waitFor();
    assert.deepEqual(await signedIn(page), ['token:otto-operator', 'operator']);
    // Open to an operator, but deleting is an admin's.
    assert.equal((await closed(page.getByRole('button', { name: 'Review image', exact: true }))).disabled, false);
    assert.equal(await page.locator('.actions .guard-reason').count(), 1);
    const deleting = 'Deleting this endpoint needs the admin role; you are an operator.';
    assert.deepEqual(await closed(page.getByRole('button', { name: 'Review delete…' })), { disabled: true, title: deleting, described: deleting });
    await h.screenshot(page, 'team-operator-endpoint');

    await page.getByLabel('New image', { exact: true }).fill('nginx:1.28');
    await page.getByRole('button', { name: 'Review image', exact: true }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'update image: done.' }).waitFor();

    await page.getByRole('tab', { name: 'History' }).click();
    const entries = page.locator('.history li.entry');
    await entries.nth(1).waitFor();
    const newest = entries.nth(0);
    assert.equal(await newest.getAttribute('data-operation'), 'update-image');
    assert.match(await newest.locator('.entry-head').textContent(), /Changed\s*update-image.*by token:otto-operator/);
    const rows = await newest.locator('table.diff tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows.find(([f]) => f === 'spec.image'), ['spec.image', '"nginx:1.27"', '"nginx:1.28"']);
    assert.deepEqual(
      await page.locator('.history table.diff thead th').first().evaluate((th) => [...th.parentElement.children].map((c) => c.textContent)),
      ['Field', 'Before', 'After'],
      'the review\'s table, with the history\'s column names',
    );
    await h.screenshot(page, 'team-history');

    // Back to the deploy: the usual review, then Apply with If-Match.
    await entries.nth(1).getByRole('button', { name: 'Revert to this…' }).click();
    const review = page.locator('section.review');
    await review.waitFor();
    assert.match(await review.getByRole('heading').textContent(), /^Review: revert to the change of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC([+-]\d\d:\d\d)?$/);
    const reviewRows = await review.locator('table.diff tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(reviewRows.find(([f]) => f === 'spec.image'), ['spec.image', '"nginx:1.28"', '"nginx:1.27"']);
    await review.getByText('A revert puts back the spec').waitFor();
    await h.screenshot(page, 'team-revert-review');
    const { etag } = await call(base, 'operator', 'GET', '/api/endpoints/team-operator', undefined, 200);
    await review.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /revert to the change of .*: done\./ }).waitFor();
    const sentRevert = changes.find((c) => c.url.endsWith('/api/endpoints/team-operator/revert'));
    assert.ok(sentRevert, 'the revert was sent');
    assert.equal(sentRevert.ifMatch, etag, 'with the version it was reviewed at');
    assert.match(sentRevert.body, /^\{"to": ".+"\}$/);
    const stored = await call(base, 'operator', 'GET', '/api/endpoints/team-operator', undefined, 200);
    assert.equal(stored.body.spec.image, 'nginx:1.27');
    // The history follows at once: the revert is its newest entry, and the
    // deploy's state is current again.
    await page.locator('.history li.entry[data-operation=revert]').waitFor();
    assert.match(await entries.nth(0).locator('.entry-head').textContent(), /^Reverted\s*\d{4}-.*by token:otto-operator/);
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('the history pages by `next`, and shows a change made outside the console between two times', async () => {
  const base = env.base;
  await deploy(base, 'team-paging');
  for (let n = 2; n <= 56; n++) await call(base, 'operator', 'PUT', '/api/endpoints/team-paging/replicas', { replicas: n }, 200);
  const context = await contextAs('viewer');
  try {
    const page = await h.newPage(context);
    await openEndpoint(page, base, 'team-paging', '?tab=history');
    const entries = page.locator('.history li.entry');
    await entries.first().waitFor();
    assert.equal(await entries.count(), 50, 'the server\'s first page');
    await page.getByRole('button', { name: 'Show older changes' }).click();
    await page.locator('.history li.entry[data-operation=deploy]').waitFor();
    assert.equal(await entries.count(), 56);
    assert.equal(await page.getByRole('button', { name: 'Show older changes' }).isVisible(), false, 'no page after the last');

    // A change outside the console (GCO's CLI) as the server reports it.
    // The embedded store is this server's alone, so the answer is staged.
    const ext = {
      id: '2026-12-06T19:31:00.000000Z.00000001',
      at: '2026-12-06T19:31:00.000000+00:00',
      since: '2026-12-06T19:30:00.000000+00:00',
      who: null,
      operation: 'external',
      before: { endpoint_name: 'team-paging', desired_state: 'running', spec: { image: 'nginx:1.27', replicas: 56 } },
      after: { endpoint_name: 'team-paging', desired_state: 'running', spec: { image: 'nginx:1.27', replicas: 3 } },
    };
    await page.route('**/api/endpoints/team-paging/history', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ items: [ext], next: null }) }),
    );
    await page.reload();
    const only = page.locator('.history li.entry');
    await only.first().waitFor();
    const head = await only.first().locator('.entry-head').textContent();
    assert.match(head, /^Changed outside the console\s*between \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\S* and \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    assert.doesNotMatch(head, /\bby\b/);
    const rows = await only.first().locator('table.diff tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows, [['spec.replicas', '56', '3']]);
    await h.screenshot(page, 'team-history-external', { fullPage: false });
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('a purged endpoint keeps its history, and an admin deploys it again from there', async () => {
  const moto = await h.startMoto();
  const table = 'gco-e2e-team';
  const backend = await h.startBackend({
    args: [
      '--auth', 'token', '--tokens-file', TOKENS_FILE,
      '--dynamodb-endpoint', moto.endpoint, '--dynamodb-region', 'us-east-1', '--dynamodb-table', table, '--create-table',
    ],
  });
  const context = await contextAs('admin');
  try {
    const base = backend.url;
    await deploy(base, 'team-purged');
    await call(base, 'operator', 'PUT', '/api/endpoints/team-purged/replicas', { replicas: 3 }, 200);
    await call(base, 'admin', 'DELETE', '/api/endpoints/team-purged', undefined, 200);
    // GCO purges the record once every region reports its objects gone.
    await h.dynamo(moto.endpoint, 'DeleteItem', { TableName: table, Key: { endpoint_name: { S: 'team-purged' } } });
    const gone = await call(base, 'admin', 'GET', '/api/endpoints/team-purged', undefined, 404);
    assert.ok(gone);

    const page = await h.newPage(context, { viewport: { width: 1280, height: 900 } });
    await openEndpoint(page, base, 'team-purged');
    await page.getByText('There is no endpoint named "team-purged"').waitFor();
    const entries = page.locator('.history li.entry');
    await entries.nth(2).waitFor();
    assert.deepEqual(await entries.evaluateAll((lis) => lis.map((li) => li.dataset.operation)), ['delete', 'scale', 'deploy']);
    assert.equal(await entries.nth(0).getByRole('button').count(), 0, 'a revert never deletes');
    await entries.nth(1).getByRole('button', { name: 'Deploy again as this…' }).click();
    const review = page.locator('section.review');
    await review.waitFor();
    await review.getByText('The endpoint is gone').waitFor();
    const rows = await review.locator('table.diff tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows.find(([f]) => f === 'spec.replicas'), ['spec.replicas', '—', '3']);
    await h.screenshot(page, 'team-redeploy-review');
    await review.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /: done\.$/ }).waitFor();
    await page.locator('.record').waitFor();
    const back = await call(base, 'admin', 'GET', '/api/endpoints/team-purged', undefined, 200);
    assert.equal(back.body.spec.replicas, 3);
    assert.equal(back.body.desired_state, 'deploying');

    // An operator may not: the reason says whose it is.
    const other = await contextAs('operator');
    try {
      await h.dynamo(moto.endpoint, 'DeleteItem', { TableName: table, Key: { endpoint_name: { S: 'team-purged' } } });
      const p2 = await h.newPage(other);
      await openEndpoint(p2, base, 'team-purged');
      const reason = 'Deploying a deleted endpoint again needs the admin role; you are an operator.';
      await p2.locator('.history > .guard-reason').filter({ hasText: reason }).waitFor();
      const button = p2.locator('.history li.entry[data-operation=scale]').getByRole('button', { name: 'Deploy again as this…' });
      assert.deepEqual(await closed(button), { disabled: true, title: reason, described: reason });
      h.assertNoProblems(p2, [404]);
    } finally {
      await other.close();
    }
    h.assertNoProblems(page, [404]);
  } finally {
    await context.close();
    await backend.stop();
    moto.stop();
  }
});

test('a console without its history (--history-table off) says on every page that changes are not recorded', async () => {
  const dynalite = await h.startOnDynalite();
  const context = await env.browser.newContext();
  try {
    const base = dynalite.backend.url;
    assert.equal((await h.api(base, 'GET', '/api/config')).body.history, false);
    const page = await h.newPage(context);
    const notice = page.getByRole('note').filter({ hasText: 'Changes are not recorded' });
    for (const where of ['/', '/new']) {
      await page.goto(`${base}${where}`);
      await notice.waitFor();
    }
    await h.screenshot(page, 'team-unrecorded', { fullPage: false });
    h.assertNoProblems(page);
  } finally {
    await context.close();
    await dynalite.stop();
  }
});
