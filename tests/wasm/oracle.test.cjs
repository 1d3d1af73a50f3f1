// The JS/TS API against the Python reference: each case is asked of the
// oracle (mooncake_reference.py, JSON lines on stdin) and of the wasm
// package, and the answers must agree byte for byte. The oracle is not part
// of the repository: its answers to these cases are recorded in
// oracle_answers.json beside this file, and the port is compared with those.
// When the oracle is there too (GCO_ORACLE, default
// ../shared/reference/mooncake_reference.py from the repo root, as
// tests/differential does), it is asked live and the recording must still be
// what it answers. To record again after changing a case:
//   GCO_RECORD=1 node --test tests/wasm/oracle.test.cjs
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ROOT, loadPackage } = require('./load.cjs');

const gco = loadPackage();
const ORACLE = path.resolve(ROOT, process.env.GCO_ORACLE || '../shared/reference/mooncake_reference.py');
const RECORDED = path.join(__dirname, 'oracle_answers.json');
const oraclePresent = fs.existsSync(ORACLE);
const recording = process.env.GCO_RECORD === '1';
if (recording && !oraclePresent) throw new Error(`GCO_RECORD=1 needs the oracle: not found at ${ORACLE} (set GCO_ORACLE)`);
if (!oraclePresent) console.log(`# oracle not found at ${ORACLE} (set GCO_ORACLE): comparing with the recorded answers only`);

/** request line -> the oracle's answer line, as recorded. */
const recorded = recording ? {} : JSON.parse(fs.readFileSync(RECORDED, 'utf8')).answers;

