// The npm package as a user gets it: `npm pack` of core/pkg, installed into
// an empty project, then used with `import` and `require` in node, bundled
// by esbuild for the browser, and typechecked by a strict TypeScript
// consumer. Needs scripts/build-wasm.sh and the repo's dev tools (npm ci:
// esbuild, typescript).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT } = require('./load.cjs');

const PKG = path.join(ROOT, 'core', 'pkg');
const BIN = path.join(ROOT, 'node_modules', '.bin');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** An empty project with the packed tarball installed (made once). */
let project;
function install() {
  if (project) return project;
  if (!fs.existsSync(path.join(PKG, 'package.json'))) throw new Error('core/pkg is missing: run bash scripts/build-wasm.sh first');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-pkg-consumer-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const [{ filename }] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], PKG));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', path.join(dir, filename)], dir);
  project = { dir, tarball: path.join(dir, filename) };
  return project;
}

const TOO_BIG = '{"mode":"both","topology":{"prefill":1001,"decode":1}}';
const MESSAGE = 'mooncake.topology.prefill out of range [1, 1000]: 1001';

test('package.json: the name, Cargo\'s version, exports, types, files, license', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PKG, 'package.json'), 'utf8'));
  const cargo = fs.readFileSync(path.join(ROOT, 'core', 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];
  assert.equal(pkg.name, 'gco-spec');
  assert.equal(pkg.version, cargo);
  assert.equal(pkg.license, 'Apache-2.0');
  assert.deepEqual(Object.keys(pkg.exports['.']), ['node', 'browser', 'default']);
  assert.deepEqual(Object.keys(pkg.exports['.'].node), ['types', 'import', 'require']);
  assert.ok(pkg.types && pkg.files.includes('README.md'));
  const { tarball } = install();
  const listed = run('tar', ['tzf', tarball]).split('\n').filter(Boolean).sort();
  assert.deepEqual(listed, [
    'package/README.md', 'package/node/gco_spec.d.ts', 'package/node/gco_spec.js', 'package/node/gco_spec.mjs',
    'package/node/gco_spec_bg.wasm', 'package/node/gco_spec_bg.wasm.d.ts', 'package/node/package.json',
    'package/package.json', 'package/web/gco_spec.d.ts', 'package/web/gco_spec.js', 'package/web/gco_spec_bg.wasm',
    'package/web/gco_spec_bg.wasm.d.ts', 'package/web/package.json',
  ]);
});

test('installed: require and import in node', () => {
  const { dir } = install();
  const script = (body) => run(process.execPath, ['--input-type=' + body[0], '-e', body[1]], dir).trim();
  const check = `JSON.stringify([gco.validateJson(${JSON.stringify(TOO_BIG)}).errors[0].message, gco.formatByteSize('4294967296'), typeof gco.validateDocument])`;
  const expected = JSON.stringify([MESSAGE, '4 GiB', 'function']);
  assert.equal(script(['commonjs', `const gco = require('gco-spec'); console.log(${check})`]), expected);
  assert.equal(script(['module', `import * as gco from 'gco-spec'; console.log(${check})`]), expected);
  assert.equal(script(['module', `import { validateJson } from 'gco-spec'; console.log(validateJson('{}').errors[0].path)`]), 'mooncake.mode');
});

