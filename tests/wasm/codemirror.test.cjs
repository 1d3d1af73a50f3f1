// examples/codemirror/: the package as a CodeMirror 6 lint source, in
// Chromium: the page is bundled as its comment says (esbuild), served from
// the repository, and each underline must cover the faulty text.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ROOT } = require('./load.cjs');
const { launchBrowser, newPage, assertNoProblems, screenshot } = require('../e2e/harness.cjs');

const EXAMPLE = path.join(ROOT, 'examples', 'codemirror');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

/** The repository's files over HTTP, as `python3 -m http.server` serves them. */
function serve() {
  const server = http.createServer((req, res) => {
    const file = path.join(ROOT, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const target = file.endsWith(path.sep) ? path.join(file, 'index.html') : file;
    if (!target.startsWith(ROOT) || !fs.existsSync(target) || !fs.statSync(target).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(target)] || 'application/octet-stream' });
    fs.createReadStream(target).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('the CodeMirror lint source underlines the faulty value and the unknown key', async (t) => {
  const bundle = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'esbuild'), [
    'examples/codemirror/main.js', '--bundle', '--format=esm', '--log-level=warning',
    '--alias:gco-spec=./core/pkg/web/gco_spec.js', '--outfile=examples/codemirror/main.bundle.js',
  ], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(bundle.status, 0, bundle.stderr);
  const server = await serve();
  t.after(() => server.close());
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const page = await newPage(await browser.newContext(), { viewport: { width: 900, height: 500 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/examples/codemirror/`);
  await page.waitForSelector('.cm-lintRange-error');
  const underlined = async (severity) => page.$$eval(`.cm-lintRange-${severity}`, (els) => els.map((e) => e.textContent));
  assert.deepEqual(await underlined('error'), ['0']);
  assert.deepEqual(await underlined('warning'), ['"colour"']);
  // As you type: the fix clears the error, a new fault is underlined.
  await page.evaluate(() => {
    const { state } = window.editor;
    const at = state.doc.toString().indexOf('"prefill": 0') + '"prefill": '.length;
    window.editor.dispatch({ changes: { from: at, to: at + 1, insert: '3' } });
    const port = state.doc.toString().indexOf('"image"');
    window.editor.dispatch({ changes: { from: port, insert: '"port": 70000,\n  ' } });
  });
  await page.waitForFunction(() => [...document.querySelectorAll('.cm-lintRange-error')].map((e) => e.textContent).join() === '70000');
  await page.hover('.cm-lintRange-error');
  await page.waitForSelector('.cm-tooltip-lint');
  assert.match(await page.textContent('.cm-tooltip-lint'), /port: port must be an integer in \[1, 65535\], got 70000/);
  await screenshot(page, 'codemirror-lint', { fullPage: false });
  assertNoProblems(page);
});

test('the example\'s lint source reads every range the package gives', () => {
  const source = fs.readFileSync(path.join(EXAMPLE, 'lint.js'), 'utf8');
  assert.match(source, /from 'gco-spec'/);
  assert.match(source, /d\.range\.start/);
  assert.match(source, /d\.range\.end/);
});
