// The package's browser build (core/pkg/web, an ES module) and the example
// page that uses it: the module loads from bytes and answers as the node
// build does.
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
  const request = fs.readFileSync(path.join(ROOT, 'core', 'benches', 'inputs', 'requests', 'full.json'), 'utf8');
  assert.deepEqual(web.validateDocument(request), node.validateDocument(request));
  assert.deepEqual(web.planDeploy(request, 'us-east-1'), node.planDeploy(request, 'us-east-1'));
  assert.throws(() => web.validateJson(1), TypeError);
});

test('the example page imports the package by name and writes text only', () => {
  const html = fs.readFileSync(PAGE, 'utf8');
  const [, from] = html.match(/import\s+init,\s*\{[^}]*\}\s+from\s+'([^']+)'/) || [];
  assert.equal(from, 'gco-spec', 'the page imports the package by its name');
  const [, map] = html.match(/<script type="importmap">([\s\S]*?)<\/script>/) || [];
  const entry = JSON.parse(map).imports['gco-spec'];
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'core', 'pkg', 'package.json'), 'utf8'));
  assert.equal(path.resolve(path.dirname(PAGE), entry), path.resolve(ROOT, 'core', 'pkg', pkg.exports['.'].browser.default),
    'the import map names the package\'s browser entry');
  assert.doesNotMatch(html, /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/);
});