test('installed: an esbuild bundle for the browser runs', () => {
  const { dir } = install();
  fs.writeFileSync(path.join(dir, 'entry.mjs'), `
    import init, { initSync, validateJson, parseByteSize } from 'gco-spec';
    export { init, initSync, validateJson, parseByteSize };
  `);
  run(path.join(BIN, 'esbuild'), ['entry.mjs', '--bundle', '--platform=browser', '--format=esm', '--outfile=out/bundle.mjs', '--log-level=error'], dir);
  const bundle = fs.readFileSync(path.join(dir, 'out', 'bundle.mjs'), 'utf8');
  assert.match(bundle, /gco_spec_bg\.wasm/, 'the browser build (it fetches the wasm next to it)');
  assert.doesNotMatch(bundle, /require\(["']fs["']\)/, 'not the node build');
  const wasm = path.join(dir, 'node_modules', 'gco-spec', 'web', 'gco_spec_bg.wasm');
  const out = run(process.execPath, ['--input-type=module', '-e', `
    import { readFileSync } from 'node:fs';
    const m = await import(${JSON.stringify(path.join(dir, 'out', 'bundle.mjs'))});
    m.initSync({ module: readFileSync(${JSON.stringify(wasm)}) });
    console.log(JSON.stringify([m.validateJson(${JSON.stringify(TOO_BIG)}).errors[0].message, m.parseByteSize('4 GiB')]));
  `], dir);
  assert.equal(out.trim(), JSON.stringify([MESSAGE, { ok: true, value: '4294967296' }]));
});

test('installed: a strict TypeScript consumer typechecks', () => {
  const { dir } = install();
  fs.writeFileSync(path.join(dir, 'consumer.ts'), `
    import { validateJson, validateDocument, planDeploy, deployCommands, parseByteSize, buildMooncakeBlock,
      type ValidationResult, type DocumentResult, type Diagnostic, type TextRange } from 'gco-spec';
    const block: ValidationResult = validateJson('{"mode":"store"}');
    const first: Diagnostic | undefined = block.errors[0];
    const doc: DocumentResult = validateDocument('{}', { deployedRegions: ['us-east-1'], defaultImage: 'img:1' });
    const kind: 'record' | 'deploy_request' | 'spec' | 'mooncake_block' | null = doc.kind;
    // Options and the region may be left out.
    const alone: DocumentResult = validateDocument('{}');
    // Each diagnostic of a text has its range; the monitor settings are
    // GET /api/monitor-settings's answer.
    const placed: TextRange | undefined = validateDocument('{"mode": 1}', {
      monitorSettings: { default: { master_image: 'm:1' }, regions: { 'us-east-1': {} } },
    }).errors[0]?.range;
    const column: number | undefined = placed?.start.column;
    const offset: number | undefined = placed?.end.offset;
    const size = parseByteSize('4 GiB');
    const canonical: string = size.ok ? size.value : size.error;
    const plan = planDeploy('{}', 'us-east-1');
    const planned: unknown = plan.ok ? plan.value : plan.errors.map((d) => d.message);
    const everywhere = planDeploy('{}');
    const commands = deployCommands('{}');
    const lines: string[] = commands.ok ? commands.lines : [];
    const built = buildMooncakeBlock({ mode: 'both', prefillReplicas: 2n, defaultProxyImage: null });
    const text: string = built.ok ? built.json : built.kind;
    export { first, kind, alone, column, offset, canonical, planned, everywhere, lines, text };
  `);
  fs.writeFileSync(path.join(dir, 'bad.ts'), `
    import { validateJson, buildMooncakeBlock } from 'gco-spec';
    const n: number = validateJson('{}').ok;
    buildMooncakeBlock({ mode: 'both', prefill_replicas: 2 });
    const line: string | undefined = validateJson('{}').errors[0]?.range?.start.line;
    export { n, line };
  `);
  const tsc = (file) => {
    try {
      run(path.join(BIN, 'tsc'), ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
        '--moduleResolution', 'nodenext', file], dir);
      return '';
    } catch (e) {
      return e.stdout;
    }
  };
  assert.equal(tsc('consumer.ts'), '');
  // The declarations are precise enough to refuse a wrong use.
  const errors = tsc('bad.ts');
  assert.match(errors, /bad\.ts\(3,11\): error TS2322: Type 'boolean' is not assignable to type 'number'/);
  assert.match(errors, /bad\.ts\(4,40\): error TS2561: .*'prefill_replicas'/);
  assert.match(errors, /bad\.ts\(5,11\): error TS2322: Type 'number \| undefined' is not assignable to type 'string \| undefined'/);
});
