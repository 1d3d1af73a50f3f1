// The browser build (core/pkg/web, an ES module) and the example page that
// uses it: the module loads from bytes and answers as the node build does.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, loadPackage } = require('./load.cjs');

const WEB = path.join(ROOT, 'core', 'pkg', 'web');
const PAGE = path.join(ROOT, 'examples', 'validator.html');

test('the web build answers as the node build', async () => {
  const web = await import(path.join(WEB, 'gco_spec.js'));
  web.initSync({ module: fs.readFileSync(path.join(WEB, 'gco_spec_bg.wasm')) });
  const node = loadPackage();
  for (const text of [
    '{"mode":"both","topology":{"prefill":100000000000000000000,"decode":1}}',
    '{"mode":"both","topology":{"prefil":1,"prefill":1,"decode":1}}',
    '{"mode": []}',
    'not json',
  ]) {
    assert.deepEqual(web.validateJson(text), node.validateJson(text), text);
  }
  assert.deepEqual(web.buildMooncakeBlock({ mode: 'store' }), node.buildMooncakeBlock({ mode: 'store' }));
  assert.throws(() => web.validateJson(1), TypeError);
});

test('the example page imports the web build and writes text only', () => {
  const html = fs.readFileSync(PAGE, 'utf8');
  const [, from] = html.match(/import\s+init,\s*\{[^}]*\}\s+from\s+'([^']+)'/) || [];
  assert.ok(from, 'the page imports the package');
  assert.ok(fs.existsSync(path.resolve(path.dirname(PAGE), from)), `${from} exists`);
  assert.doesNotMatch(html, /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/);
});
