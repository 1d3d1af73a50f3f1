// The package against the real server and CLI on generated requests: every
// export must answer as the service (POST /api/validate, POST
// /api/endpoints) and the `gco-spec` CLI (`plan`, `cli`) do, exactly.
//
//   cargo build -p gco-console --bin gco-console && cargo build -p gco-spec
//   bash scripts/build-wasm.sh && node --test tests/wasm/
//
// Skipped when the debug binaries are not built (GCO_CONSOLE_BIN and
// GCO_SPEC_BIN override where they are).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');
const { ROOT, loadPackage } = require('./load.cjs');
const { generateRequests } = require('./generate.cjs');

const gco = loadPackage();
const CONSOLE = process.env.GCO_CONSOLE_BIN || path.join(ROOT, 'target', 'debug', 'gco-console');
const CLI = process.env.GCO_SPEC_BIN || path.join(ROOT, 'target', 'debug', 'gco-spec');
const skip = [CONSOLE, CLI].find((f) => !fs.existsSync(f));
const skipReason = skip ? `${path.relative(ROOT, skip)} is not built` : false;

/** The surroundings the server is started with, and validateDocument is given. */
const CONFIG = { deployedRegions: ['us-east-1', 'eu-west-1'], defaultImage: 'registry.example/vllm-mooncake:1' };
const COUNT = Number(process.env.GCO_PARITY_COUNT || 300);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Every region's monitor has a master image: the CLI's file check knows no
 * monitor, so no answer compared with it may warn about one. */
const ALL_MASTER_IMAGES = '[default]\nmaster_image = "mooncake/master:0.3.6"\n';

async function startServer(extraArgs = [], monitorSettings = ALL_MASTER_IMAGES) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-pkg-server-'));
  const port = await freePort();
  const monitors = path.join(dir, 'monitors.toml');
  fs.writeFileSync(monitors, monitorSettings);
  const child = spawn(CONSOLE, [
    '--addr', `127.0.0.1:${port}`, '--data-dir', path.join(dir, 'store'),
    '--regions', CONFIG.deployedRegions.join(','), '--default-image', CONFIG.defaultImage,
    '--monitor-settings', monitors,
    ...extraArgs,
  ], { env: { ...process.env, RUST_LOG: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = () => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, stop };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  stop();
  throw new Error(`gco-console did not start: ${stderr}`);
}

/** Diagnostics without their ranges, as the API gives them. */
const unplaced = (list) => list.map(({ range, ...d }) => d);

const post = async (url, body) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, body: await r.json() };
};