/** Asks the live oracle every request (raw JSON text lines) at once. */
function askOracle(lines) {
  const run = spawnSync('python3', [ORACLE], { input: lines.join('\n') + '\n', encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const answers = run.stdout.trimEnd().split('\n');
  assert.equal(answers.length, lines.length);
  return answers;
}

/**
 * The oracle's answer line to each request: the recorded one, which must
 * equal the live oracle's when it is there (or is recorded from it).
 */
function oracleAnswers(lines) {
  if (recording) {
    askOracle(lines).forEach((answer, i) => { recorded[lines[i]] = answer; });
    return lines.map((line) => recorded[line]);
  }
  const answers = lines.map((line) => {
    assert.ok(line in recorded, `no recorded answer for ${line}: GCO_RECORD=1 node --test ${path.relative(ROOT, __filename)}`);
    return recorded[line];
  });
  if (oraclePresent) {
    assert.deepEqual(askOracle(lines), answers, `the recording is stale: GCO_RECORD=1 node --test ${path.relative(ROOT, __filename)}`);
  }
  return answers;
}

if (recording) {
  test.after(() => {
    fs.writeFileSync(RECORDED, JSON.stringify({ oracle: path.basename(ORACLE), answers: recorded }, null, 1) + '\n');
  });
}

/** The reference raises TypeError for an unhashable mode or protocol; the port gives its ValueError. */
const isQuirk = (answer) => answer.kind === 'TypeError' && answer.error.startsWith('unhashable type');

// Bare mooncake blocks, as JSON text (so they can hold what JS numbers cannot).
const BLOCKS = [
  '{"mode":"both","topology":{"prefill":1,"decode":1}}',
  '{"mode":"both","topology":{"prefill":0,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1001}}',
  '{"mode":"both","topology":{"prefill":true,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1.0,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1e400,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1E2,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1e21,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1e-5,"decode":1}}',
  '{"mode":"both","topology":{"prefill":-0.0,"decode":1}}',
  '{"mode":"both","topology":{"prefill":5e-324,"decode":1}}',
  '{"mode":"both","topology":{"prefill":1.7976931348623157e308,"decode":1}}',
  '{"mode":"both","topology":{"prefill":123456789012345678.0,"decode":1}}',
  '{"mode":"both","topology":{"prefill":0.30000000000000004,"decode":1}}',
  '{"mode":"both","topology":{"prefill":NaN,"decode":1}}',
  '{"mode":"both","topology":{"prefill":-0,"decode":1}}',
  '{"mode":"both","topology":{"prefill":"1","decode":1}}',
  '{"mode":"both","topology":{"prefill":123456789012345678901234567890,"decode":1}}',
  '{"mode":"both","topology":[1,1]}',
  '{"mode":"both"}',
  '{"mode":"Both"}',
  '{"mode":null}',
  '{"mode":[]}',
  '{"mode":{"a":1}}',
  '{"mode":"x","store":{"local_buffer_size":-5}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1},"mode":"x"}',
  '{"mode":"store","store":{"global_segment_size":"  12 "}}',
  '{"mode":"store","store":{"global_segment_size":"\\u0661\\u0662"}}',
  '{"mode":"store","store":{"global_segment_size":"\\ud800"}}',
  '{"mode":"store","store":{"global_segment_size":1.5}}',
  '{"mode":"store","store":{"global_segment_size":"1_000"}}',
  '{"mode":"store","store":{"local_buffer_size":9223372036854775808}}',
  '{"mode":"store","store":{"cold_tier_enabled":true}}',
  '{"mode":"store","store":{"cold_tier_enabled":true,"enabled":1}}',
  '{"mode":"store","store":[]}',
  '{"mode":"store","transfer":{"protocol":"udp"}}',
  '{"mode":"store","transfer":{"protocol":["rdma"]}}',
  '{"mode":"store","transfer":{"protocol":"rdma","device_name":5}}',
  '{"mode":"store","autoscaling":{"enabled":true}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1},"autoscaling":{"enabled":true,"prefill":{"min_replicas":0}}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1},"autoscaling":{"decode":{"min_replicas":3,"max_replicas":2}}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1},"autoscaling":{"decode":{"max_replicas":"x"}}}',
  '{"mode":"both","topology":{"prefill":1,"decode":1},"autoscaling":{"prefill":5}}',
  '[]',
  'null',
  '"both"',
];

test('validateJson: the first error is the oracle\'s message', () => {
  const answers = oracleAnswers(BLOCKS.map((b) => `{"op":"validate","block":${b}}`));
  BLOCKS.forEach((block, i) => {
    const oracle = JSON.parse(answers[i]);
    const port = gco.validateJson(block);
    if (oracle.ok) {
      assert.deepEqual(port.errors, [], block);
      assert.equal(port.ok, true, block);
    } else if (isQuirk(oracle)) {
      assert.equal(port.ok, false, block);
    } else {
      assert.equal(port.errors[0]?.message, oracle.error, block);
    }
  });
});

// [JS value, the same value as JSON text for the oracle]
const SIZES = [
  [0, '0'], [-1, '-1'], [4294967296, '4294967296'], ['12', '"12"'], [' 7\n', '" 7\\n"'], ['+5', '"+5"'],
  ['', '""'], ['0x10', '"0x10"'], [1.5, '1.5'], [false, 'false'], [null, 'null'], [[], '[]'], [{}, '{}'],
  [9223372036854775807n, '9223372036854775807'], [9223372036854775808n, '9223372036854775808'],
  ['99999999999999999999999', '"99999999999999999999999"'], ['\u0663', '"\\u0663"'],
];

test('authorByteSize: the oracle\'s value or message', () => {
  const answers = oracleAnswers(SIZES.map(([, text]) => `{"op":"author_byte_size","value":${text}}`));
  SIZES.forEach(([value, text], i) => {
    const oracle = JSON.parse(answers[i]);
    const port = gco.authorByteSize(value);
    assert.deepEqual(port, 'ok' in oracle ? { ok: true, value: oracle.ok } : { ok: false, error: oracle.error }, text);
  });
});

const BUILDS = [
  { mode: 'both' },
  { mode: 'store' },
  { mode: 'disaggregated', prefillReplicas: 2, decodeReplicas: 3 },
  {
    mode: 'both', store: { global_segment_size: '8', local_buffer_size: 16 }, transfer: { protocol: 'tcp' },
    proxy: { scheduling: 'round_robin' }, autoscaling: { enabled: true, prefill: { min_replicas: 1, max_replicas: 4 } },
    defaultProxyImage: 'img:1',
  },
  { mode: 'both', proxy: [['image', 'x']], defaultProxyImage: 'img:1' },
  { mode: 'both', transfer: 'ab' },
  { mode: 'both', transfer: [[1, 2, 3]] },
  { mode: 'store', store: { enabled: false, cold_tier_enabled: true } },
  { mode: 'x' },
  { mode: null },
  { mode: 'both', autoscaling: 5 },
  { mode: 'both', defaultProxyImage: '' },
  { mode: 'store', defaultProxyImage: 'img:1' },
  { mode: 'both', prefillReplicas: null },
  { mode: 'both', prefillReplicas: 1001 },
  { mode: 'store', store: { global_segment_size: '4 GiB' } },
  // More pairs than the linear duplicate scan takes, numbers as keys.
  { mode: 'both', proxy: Array.from({ length: 20 }, (_, i) => [i % 5, i]).concat([[1.0, 'x'], [true, 'y'], [2.5, 'z']]) },
];

const SNAKE = {
  prefillReplicas: 'prefill_replicas', decodeReplicas: 'decode_replicas', defaultProxyImage: 'default_proxy_image',
};

test('buildMooncakeBlock: the oracle\'s block (as json.dumps text) or message', () => {
  const requests = BUILDS.map((options) => {
    const request = { op: 'build' };
    for (const [k, v] of Object.entries(options)) request[SNAKE[k] || k] = v;
    return JSON.stringify(request);
  });
  const answers = oracleAnswers(requests);
  BUILDS.forEach((options, i) => {
    const oracle = JSON.parse(answers[i]);
    const port = gco.buildMooncakeBlock(options);
    if ('ok' in oracle) {
      assert.equal(port.ok, true, requests[i]);
      assert.deepEqual(port.value, oracle.ok, requests[i]);
      // The oracle answers json.dumps({"ok": block}).
      assert.equal(`{"ok": ${port.json}}`, answers[i], requests[i]);
    } else {
      assert.deepEqual([port.ok, port.error, port.kind], [false, oracle.error, oracle.kind], requests[i]);
    }
  });
});
