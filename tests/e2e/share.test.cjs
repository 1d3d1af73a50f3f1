// Share links in Chromium: the editor state travels in the URL fragment and
// opens the same in a fresh browser context; hostile links are refused
// cleanly (a banner, an empty usable editor) or shown as literal text.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness.cjs');

const env = h.suite();

const BANNER = 'This link could not be opened';

/** A share fragment for `text`, made with the page's own encoding (deflate-raw + base64url). */
async function encodeInPage(page, text) {
  return page.evaluate(async (t) => {
    const stream = new Blob([t]).stream().pipeThrough(new CompressionStream('deflate-raw'));
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    let bin = '';
    for (const b of bytes) bin += String.fromCharCode(b);
    return '#s=' + btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }, text);
}

/** Asserts that the editor is empty and usable: a name can be typed and is checked. */
async function assertEmptyUsableEditor(page) {
  const name = page.getByLabel('Endpoint name', { exact: true });
  assert.equal(await name.inputValue(), '');
  assert.equal(await page.getByLabel('Mooncake mode', { exact: true }).inputValue(), '');
  assert.equal(await page.getByRole('button', { name: 'Undo', exact: true }).isDisabled(), true, 'nothing to undo');
  await name.fill('Not_A_Label');
  await h.field(page, 'endpoint_name').locator('.messages li', { hasText: "endpoint_name 'Not_A_Label' cannot name GCO's objects" }).waitFor();
  await name.fill('usable-after-link');
  await page.waitForFunction(() => !document.querySelector('[data-path="endpoint_name"] .messages li'));
}

async function assertNothingInjected(page) {
  const injected = await page.evaluate(() => ({
    imgs: document.querySelectorAll('img').length,
    scripts: document.querySelectorAll('body script').length,
    iframes: document.querySelectorAll('iframe').length,
    pwned: window.__pwned === undefined ? null : window.__pwned,
  }));
  assert.deepEqual(injected, { imgs: 0, scripts: 0, iframes: 0, pwned: null }, 'no element injected, no script run');
}

