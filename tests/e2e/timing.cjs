// Timings of the console in Chromium, shared by the e2e tests (which assert
// loose bounds on them) and scripts/bench_browser.cjs (which only reports
// them). Every figure is taken inside the page (performance.now() and event
// time stamps), so playwright's round trips are not part of it.
'use strict';

/** Fills a disaggregated request with store, transfer and autoscaling through the form. */
async function fillFullRequest(page, name) {
  await page.getByLabel('Endpoint name', { exact: true }).fill(name);
  await page.getByLabel('Target regions', { exact: true }).fill('us-east-1, eu-west-1');
  await page.getByLabel('Mooncake mode', { exact: true }).selectOption('both');
  await page.getByLabel('Prefill instances', { exact: true }).fill('2');
  await page.getByLabel('Decode instances', { exact: true }).fill('3');
  await page.getByLabel('Store enabled', { exact: true }).check();
  await page.getByLabel('Global segment size', { exact: true }).fill('4 GiB');
  await page.getByLabel('Local buffer size', { exact: true }).fill('2 GiB');
  await page.getByLabel('Offload', { exact: true }).selectOption('cpu');
  await page.getByLabel('Transfer protocol', { exact: true }).selectOption('tcp');
  await page.getByLabel('Autoscaling enabled', { exact: true }).check();
  await page.getByLabel('Prefill min', { exact: true }).fill('1');
  await page.getByLabel('Prefill max', { exact: true }).fill('4');
  await page.getByLabel('Prefill metric', { exact: true }).selectOption('cpu');
  await page.getByLabel('Decode min', { exact: true }).fill('2');
  await page.getByLabel('Decode max', { exact: true }).fill('6');
  await page.getByLabel('Decode metric', { exact: true }).selectOption('gpu');
}

/** Resolves once the editor's Deploy button is enabled (the request checks clean). */
async function waitForDeployable(page) {
  await page.waitForFunction(() => !document.querySelector('.toolbar button.primary').disabled);
}

/**
 * First render of /new on a fresh page: cold (empty cache), then warm (the
 * same context again, files from the cache). `label` is when the "Endpoint
 * name" label first exists in the DOM, `frame` the frame after, both in ms
 * after navigation start; `wall` is playwright's goto-to-visible clock.
 */
async function measureFirstRender(page, base) {
  // Records, inside the page, when the "Endpoint name" label first exists.
  await page.addInitScript(() => {
    const seen = () => document.querySelector('label[for="f-endpoint-name"]');
    const obs = new MutationObserver(() => {
      if (seen() && window.__labelAt === undefined) {
        window.__labelAt = performance.now();
        obs.disconnect();
        requestAnimationFrame(() => (window.__labelFrameAt = performance.now()));
      }
    });
    obs.observe(document, { childList: true, subtree: true });
  });
  const t0 = Date.now();
  await page.goto(`${base}/new`, { waitUntil: 'commit' });
  await page.getByText('Endpoint name', { exact: true }).waitFor({ state: 'visible' });
  const wall = Date.now() - t0;
  await page.waitForFunction(() => window.__labelFrameAt !== undefined);
  const cold = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const wasm = performance.getEntriesByType('resource').find((r) => r.name.endsWith('.wasm'));
    return {
      label: window.__labelAt,
      frame: window.__labelFrameAt,
      responseEnd: nav.responseEnd,
      domContentLoaded: nav.domContentLoadedEventEnd,
      wasmBytes: wasm ? wasm.transferSize || wasm.encodedBodySize : null,
      wasmEnd: wasm ? wasm.responseEnd : null,
    };
  });
  cold.wall = wall;

  await page.goto(`${base}/`);
  const t1 = Date.now();
  await page.goto(`${base}/new`, { waitUntil: 'commit' });
  await page.getByText('Endpoint name', { exact: true }).waitFor({ state: 'visible' });
  const wallWarm = Date.now() - t1;
  const warm = await page.evaluate(async () => {
    for (let i = 0; i < 100 && window.__labelFrameAt === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    return { label: window.__labelAt, frame: window.__labelFrameAt };
  });
  warm.wall = wallWarm;
  return { cold, warm };
}