test('every export answers as the server and the CLI on generated requests', { skip: skipReason }, async (t) => {
  // One region's monitor has a master image and the other's not: the
  // server warns about the second, and so does the package given the
  // server's monitor settings.
  const server = await startServer([], '[regions.eu-west-1]\nmaster_image = "mooncake/master:0.3.6"\n');
  t.after(server.stop);
  const requests = generateRequests(COUNT, 20261205);
  const config = await (await fetch(`${server.url}/api/config`)).json();
  assert.deepEqual(config, {
    deployed_regions: CONFIG.deployedRegions, default_image: CONFIG.defaultImage, frameworks: ['vllm', 'sglang'],
    auth: 'none', history: true,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-pkg-cli-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const monitorSettings = await (await fetch(`${server.url}/api/monitor-settings`)).json();
  let valid = 0;
  let masterImageWarnings = 0;
  const deployedNames = new Set();
  for (const [i, text] of requests.entries()) {
    const { body: server_ } = await post(`${server.url}/api/validate`, text);

    // validateDocument: /api/validate's answer, path for path, in order
    // (the package's diagnostics also carry their ranges).
    const doc = gco.validateDocument(text, { ...CONFIG, monitorSettings });
    assert.equal(doc.kind, 'deploy_request', text);
    assert.deepEqual(
      { ok: doc.ok, errors: unplaced(doc.errors), warnings: unplaced(doc.warnings), spec: doc.spec ?? null },
      server_, text,
    );
    masterImageWarnings += server_.warnings.filter((d) => d.path === 'mooncake.store.master_image').length;

    // validateJson / validate on a block the request carries as is.
    const request = JSON.parse(text);
    if (request.mooncake !== undefined && !/\d{17,}|\.0\b/.test(text)) {
      // A block alone knows no region's monitor.
      const inBlock = (d) => (d.path === 'mooncake' || d.path.startsWith('mooncake.'))
        && d.path !== 'mooncake.store.master_image';
      for (const block of [gco.validateJson(JSON.stringify(request.mooncake)), gco.validate(request.mooncake)]) {
        assert.deepEqual(block.errors, server_.errors.filter(inBlock), text);
        assert.deepEqual(block.warnings, server_.warnings.filter(inBlock), text);
      }
    }

    // authorByteSize: the server's stored byte sizes, or its message.
    const store = request.mooncake_store;
    if (store && typeof store === 'object' && typeof store.global_segment_size === 'string' && server_.ok) {
      assert.deepEqual(gco.authorByteSize(store.global_segment_size),
        { ok: true, value: server_.spec.mooncake.store.global_segment_size }, text);
    }

    if (!server_.ok) continue;
    valid += 1;
    // planDeploy and deployCommands: as `gco-spec plan` and `gco-spec cli`.
    const file = path.join(dir, `request-${i}.json`);
    fs.writeFileSync(file, text);
    const cliPlan = spawnSync(CLI, ['plan', file], { encoding: 'utf8' });
    const plan = gco.planDeploy(text);
    if (cliPlan.status === 0) {
      assert.deepEqual(plan, { ok: true, value: JSON.parse(cliPlan.stdout) }, text);
    } else {
      assert.equal(plan.ok, false, text);
      assert.deepEqual(plan.errors.map((d) => `${file}: ${d.path}: ${d.message}`).join('\n'), cliPlan.stdout.trim(), text);
    }
    const region = CONFIG.deployedRegions[i % 2];
    const cliRegion = spawnSync(CLI, ['plan', file, '--region', region], { encoding: 'utf8' });
    if (cliRegion.status === 0) assert.deepEqual(gco.planDeploy(text, region), { ok: true, value: JSON.parse(cliRegion.stdout) }, text);
    const cliCommands = spawnSync(CLI, ['cli', file], { encoding: 'utf8' });
    assert.equal(cliCommands.status, 0, cliCommands.stdout);
    const commands = gco.deployCommands(text);
    assert.equal(commands.ok, true, text);
    assert.deepEqual(commands.lines, cliCommands.stdout.split('\n').filter(Boolean), text);
    assert.deepEqual(commands.notes.map((d) => `${file}: ${d.path ? `${d.path}: ` : ''}warning: ${d.message}`),
      cliCommands.stderr.split('\n').filter(Boolean), text);

    // The stored record (once per name): deploying stores the spec validate
    // answered, and the record checks and plans as the request did.
    if (deployedNames.has(request.endpoint_name)) continue;
    deployedNames.add(request.endpoint_name);
    const deployed = await post(`${server.url}/api/endpoints`, text);
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    assert.deepEqual(deployed.body.spec, doc.spec, text);
    const recordFile = path.join(dir, `record-${i}.json`);
    fs.writeFileSync(recordFile, JSON.stringify(deployed.body));
    const cliRecordPlan = spawnSync(CLI, ['plan', recordFile], { encoding: 'utf8' });
    assert.equal(cliRecordPlan.status, 0, cliRecordPlan.stdout);
    assert.deepEqual(gco.planDeploy(JSON.stringify(deployed.body)), { ok: true, value: JSON.parse(cliRecordPlan.stdout) });
    const recordDoc = gco.validateDocument(JSON.stringify(deployed.body));
    assert.equal(recordDoc.kind, 'record');
    assert.deepEqual(recordDoc.errors, [], JSON.stringify(recordDoc));
  }
  assert.ok(masterImageWarnings > 0, 'no generated request needed a master image');
  assert.ok(valid >= COUNT / 10, `only ${valid} of ${COUNT} generated requests are valid`);
  assert.ok(valid <= COUNT * 0.9, `${valid} of ${COUNT} generated requests are valid: too few invalid ones`);
});

// A team on a GCO older than its SGLang release: the server, the CLI and the
// package given the same list agree, request for request.
test('an older GCO\'s frameworks: the package, the server and the CLI agree', { skip: skipReason }, async (t) => {
  const frameworks = ['vllm', 'tgi'];
  const server = await startServer(['--frameworks', frameworks.join(',')]);
  t.after(server.stop);
  const config = await (await fetch(`${server.url}/api/config`)).json();
  assert.deepEqual(config.frameworks, frameworks);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-pkg-fw-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const requests = generateRequests(Math.ceil(COUNT / 3), 20261206).concat([
    '{"endpoint_name": "old", "image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}',
    '{"endpoint_name": "new", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "m"}}',
  ]);
  const seen = { tgi: 0, sglang: 0 };
  for (const [i, text] of requests.entries()) {
    const { body: server_ } = await post(`${server.url}/api/validate`, text);
    const doc = gco.validateDocument(text, { ...CONFIG, frameworks });
    assert.deepEqual({ ok: doc.ok, errors: unplaced(doc.errors), warnings: unplaced(doc.warnings), spec: doc.spec ?? null }, server_, text);
    // The default list answers otherwise exactly where a framework is at stake.
    const framework = JSON.parse(text).framework;
    if (framework === 'tgi' || framework === 'sglang') {
      seen[framework] += 1;
      const current = gco.validateDocument(text, CONFIG);
      const refused = (d) => d.errors.some((e) => e.path === 'framework' && e.message.startsWith('framework must be'));
      assert.equal(refused(current), framework === 'tgi', text);
      assert.equal(refused(doc), framework === 'sglang', text);
    }
    const file = path.join(dir, `request-${i}.json`);
    fs.writeFileSync(file, text);
    const cli = spawnSync(CLI, ['validate', '--frameworks', frameworks.join(','), file], { encoding: 'utf8' });
    // The CLI's places are the package's.
    const at = (d) => `${file}:${d.range.start.line}:${d.range.start.column}: ${d.path ? `${d.path}: ` : ''}`;
    const lines = [
      ...doc.errors.map((d) => `${at(d)}${d.message}`),
      ...doc.warnings.map((d) => `${at(d)}warning: ${d.message}`),
    ];
    assert.deepEqual(cli.stdout.split('\n').filter(Boolean).sort(), lines.sort(), text);
    assert.equal(cli.status, doc.ok ? 0 : 1, text);
  }
  assert.ok(seen.tgi > 0 && seen.sglang > 0, JSON.stringify(seen));
  assert.throws(() => gco.validateDocument('{}', { frameworks: ['triton'] }), /option "frameworks" must name one or more of "vllm", "sglang" and "tgi"/);
  assert.throws(() => gco.validateDocument('{}', { frameworks: [] }), /must name one or more/);
  assert.throws(() => gco.validateDocument('{}', { frameworks: 'vllm' }), /option "frameworks": expected an array of strings/);
});