test('a share link opens the same state in a fresh browser context', async () => {
  const first = await env.browser.newContext();
  const second = await env.browser.newContext();
  try {
    const page = await h.newPage(first);
    await h.openEditor(page, env.base);
    await page.getByLabel('Endpoint name', { exact: true }).fill('shared-pd');
    await page.getByLabel('Target regions', { exact: true }).fill('eu-west-1');
    await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
    await page.getByLabel('Prefill instances', { exact: true }).fill('3');
    await page.getByLabel('Decode instances', { exact: true }).fill('1001'); // an error travels too
    await page.getByLabel('Global segment size', { exact: true }).fill('4 GiB');
    await page.getByLabel('Environment', { exact: true }).fill('A=1\nB=two words');
    await page.getByLabel('Transfer protocol', { exact: true }).selectOption('tcp');
    await page.getByLabel('Autoscaling enabled', { exact: true }).check();
    await page.getByLabel('Decode max', { exact: true }).fill('9');
    const url = await h.waitForCurrentShareUrl(page);
    assert.match(url, /\/new#s=[A-Za-z0-9_-]+$/);

    const other = await h.newPage(second);
    await other.goto(url);
    await other.getByLabel('Endpoint name', { exact: true }).waitFor();
    await other.waitForFunction(() => document.getElementById('f-endpoint-name').value === 'shared-pd');
    const value = (label) => other.getByLabel(label, { exact: true }).inputValue();
    assert.equal(await value('Endpoint name'), 'shared-pd');
    assert.equal(await value('Target regions'), 'eu-west-1');
    assert.equal(await value('Mooncake mode'), 'both');
    assert.equal(await value('Prefill instances'), '3');
    assert.equal(await value('Decode instances'), '1001');
    assert.equal(await value('Global segment size'), '4 GiB');
    assert.equal(await value('Environment'), 'A=1\nB=two words');
    assert.equal(await value('Transfer protocol'), 'tcp');
    assert.equal(await other.getByLabel('Autoscaling enabled', { exact: true }).isChecked(), true);
    assert.equal(await value('Decode max'), '9');
    assert.deepEqual(await h.messagesAt(other, 'mooncake.topology.decode'), ['mooncake.topology.decode out of range [1, 1000]: 1001']);
    assert.equal(await other.locator('.banner.error').count(), 0, 'no banner for a good link');
    // The opened link is the same state: its JSON view matches the first page's.
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    await other.getByRole('button', { name: 'JSON', exact: true }).click();
    assert.deepEqual(
      JSON.parse(await other.getByLabel('Deploy request (JSON)').inputValue()),
      JSON.parse(await page.getByLabel('Deploy request (JSON)').inputValue()),
    );
    h.assertNoProblems(page);
    h.assertNoProblems(other);
  } finally {
    await first.close();
    await second.close();
  }
});

test(
  'when the state grows too large for a link, the URL does not keep an older state',
  {},
  async () => {
    const context = await env.browser.newContext();
    try {
      const page = await h.newPage(context);
      await h.openEditor(page, env.base);
      await page.getByLabel('Endpoint name', { exact: true }).fill('small-state');
      const small = await h.waitForShareUrl(page);
      // About 45 KB of incompressible text: its link would be far over 16 KiB.
      const env_ = await page.evaluate(() => {
        const bytes = crypto.getRandomValues(new Uint8Array(24 * 1024));
        const o = {};
        for (let i = 0; i < 300; i++) o[`K${i}`] = btoa(String.fromCharCode(...bytes.subarray(i * 80, i * 80 + 80)));
        return o;
      });
      await page.getByRole('button', { name: 'JSON', exact: true }).click();
      await page.getByLabel('Deploy request (JSON)', { exact: true }).fill(JSON.stringify({ endpoint_name: 'big-state', env: env_ }));
      // The address gives up the link once it cannot hold the state.
      await page.waitForFunction((earlier) => location.href !== earlier, small);
      // Copy link says why there is no link...
      await page.getByRole('button', { name: 'Copy link', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'the editor state is too large for a link' }).waitFor();
      // ...but the URL must not silently hold the earlier state: reloading it would drop every later edit.
      assert.notEqual(page.url(), small, 'the URL still holds the earlier, smaller state');
      await page.reload();
      await page.waitForFunction(() => document.getElementById('f-endpoint-name').value === 'big-state');
      h.assertNoProblems(page);
    } finally {
      await context.close();
    }
  },
);

test('hostile share links are refused cleanly or shown as literal text', async (t) => {
  const context = await env.browser.newContext();
  try {
    const page = await h.newPage(context);
    await h.openEditor(page, env.base);
    const encode = (text) => encodeInPage(page, text);

    // Bytes that are not UTF-8, compressed by the page.
    const notUtf8 = await page.evaluate(async () => {
      const stream = new Blob([new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])]).stream().pipeThrough(new CompressionStream('deflate-raw'));
      const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
      return '#s=' + btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    });
    const refused = [
      ['garbage (not base64url)', '#s=%%%not*base64!!<script>', 'this link is damaged (not base64url)'],
      ['empty', '#s=', 'this link is damaged or too large to open'],
      ['valid base64url, not deflate', '#s=AAA_-_-zzzz', 'this link is damaged or too large to open'],
      ['longer than 16 KiB', '#s=' + 'A'.repeat(16 * 1024 + 1), 'this link is too long (16385 characters, at most 16384)'],
      ['a deflate bomb (expands past 64 KiB)', await encode(`{"endpoint_name": "${'a'.repeat(200 * 1024)}"}`), 'this link is damaged or too large to open'],
      ['JSON that is not an object', await encode('["<img src=x onerror=window.__pwned=1>"]'), 'this link does not hold a deploy request'],
      ['JSON nested too deeply', await encode('{"a":'.repeat(100) + '1' + '}'.repeat(100)), 'this link is damaged (invalid JSON: '],
      ['not JSON', await encode('<img src=x onerror=window.__pwned=1>'), 'this link is damaged (invalid JSON: '],
      ['not UTF-8', notUtf8, 'this link is damaged or too large to open'],
    ];

    let shot = false;
    for (const [what, fragment, reason] of refused) {
      await t.test(what, async () => {
        const p = await h.newPage(context);
        await h.openEditor(p, env.base, fragment);
        const banner = p.getByRole('alert').filter({ hasText: BANNER });
        await banner.waitFor();
        const text = await banner.textContent();
        assert.ok(text.startsWith(`${BANNER}: ${reason}`), `banner for ${what}: ${text}`);
        assert.ok(text.endsWith('. The editor starts empty.'), text);
        assert.ok(text.length < 300, `the banner stays short (${text.length} characters)`);
        if (!shot && what.startsWith('garbage')) {
          shot = true;
          await h.screenshot(p, 'hostile-link-banner');
        }
        // The bad fragment is dropped from the URL.
        assert.equal(new URL(p.url()).hash, '');
        await assertNothingInjected(p);
        await assertEmptyUsableEditor(p);
        await assertNothingInjected(p);
        h.assertNoProblems(p);
        await p.close();
      });
    }

    await t.test('markup inside valid JSON is shown as literal text', async () => {
      const hostile = '<img src=x onerror="window.__pwned=1">';
      const fragment = await encode(
        JSON.stringify({
          endpoint_name: hostile,
          image: `"><img src=x onerror=window.__pwned=2>`,
          env: { '<b>K</b>': '<script>window.__pwned=3</script>' },
          mooncake_mode: '<svg onload=window.__pwned=4>',
        }),
      );
      const p = await h.newPage(context);
      await h.openEditor(p, env.base, fragment);
      await p.waitForFunction((v) => document.getElementById('f-endpoint-name').value === v, hostile);
      assert.equal(await p.getByRole('alert').filter({ hasText: BANNER }).count(), 0);
      assert.equal(await p.getByLabel('Endpoint name', { exact: true }).inputValue(), hostile);
      assert.equal(await p.getByLabel('Image', { exact: true }).inputValue(), `"><img src=x onerror=window.__pwned=2>`);
      assert.equal(await p.getByLabel('Environment', { exact: true }).inputValue(), '<b>K</b>=<script>window.__pwned=3</script>');
      // The messages quote the value as text.
      const nameMessages = await h.messagesAt(p, 'endpoint_name');
      assert.ok(nameMessages.length > 0, 'the name is refused');
      const modeMessages = await h.messagesAt(p, 'mooncake.mode');
      assert.ok(modeMessages.some((m) => m.includes('<svg onload=window.__pwned=4>')), JSON.stringify(modeMessages));
      // Room for any injected handler to run: the page's pending tasks, then a frame.
      await p.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => r()))));
      await assertNothingInjected(p);
      assert.equal(await p.locator('b, svg').count(), 0);
      h.assertNoProblems(p);
      await p.close();
    });
    h.assertNoProblems(page);
  } finally {
    await context.close();
  }
});

// The second user trial (issue 35): what it found about this page, each
// test failing on the console before its fix (items as numbered there).

const withPage = (fn) => h.withPage(env.browser, fn);

test('trial 2, 1: a share link with the block given as is opens with it in the form fields', () =>
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
    const v = await h.api(env.base, 'POST', '/api/validate', await h.editorRequest(page));
    const direct = await h.api(env.base, 'POST', '/api/validate', request);
    assert.deepEqual(v.body.spec, direct.body.spec);
    h.assertNoProblems(page);
  }));
