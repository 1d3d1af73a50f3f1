// The recorded-corpus check (corpus.cjs) through the package: the committed
// corpus of the differential test (tests/differential/corpus.jsonl.gz, the
// reference's answers), or the gzip JSON-lines corpus GCO_CORPUS names. The
// check itself is tested here on lines whose answers are the reference's
// (the messages of validator.test.cjs).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { loadPackage } = require('./load.cjs');
const { checkCorpus, memberText } = require('./corpus.cjs');

const gco = loadPackage();

const LINES = [
  ['{"op": "validate", "block": {"mode": "store"}}', '{"ok": true}'],
  ['{"op": "validate", "block": {"mode": "both", "topology": {"prefill": 100000000000000000000, "decode": 1}}}',
    '{"error": "mooncake.topology.prefill out of range [1, 1000]: 100000000000000000000", "kind": "ValueError"}'],
  ['{"op": "validate", "block": {"mode": "both", "topology": {"prefill": 2.0, "decode": 1}}}',
    '{"error": "mooncake.topology.prefill must be an integer in [1, 1000], got 2.0", "kind": "ValueError"}'],
  ['{"op": "author_byte_size", "value": " 12 "}', '{"ok": "12"}'],
  ['{"op": "author_byte_size", "value": 9223372036854775808}',
    '{"error": "byte-size value out of range [0, 9223372036854775807]: 9223372036854775808", "kind": "ValueError"}'],
  ['{"op": "author_byte_size", "value": 1.0}', '{"error": "byte-size value must be an int or a base-10 digit string, got float", "kind": "ValueError"}'],
  ['{"op": "build", "mode": "store", "store": 5}', '{"error": "\'int\' object is not iterable", "kind": "TypeError"}'],
  ['{"op": "build", "mode": "store"}', '{"ok": {"mode": "store", "store": {"enabled": true}}}'],
];

function corpus(lines) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gco-corpus-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'corpus.jsonl.gz');
  fs.writeFileSync(file, zlib.gzipSync(lines.map(([request, answer]) => JSON.stringify({ request, answer })).join('\n') + '\n'));
  return file;
}

test('memberText: the raw text of a top-level member, the last one', () => {
  assert.equal(memberText('{"op": "validate", "block": {"a": [1, "}"]}}', 'block'), '{"a": [1, "}"]}');
  assert.equal(memberText('{"block": 1, "x": {"block": 2}, "block": 2.0}', 'block'), '2.0');
  assert.equal(memberText('{"op": "validate"}', 'block'), null);
});

test('a corpus of reference answers passes; a changed answer fails', () => {
  assert.deepEqual(checkCorpus(corpus(LINES), gco), { checked: 7, skipped: 1 });
  const wrong = LINES.map(([request, answer], i) => [request, i === 1 ? answer.replace('100000000000000000000', '1') : answer]);
  assert.throws(() => checkCorpus(corpus(wrong), gco), assert.AssertionError);
});

const RECORDED = path.join(__dirname, '..', 'differential', 'corpus.jsonl.gz');

test('the recorded corpus through the package', () => {
  const { checked, skipped } = checkCorpus(process.env.GCO_CORPUS || RECORDED, gco);
  // The committed corpus has 20,449 requests; those JS cannot say (`1.0` as
  // an argument) are skipped, the rest all answer.
  assert.ok(checked > 15000, `checked ${checked}`);
  test.diagnostic?.(`checked ${checked}, skipped ${skipped}`);
});
