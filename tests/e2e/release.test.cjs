// The console over the wire in Chromium: its assets travel compressed and
// stay cached (named by content, immutable), the page is asked again on
// every load, and a new release is picked up on the next load with none of
// the old release's files (no stale wasm against a new API).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness.cjs');

/** A copy of the built console that a test may replace with a "release". */
function copyOfDist() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-e2e-dist-'));
  fs.cpSync(h.DIST, dir, { recursive: true });
  return dir;
}

/**
 * Makes the next release in `dist` as the build would: boot.js changed
 * (it marks the page with `release`), named by its new content, the page
 * naming it, the old boot.js gone. Returns the new name.
 */
function release(dist, release) {
  const page = path.join(dist, 'index.html');
  const html = fs.readFileSync(page, 'utf8');
  const old = html.match(/\/(boot-[0-9a-f]{16}\.js)/)[1];
  const text = `${fs.readFileSync(path.join(dist, old), 'utf8')}\ndocument.documentElement.dataset.release = ${JSON.stringify(release)};\n`;
  const named = `boot-${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}.js`;
  fs.writeFileSync(path.join(dist, named), text);
  fs.writeFileSync(page, html.replace(`/${old}`, `/${named}`));
  for (const form of ['', '.br', '.gz']) fs.rmSync(path.join(dist, old + form));
  return named;
}

/** Every response the page gets: path, status, content coding, cache policy. */
function recordResponses(page) {
  const seen = [];
  page.on('response', async (r) => {
    const headers = await r.allHeaders().catch(() => ({}));
    seen.push({ path: new URL(r.url()).pathname, status: r.status(), coding: headers['content-encoding'] || null, cache: headers['cache-control'] || null });
  });
  return seen;
}

test('assets travel compressed and cached for good; a new release is picked up on the next load', async () => {
  const dist = copyOfDist();
  const backend = await h.startBackend({ dist });
  const browser = await h.launchBrowser();
  try {
    const context = await browser.newContext();
    const page = await h.newPage(context);
    const first = recordResponses(page);
    await h.openEditor(page, backend.url);
    const wasm = first.find((r) => /^\/gco-web_bg-[0-9a-f]{16}\.wasm$/.test(r.path));
    assert.ok(wasm, `the wasm is named by its content: ${JSON.stringify(first.map((r) => r.path))}`);
    assert.equal(wasm.coding, 'br', 'Chromium gets the brotli form');
    assert.equal(wasm.cache, 'public, max-age=31536000, immutable');
    const html = first.find((r) => r.path === '/new');
    assert.equal(html.cache, 'no-cache');

    // A reload asks for the page again (a 304) and for no asset.
    const reload = recordResponses(page);
    await page.reload();
    await page.getByLabel('Endpoint name', { exact: true }).waitFor();
    await page.waitForLoadState('networkidle');
    const asked = await page.evaluate(() => performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation')).map((e) => ({ name: new URL(e.name).pathname, bytes: e.transferSize })));
    const transferred = asked.filter((e) => e.bytes > 0 && !e.name.startsWith('/api/')).map((e) => e.name);
    assert.deepEqual(transferred, ['/new'], `only the page is revalidated: ${JSON.stringify(asked)}`);
    assert.ok(reload.some((r) => r.path === '/new'));

    // A new release while the tab is open: the next load runs it.
    const named = release(dist, 'next');
    await page.reload();
    await page.getByLabel('Endpoint name', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.release), 'next', 'the new release runs');
    const scripts = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
    assert.ok(scripts.includes(`/${named}`), JSON.stringify(scripts));
    // The old release's boot.js is gone: a 404, never the page as script.
    const old = await page.evaluate(async (url) => (await fetch(url, { cache: 'no-store' })).status, first.find((r) => /^\/boot-/.test(r.path)).path);
    assert.equal(old, 404);
    h.assertNoProblems(page, [404]);
    await context.close();
  } finally {
    await browser.close().catch(() => {});
    await backend.stop();
    fs.rmSync(dist, { recursive: true, force: true });
  }
});