/**
 * Keystroke to message on a full block: "Prefill instances" goes from 100 to
 * 1001 by one typed "1", `samples` times. Each sample is { text, dom, frame }:
 * the message's text, ms from the keydown to the message in the DOM, and to
 * the frame after. The page must show the editor with a full request.
 */
async function measureKeystrokeToMessage(page, samples) {
  const input = page.getByLabel('Prefill instances', { exact: true });
  const out = [];
  for (let i = 0; i < samples; i++) {
    await input.fill('100');
    await page.waitForFunction(() => !document.querySelector('[data-path="mooncake.topology.prefill"] .messages li'));
    await input.press('End');
    // Arms an observer: from the keydown of the next key to the message in the DOM (and the next frame).
    await page.evaluate(() => {
      const el = document.getElementById('f-mooncake-topology-prefill');
      const list = document.querySelector('[data-path="mooncake.topology.prefill"] .messages');
      window.__keyTiming = new Promise((resolve) => {
        let down = null;
        el.addEventListener('keydown', (e) => (down = e.timeStamp), { once: true, capture: true });
        const obs = new MutationObserver(() => {
          const li = list.querySelector('li.error');
          if (li && down !== null) {
            const dom = performance.now();
            obs.disconnect();
            requestAnimationFrame(() =>
              setTimeout(() => resolve({ text: li.textContent, dom: dom - down, frame: performance.now() - down })),
            );
          }
        });
        obs.observe(list, { childList: true, subtree: true, characterData: true });
      });
    });
    await input.pressSequentially('1');
    out.push(await page.evaluate(() => window.__keyTiming));
  }
  return out;
}

/** Waits until the page's DOM has not changed for `quietMs`. */
async function waitForQuiet(page, quietMs) {
  await page.evaluate(() => {
    window.__quietSince = performance.now();
    window.__quietObserver = new MutationObserver(() => (window.__quietSince = performance.now()));
    window.__quietObserver.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
  });
  await page.waitForFunction((quiet) => performance.now() - window.__quietSince >= quiet, quietMs, { timeout: 60_000, polling: 50 });
  await page.evaluate(() => window.__quietObserver.disconnect());
}

/**
 * The topology editor at a large XpYd: types `count` into the picture's
 * "Prefill count", then "Decode count", and times each from the input event
 * until the page has settled: the last DOM change (picture, messages,
 * preview) before `quietMs` without any. Returns { prefill, decode, badge }
 * in ms; the page must show the editor in a mode with a topology.
 */
async function measureTopology(page, count, { quietMs = 500 } = {}) {
  const result = {};
  for (const role of ['prefill', 'decode']) {
    const input = page.getByLabel(`${role[0].toUpperCase()}${role.slice(1)} count`, { exact: true });
    await input.fill('1');
    await waitForQuiet(page, quietMs);
    await page.evaluate(
      ({ label }) => {
        const el = [...document.querySelectorAll('label')].find((l) => l.textContent === label).control;
        window.__settle = { start: null, last: null };
        el.addEventListener('input', (e) => (window.__settle.start = e.timeStamp), { once: true, capture: true });
        const obs = new MutationObserver(() => (window.__settle.last = performance.now()));
        obs.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
        window.__settleObserver = obs;
      },
      { label: `${role[0].toUpperCase()}${role.slice(1)} count` },
    );
    await input.fill(String(count));
    // Settled: no DOM change for quietMs.
    await page.waitForFunction(
      (quiet) => window.__settle.last !== null && performance.now() - window.__settle.last >= quiet,
      quietMs,
      { timeout: 60_000, polling: 50 },
    );
    result[role] = await page.evaluate(() => {
      window.__settleObserver.disconnect();
      return window.__settle.last - window.__settle.start;
    });
  }
  result.badge = await page.locator('.topology .badge').textContent();
  return result;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

module.exports = {
  fillFullRequest,
  waitForDeployable,
  measureFirstRender,
  measureKeystrokeToMessage,
  measureTopology,
  median,
};
