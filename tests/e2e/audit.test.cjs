// Issue 43, in Chromium: the audit view (/history: every endpoint's
// changes, filtered by who, operation, endpoint, a search and days, each
// linking to its entry, exported as JSON Lines and CSV; a viewer reads it),
// the History tab (diffs closed until opened, filters, a link to one entry
// that opens and scrolls to it, "Revert to this…" keeping the place), times
// with their zone, and the editor saying at once that a name is taken.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness.cjs');

const TOKENS = {
  viewer: { name: 'vera', token: 'e2e-audit-viewer-7f1c' },
  operator: { name: 'otto', token: 'e2e-audit-operator-93ab' },
  admin: { name: 'ada', token: 'e2e-audit-admin-0d4e' },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-audit-'));
const TOKENS_FILE = path.join(dir, 'tokens.toml');
fs.writeFileSync(
  TOKENS_FILE,
  Object.entries(TOKENS)
    .map(([role, t]) => `[[token]]\nname = "${t.name}"\nroles = ["${role}"]\nsha256 = "${crypto.createHash('sha256').update(t.token).digest('hex')}"\n`)
    .join('\n'),
);
const env = h.suite({ args: ['--auth', 'token', '--tokens-file', TOKENS_FILE] });
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function call(role, method, route, body, status) {
  const r = await h.api(env.base, method, route, body, { Authorization: `Bearer ${TOKENS[role].token}` });
  assert.equal(r.status, status, `${method} ${route}: ${JSON.stringify(r.body)}`);
  return r;
}

const deploy = (role, name) => call(role, 'POST', '/api/endpoints', { endpoint_name: name, image: 'nginx:1.27', target_regions: ['us-east-1'] }, 201);
const scale = (role, name, n) => call(role, 'PUT', `/api/endpoints/${name}/replicas`, { replicas: n }, 200);

async function contextAs(role, options = {}) {
  const context = await env.browser.newContext({ acceptDownloads: true, ...options });
  await context.addInitScript((token) => sessionStorage.setItem('gco-console-token', token), TOKENS[role].token);
  return context;
}

/** The audit table's rows as [endpoint, operation, who]. */
const rowsOf = (page) =>
  page.locator('table.audit-table tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.dataset.endpoint, tr.dataset.operation, tr.querySelector('td.who').textContent]),
  );

test('the audit view lists every change, filters it in the address, links each to its entry and exports it', async () => {
  await deploy('operator', 'audit-alpha');
  await deploy('operator', 'audit-beta');
  await deploy('admin', 'audit-gamma');
  await scale('operator', 'audit-alpha', 2);
  await scale('admin', 'audit-beta', 3);
  await call('operator', 'POST', '/api/endpoints/audit-gamma/stop', undefined, 200);
  const made = [
    ['audit-gamma', 'stop', 'token:otto'],
    ['audit-beta', 'scale', 'token:ada'],
    ['audit-alpha', 'scale', 'token:otto'],
    ['audit-gamma', 'deploy', 'token:ada'],
    ['audit-beta', 'deploy', 'token:otto'],
    ['audit-alpha', 'deploy', 'token:otto'],
  ];
  const context = await contextAs('viewer');
  try {
    const page = await h.newPage(context, { viewport: { width: 1280, height: 900 } });
    await page.goto(`${env.base}/`);
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page.waitForURL(`${env.base}/history`);
    await page.locator('table.audit-table tbody tr').nth(5).waitFor();
    const audit = (await rowsOf(page)).filter(([e]) => e.startsWith('audit-'));
    assert.deepEqual(audit, made, 'every change, newest first, a viewer reading');
    // Each time shows its zone, with UTC on hover.
    const time = page.locator('table.audit-table tbody tr').first().locator('time');
    assert.match(await time.textContent(), / UTC([+-]\d\d:\d\d)?$/);
    assert.match(await time.getAttribute('title'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);

    // Filters apply as they change, and stand in the address.
    await page.getByLabel('Operation', { exact: true }).selectOption('scale');
    await page.waitForURL(/\/history\?operation=scale$/);
    await h.waitUntil(async () => (await rowsOf(page)).length === 2, { what: 'the scale changes only' });
    await page.getByLabel('Who', { exact: true }).fill('token:otto');
    await page.getByLabel('Who', { exact: true }).press('Enter');
    await page.waitForURL(/who=token%3Aotto/);
    await h.waitUntil(async () => JSON.stringify(await rowsOf(page)) === JSON.stringify([made[2]]), { what: 'scale by otto' });
    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    await page.getByLabel('From', { exact: true }).fill(day);
    await page.getByLabel('To', { exact: true }).fill(day);
    await page.waitForURL(/from=.*&to=/);
    await h.waitUntil(async () => (await rowsOf(page)).length === 1, { what: 'today keeps it' });
    await h.screenshot(page, 'audit-view-filters');
    // A reload keeps them.
    await page.reload();
    await h.waitUntil(async () => JSON.stringify(await rowsOf(page)) === JSON.stringify([made[2]]), { what: 'the same after a reload' });
    assert.equal(await page.getByLabel('Operation', { exact: true }).inputValue(), 'scale');

    // The search over names, alone.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL(`${env.base}/history`);
    await page.getByLabel('Search endpoints', { exact: true }).fill('GAM');
    await page.getByLabel('Search endpoints', { exact: true }).press('Enter');
    await h.waitUntil(async () => JSON.stringify(await rowsOf(page)) === JSON.stringify([made[0], made[3]]), { what: 'gamma only' });
    await h.screenshot(page, 'audit-view-search');

    // The export of the filtered set.
    const download = async (button) => {
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
      return { name: file.suggestedFilename(), text: fs.readFileSync(await file.path(), 'utf8') };
    };
    const jsonl = await download('Export JSON Lines');
    assert.equal(jsonl.name, 'gco-history.jsonl');
    assert.deepEqual(jsonl.text.trim().split('\n').map((l) => JSON.parse(l)).map((e) => [e.endpoint, e.operation, e.who]), [made[0], made[3]]);
    const csv = await download('Export CSV');
    assert.equal(csv.name, 'gco-history.csv');
    const lines = csv.text.trim().split('\r\n');
    assert.equal(lines[0], 'at,endpoint,operation,who,id,request_id,client_request_id');
    assert.deepEqual(lines.slice(1).map((l) => l.split(',').slice(1, 4)), [made[0], made[3]]);

    // Each change leads to its entry on its endpoint's History tab.
    const { body } = await call('viewer', 'GET', '/api/history?endpoint=audit-gamma&operation=deploy', undefined, 200);
    const id = body.items[0].id;
    await page.locator('table.audit-table tbody tr[data-operation=deploy] a').click();
    await page.waitForURL(`${env.base}/endpoints/audit-gamma?tab=history&entry=${encodeURIComponent(id)}`);
    const linked = page.locator('.history li.entry.linked');
    await linked.waitFor();
    assert.equal(await linked.getAttribute('data-operation'), 'deploy');
    assert.equal(await linked.locator('details.entry-diff').getAttribute('open'), '', 'the linked entry is open');

    // A filter the server refuses says why, by the parameter.
    await page.goto(`${env.base}/history?from=yesterday`);
    await page.getByRole('alert').filter({ hasText: /^Could not read the history: from must be a date/ }).waitFor();
    h.assertNoProblems(page, [400]);
  } finally {
    await context.close();
  }
});

test('the History tab: diffs closed, filters, a link to one entry, and a revert that keeps the place', async () => {
  await deploy('operator', 'tab-long');
  for (let n = 2; n <= 60; n++) await scale(n % 2 ? 'admin' : 'operator', 'tab-long', n);
  const { body } = await call('operator', 'GET', '/api/endpoints/tab-long/history?limit=500', undefined, 200);
  assert.equal(body.items.length, 60);
  const context = await contextAs('operator');
  try {
    const page = await h.newPage(context, { viewport: { width: 1280, height: 800 } });
    await page.goto(`${env.base}/endpoints/tab-long?tab=history`);
    const entries = page.locator('.history li.entry');
    await entries.nth(49).waitFor();
    assert.equal(await page.locator('.history details.entry-diff[open]').count(), 0, 'every diff closed');
    await entries.nth(3).locator('details.entry-diff summary').click();
    await entries.nth(3).locator('table.diff').waitFor({ state: 'visible' });

    // "Revert to this…" far down: the review docks, the page stays.
    const target = entries.nth(30);
    await target.scrollIntoViewIfNeeded();
    const before = await page.evaluate(() => window.scrollY);
    assert.ok(before > 500, `scrolled down (${before})`);
    await target.getByRole('button', { name: 'Revert to this…' }).click();
    const review = page.locator('section.review.docked');
    await review.waitFor();
    await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'review-title');
    // The frames after the focus moved: where a jump would show.
    await h.nextFrames(page);
    assert.equal(await page.evaluate(() => window.scrollY), before, 'no jump to the top');
    const box = await review.boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= 800, 'the review is in view');
    await h.screenshot(page, 'history-tab-revert-docked', { fullPage: false });
    await review.getByRole('button', { name: 'Cancel' }).click();
    await review.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => window.scrollY), before, 'and none on closing');

    // Filters read every page: the one deploy, 59 pages' worth below.
    await page.getByLabel('Operation', { exact: true }).selectOption('deploy');
    await page.locator('.history li.entry[data-operation=deploy]').waitFor();
    assert.equal(await entries.count(), 1);
    await page.getByLabel('Operation', { exact: true }).selectOption('');
    await page.getByLabel('Who', { exact: true }).selectOption('token:ada');
    await h.waitUntil(async () => (await entries.count()) === 29, { what: "ada's 29 changes" });
    await page.getByRole('button', { name: 'Clear filters' }).click();

    // A link to one entry on the second page: opened and in view.
    const old = body.items[55];
    await page.goto(`${env.base}/endpoints/tab-long?tab=history&entry=${encodeURIComponent(old.id)}`);
    const linked = page.locator('.history li.entry.linked');
    await linked.waitFor();
    assert.equal(await linked.getAttribute('id'), `entry-${old.id}`);
    assert.equal(await linked.locator('details.entry-diff').getAttribute('open'), '');
    await h.waitUntil(async () => {
      const b = await linked.boundingBox();
      return b && b.y >= 0 && b.y + 40 <= 800;
    }, { what: 'the linked entry scrolled into view' });
    await h.screenshot(page, 'history-tab-linked-entry', { fullPage: false });
    // Each entry's Link puts its address in the bar.
    await entries.nth(2).getByRole('link', { name: 'Link' }).click();
    assert.equal(page.url(), `${env.base}/endpoints/tab-long?tab=history&entry=${encodeURIComponent(body.items[2].id)}`);
    await page.locator('.history li.entry.linked').nth(0).waitFor();
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('times carry the browser\'s zone, with UTC on hover', async () => {
  await deploy('operator', 'zoned');
  const context = await contextAs('viewer', { timezoneId: 'Asia/Kolkata' });
  try {
    const page = await h.newPage(context);
    await page.goto(`${env.base}/`);
    const created = page.locator('tr[data-name=zoned] time').first();
    await created.waitFor();
    assert.match(await created.textContent(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+05:30$/);
    assert.match(await created.getAttribute('title'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const [local, utc] = [await created.textContent(), await created.getAttribute('title')];
    const minutes = (t) => Number(t.slice(11, 13)) * 60 + Number(t.slice(14, 16));
    assert.equal((minutes(local) - minutes(utc) + 1440) % 1440, 330, 'five and a half hours apart');
    await page.goto(`${env.base}/endpoints/zoned`);
    await page.locator('.record time').first().waitFor();
    for (const t of await page.locator('time').allTextContents()) assert.match(t, /UTC\+05:30$/, t);
    await page.goto(`${env.base}/endpoints/zoned?tab=history`);
    await page.locator('.history li.entry time').first().waitFor();
    assert.match(await page.locator('.history li.entry time').first().textContent(), /UTC\+05:30$/);
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

test('the editor says at once that an endpoint of the name typed exists', async () => {
  await deploy('operator', 'taken-name');
  const context = await contextAs('operator');
  try {
    const page = await h.newPage(context);
    await h.openEditor(page, env.base);
    const name = page.getByLabel('Endpoint name', { exact: true });
    await name.fill('taken-name');
    await h.waitUntil(async () => (await h.messagesAt(page, 'endpoint_name')).some((m) => m.includes("Endpoint 'taken-name' already exists")), {
      timeout: 3000,
      what: 'the name taken, said at the field',
    });
    await h.screenshot(page, 'editor-name-taken', { fullPage: false });
    await name.fill('taken-name-2');
    await h.waitUntil(async () => !(await h.messagesAt(page, 'endpoint_name')).some((m) => m.includes('already exists')), {
      timeout: 3000,
      what: 'a free name, no message',
    });
    h.assertNoProblems(page, [404]);
  } finally {
    await context.close();
  }
});
