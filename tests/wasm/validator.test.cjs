// The JS/TS API of the validator (core/src/wasm/), under node's built-in
// test runner:
//
//   bash scripts/build-wasm.sh && node --test tests/wasm/
//
// The expected messages are the Python reference's, byte for byte (taken
// from mooncake_reference.py; oracle.test.cjs checks more cases against its
// recorded answers, and against it live when it is present).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { loadPackage } = require('./load.cjs');

const gco = loadPackage();

const err = (path, message) => ({ path, message });
/** An answer's diagnostics without their ranges (ranges have their own tests). */
const unplaced = (answer) => ({
  ...answer,
  errors: answer.errors.map(({ range, ...d }) => d),
  warnings: answer.warnings.map(({ range, ...d }) => d),
});

// --- validateJson / validate: exact reference messages --------------------

test('topology out of range: the reference message, as object and as text', () => {
  const block = { mode: 'both', topology: { prefill: 1001, decode: 1 } };
  const expected = {
    ok: false,
    errors: [err('mooncake.topology.prefill', 'mooncake.topology.prefill out of range [1, 1000]: 1001')],
    warnings: [],
  };
  assert.deepEqual(gco.validate(block), expected);
  assert.deepEqual(gco.validateJson(JSON.stringify(block)), expected);
});

test('validateJson keeps integers beyond 2^53 exact', () => {
  const r = gco.validateJson('{"mode":"both","topology":{"prefill":100000000000000000000,"decode":1}}');
  assert.equal(r.ok, false);
  assert.deepEqual(r.errors, [
    err('mooncake.topology.prefill', 'mooncake.topology.prefill out of range [1, 1000]: 100000000000000000000'),
  ]);
});

test('validateJson keeps float-ness: 2.0 is not an integer', () => {
  const r = gco.validateJson('{"mode":"both","topology":{"prefill":2.0,"decode":1}}');
  assert.deepEqual(r.errors, [
    err('mooncake.topology.prefill', 'mooncake.topology.prefill must be an integer in [1, 1000], got 2.0'),
  ]);
  // A JS number cannot tell 2.0 from 2: through validate() it is the int 2.
  assert.equal(gco.validate({ mode: 'both', topology: { prefill: 2.0, decode: 1 } }).ok, true);
});

test('duplicate keys: the last value wins, as in json.loads', () => {
  assert.equal(gco.validateJson('{"mode":"both","topology":{"prefill":1001,"prefill":2,"decode":1}}').ok, true);
  assert.deepEqual(gco.validateJson('{"mode":"both","topology":{"prefill":2,"prefill":1001,"decode":1}}').errors, [
    err('mooncake.topology.prefill', 'mooncake.topology.prefill out of range [1, 1000]: 1001'),
  ]);
});

test('byte sizes: the reference messages', () => {
  const store = (v) => gco.validate({ mode: 'store', store: { global_segment_size: v } }).errors;
  const path = 'mooncake.store.global_segment_size';
  assert.deepEqual(store('4GiB'), [
    err(path, `${path}: byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '4GiB'`),
  ]);
  assert.deepEqual(store(-1), [err(path, `${path}: byte-size value out of range [0, 9223372036854775807]: -1`)]);
  assert.deepEqual(store(true), [err(path, `${path}: byte-size value must be an integer, got bool: True`)]);
  assert.deepEqual(
    gco.validateJson('{"mode":"store","store":{"local_buffer_size":9223372036854775808}}').errors,
    [err('mooncake.store.local_buffer_size',
      'mooncake.store.local_buffer_size: byte-size value out of range [0, 9223372036854775807]: 9223372036854775808')],
  );
  assert.equal(store('4294967296').length, 0);
  assert.equal(store(' 4294967296 ').length, 0);
});

test('mode [] is refused with the ValueError message', () => {
  const expected = [err('mooncake.mode', 'mooncake.mode must be one of {both, disaggregated, store}, got []')];
  assert.deepEqual(gco.validate({ mode: [] }).errors, expected);
  assert.deepEqual(gco.validateJson('{"mode": []}').errors, expected);
});

test('None and missing counts are reported as Python prints them', () => {
  assert.deepEqual(gco.validate({ mode: 'both', topology: { prefill: null, decode: 1 } }).errors, [
    err('mooncake.topology.prefill', 'mooncake.topology.prefill must be an integer in [1, 1000], got None'),
  ]);
  assert.deepEqual(gco.validate({ mode: 'disaggregated' }).errors, [
    err('mooncake.topology',
      "mooncake.topology is required for mode 'disaggregated' with integer 'prefill' and 'decode' counts"),
  ]);
});

test('every error is listed, the reference\'s first one first', () => {
  const r = gco.validateJson('{"mode":"both","topology":{"prefill":1001,"decode":0}}');
  assert.deepEqual(r.errors, [
    err('mooncake.topology.prefill', 'mooncake.topology.prefill out of range [1, 1000]: 1001'),
    err('mooncake.topology.decode', 'mooncake.topology.decode out of range [1, 1000]: 0'),
  ]);
});

test('a valid block is ok with no diagnostics', () => {
  const block = { mode: 'both', topology: { prefill: 2, decode: 4 }, store: { global_segment_size: '4294967296' } };
  assert.deepEqual(gco.validate(block), { ok: true, errors: [], warnings: [] });
  assert.deepEqual(gco.validateJson(JSON.stringify(block)), { ok: true, errors: [], warnings: [] });
});

test('text that is not JSON is an answer, not an exception', () => {
  const r = gco.validateJson('{"mode":"both","topology":{"prefill":1,"decode":1}');
  assert.equal(r.ok, false);
  assert.equal(r.errors.length, 1);
  assert.equal(r.errors[0].path, '');
  assert.match(r.errors[0].message, /^invalid JSON: Expecting ',' delimiter: line 1 column 51 \(char 50\)$/);
  assert.match(gco.validateJson('').errors[0].message, /^invalid JSON: /);
  assert.match(gco.validateJson('['.repeat(1001) + ']'.repeat(1001)).errors[0].message, /^invalid JSON: /);
});

// --- warnings ---------------------------------------------------------------

test('warnings: an unknown key with a did-you-mean, without failing', () => {
  const r = gco.validate({ mode: 'both', topology: { prefil: 1, prefill: 1, decode: 1 } });
  assert.equal(r.ok, true);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, [
    err('mooncake.topology.prefil',
      "unknown key 'prefil' in mooncake.topology, which GCO ignores; did you mean 'prefill'?"),
  ]);
});

test('warnings come with errors too', () => {
  const r = gco.validate({ mode: 'both', topology: { prefil: 1, decode: 1 } });
  assert.equal(r.ok, false);
  assert.deepEqual(r.errors.map((d) => d.path), ['mooncake.topology.prefill']);
  assert.deepEqual(r.warnings.map((d) => d.path), ['mooncake.topology.prefil']);
});

test('warnings: topology in store mode', () => {
  const r = gco.validate({ mode: 'store', topology: { prefill: 1, decode: 1 } });
  assert.deepEqual(r, {
    ok: true,
    errors: [],
    warnings: [err('mooncake.topology',
      "mooncake.topology is ignored in 'store' mode, which runs a single instance")],
  });
});

// --- the mooncake block only ---------------------------------------------------

test('the argument is the mooncake block itself: documents are not unwrapped', () => {
  // Whole specs, deploy requests and records are checked natively (CLI, backend).
  const spec = gco.validate({ image: 'img:1', mooncake: { mode: 'both' } });
  assert.equal(spec.ok, false);
  assert.deepEqual(spec.errors, [
    err('mooncake.mode', 'mooncake.mode must be one of {both, disaggregated, store}, got None'),
  ]);
  assert.deepEqual(spec.warnings.map((d) => d.path), ['mooncake.image', 'mooncake.mooncake']);
  assert.deepEqual(gco.validate({}).errors.map((d) => d.path), ['mooncake.mode']);
  assert.deepEqual(gco.validate([]).errors, [err('mooncake', 'mooncake block must be a mapping')]);
  assert.deepEqual(gco.validateJson('null').errors, [err('mooncake', 'mooncake block must be a mapping')]);
});

// --- floats, as Python reads and prints them -------------------------------------

test('validateJson: floats read and printed as Python does', () => {
  const got = (number) =>
    gco.validateJson(`{"mode":"both","topology":{"prefill":${number},"decode":1}}`).errors[0].message;
  const prefix = 'mooncake.topology.prefill must be an integer in [1, 1000], got ';
  for (const [text, repr] of [
    ['1E2', '100.0'],
    ['1e21', '1e+21'],
    ['1e-5', '1e-05'],
    ['1e-4', '0.0001'],
    ['1e400', 'inf'],
    ['-1e400', '-inf'],
    ['-0.0', '-0.0'],
    ['0.1', '0.1'],
    ['2.5e-7', '2.5e-07'],
    ['1e15', '1000000000000000.0'],
    ['1e16', '1e+16'],
    ['123456789012345678.0', '1.2345678901234568e+17'],
    ['5e-324', '5e-324'],
    ['2e-324', '0.0'],
    ['1.7976931348623157e308', '1.7976931348623157e+308'],
    ['1.7976931348623159e308', 'inf'],
    ['9007199254740993.0', '9007199254740992.0'],
    ['NaN', 'nan'],
    ['-Infinity', '-inf'],
  ]) {
    assert.equal(got(text), prefix + repr, text);
  }
});

test('validate: JS numbers that are not safe integers are floats', () => {
  const got = (prefill) => gco.validate({ mode: 'both', topology: { prefill, decode: 1 } }).errors[0].message;
  const prefix = 'mooncake.topology.prefill must be an integer in [1, 1000], got ';
  assert.equal(got(2.5), prefix + '2.5');
  assert.equal(got(1e21), prefix + '1e+21');
  assert.equal(got(2 ** 53), prefix + '9007199254740992.0');
  assert.equal(got(NaN), prefix + 'nan');
  assert.equal(got(-Infinity), prefix + '-inf');
  assert.equal(got(-0), 'mooncake.topology.prefill out of range [1, 1000]: 0');
});

// --- objects past the linear duplicate scan (more than 16 keys) -------------------

test('large objects: the last of duplicate keys wins, at its first position', () => {
  const members = [];
  for (let i = 0; i < 20; i++) members.push(`"k${i % 7}":${i}`);
  const text = `{"mode":"both","topology":{"prefill":1001,${members.join(',')},"decode":1,"prefill":2}}`;
  const r = gco.validateJson(text);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(r.warnings.map((d) => d.path), [0, 1, 2, 3, 4, 5, 6].map((i) => `mooncake.topology.k${i}`));
  const last = gco.validateJson(text.replace('"prefill":2}', '"prefill":0}'));
  assert.deepEqual(last.errors, [err('mooncake.topology.prefill', 'mooncake.topology.prefill out of range [1, 1000]: 0')]);
});

test('large dicts from pairs compare keys as Python does (1 == 1.0 == True)', () => {
  const proxy = Array.from({ length: 20 }, (_, i) => [i % 5, i]).concat([[1.0, 'x'], [true, 'y'], [2.5, 'z'], [null, 'n']]);
  const r = gco.buildMooncakeBlock({ mode: 'both', proxy });
  assert.equal(r.ok, true);
  assert.equal(
    r.json,
    '{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "store": {"enabled": true}, '
      + '"proxy": {"0": 15, "1": "y", "2": 17, "3": 18, "4": 19, "2.5": "z", "null": "n"}}',
  );
});

// --- results are plain data ----------------------------------------------------

test('results are plain objects that survive JSON.stringify', () => {
  const results = [
    gco.validate({ mode: 'both', topology: { prefil: 1, decode: 1 } }),
    gco.authorByteSize('42'),
    gco.parseByteSize('4 GiB'),
    gco.buildMooncakeBlock({ mode: 'both', store: { global_segment_size: 1 } }),
    gco.validateDocument('{"endpoint_name":"llm","image":"img:1"}'),
    gco.planDeploy('{"endpoint_name":"llm","image":"img:1"}', 'us-east-1'),
    gco.deployCommands('{"endpoint_name":"llm","image":"img:1"}'),
  ];
  for (const r of results) {
    assert.equal(Object.getPrototypeOf(r), Object.prototype);
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r);
  }
});

// --- byte sizes -------------------------------------------------------------------

test('authorByteSize: the canonical string, or the reference message', () => {
  assert.deepEqual(gco.authorByteSize('4294967296'), { ok: true, value: '4294967296' });
  assert.deepEqual(gco.authorByteSize(4294967296), { ok: true, value: '4294967296' });
  assert.deepEqual(gco.authorByteSize(' 42\t'), { ok: true, value: '42' });
  assert.deepEqual(gco.authorByteSize(9223372036854775807n), { ok: true, value: '9223372036854775807' });
  const fail = (error) => ({ ok: false, error });
  assert.deepEqual(gco.authorByteSize(true), fail('byte-size value must be an integer, got bool: True'));
  assert.deepEqual(gco.authorByteSize(2n ** 63n),
    fail('byte-size value out of range [0, 9223372036854775807]: 9223372036854775808'));
  assert.deepEqual(gco.authorByteSize(-1), fail('byte-size value out of range [0, 9223372036854775807]: -1'));
  assert.deepEqual(gco.authorByteSize(null), fail('byte-size value must be an int or a base-10 digit string, got NoneType'));
  assert.deepEqual(gco.authorByteSize(2.5), fail('byte-size value must be an int or a base-10 digit string, got float'));
  assert.deepEqual(gco.authorByteSize([]), fail('byte-size value must be an int or a base-10 digit string, got list'));
  assert.deepEqual(gco.authorByteSize('1e3'), fail(
    "byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '1e3'"));
});

test('parseByteSize: human units to the canonical string', () => {
  assert.deepEqual(gco.parseByteSize('4 GiB'), { ok: true, value: '4294967296' });
  assert.deepEqual(gco.parseByteSize('4GB'), { ok: true, value: '4000000000' });
  assert.deepEqual(gco.parseByteSize('1.5 GiB'), { ok: true, value: '1610612736' });
  assert.deepEqual(gco.parseByteSize('512MiB'), { ok: true, value: '536870912' });
  assert.deepEqual(gco.parseByteSize('4294967296'), { ok: true, value: '4294967296' });
  assert.deepEqual(gco.parseByteSize(''), { ok: false, error: 'enter a size, e.g. 4 GiB or 4294967296' });
  const unit = gco.parseByteSize('4 G');
  assert.equal(unit.ok, false);
  assert.match(unit.error, /^unknown unit 'G': use B, KB, MB/);
  assert.deepEqual(gco.parseByteSize('8 EiB'),
    { ok: false, error: "'8 EiB' is out of range: sizes go from 0 to 9223372036854775807 bytes" });
  assert.deepEqual(gco.parseByteSize('1.0000001 KB'), { ok: false, error: "'1.0000001 KB' is not a whole number of bytes" });
});

test('formatByteSize: the largest exact unit, or null', () => {
  assert.equal(gco.formatByteSize('4294967296'), '4 GiB');
  assert.equal(gco.formatByteSize('4000000000'), '4 GB');
  assert.equal(gco.formatByteSize('1000001'), '1000001 B');
  assert.equal(gco.formatByteSize('0'), '0 B');
  assert.equal(gco.formatByteSize('x'), null);
  assert.equal(gco.formatByteSize('-1'), null);
  for (const canonical of ['1', '1024', '1536', '4294967296', '9223372036854775807']) {
    assert.deepEqual(gco.parseByteSize(gco.formatByteSize(canonical)), { ok: true, value: canonical });
  }
});

// --- buildMooncakeBlock -----------------------------------------------------------

test('buildMooncakeBlock: the reference defaults, as a value and as json.dumps text', () => {
  const r = gco.buildMooncakeBlock({
    mode: 'both',
    prefillReplicas: 2,
    decodeReplicas: 4,
    store: { global_segment_size: ' 4294967296 ' },
    defaultProxyImage: 'img:1',
  });
  assert.deepEqual(r, {
    ok: true,
    value: {
      mode: 'both',
      topology: { prefill: 2, decode: 4 },
      store: { global_segment_size: '4294967296', enabled: true },
      proxy: { image: 'img:1' },
    },
    json: '{"mode": "both", "topology": {"prefill": 2, "decode": 4}, "store": {"global_segment_size": "4294967296", "enabled": true}, "proxy": {"image": "img:1"}}',
  });
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'store' }).value, { mode: 'store', store: { enabled: true } });
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'disaggregated' }).value,
    { mode: 'disaggregated', topology: { prefill: 1, decode: 1 } });
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'disaggregated', prefillReplicas: 3n, decodeReplicas: undefined }).value,
    { mode: 'disaggregated', topology: { prefill: 3, decode: 1 } });
});

test('buildMooncakeBlock: integers beyond 2^53 come back as BigInts', () => {
  const r = gco.buildMooncakeBlock({
    mode: 'both',
    autoscaling: { prefill: { min_replicas: 1, max_replicas: 2n ** 60n } },
  });
  assert.equal(r.ok, true);
  assert.equal(r.value.autoscaling.prefill.max_replicas, 2n ** 60n);
  assert.equal(r.value.autoscaling.prefill.min_replicas, 1);
  assert.match(r.json, /"max_replicas": 1152921504606846976\}/);
  assert.equal(
    gco.buildMooncakeBlock({ mode: 'both', autoscaling: { decode: { max_replicas: 2n ** 64n - 1n } } })
      .value.autoscaling.decode.max_replicas,
    2n ** 64n - 1n,
  );
});

test('buildMooncakeBlock: the reference message, path and exception class', () => {
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'bogus', store: { local_buffer_size: -1 } }), {
    ok: false,
    error: 'mooncake.store.local_buffer_size: byte-size value out of range [0, 9223372036854775807]: -1',
    path: 'mooncake.store.local_buffer_size',
    kind: 'ValueError',
  });
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'disaggregated', prefillReplicas: 0 }), {
    ok: false,
    error: 'mooncake.topology.prefill out of range [1, 1000]: 0',
    path: 'mooncake.topology.prefill',
    kind: 'ValueError',
  });
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'both', store: 5 }), {
    ok: false, error: "'int' object is not iterable", path: 'mooncake.store', kind: 'TypeError',
  });
  // null is Python's None, not "use the default".
  assert.deepEqual(gco.buildMooncakeBlock({ mode: 'both', prefillReplicas: null }), {
    ok: false,
    error: 'mooncake.topology.prefill must be an integer in [1, 1000], got None',
    path: 'mooncake.topology.prefill',
    kind: 'ValueError',
  });
  assert.equal(gco.buildMooncakeBlock({ mode: null }).error,
    'mooncake.mode must be one of {both, disaggregated, store}, got None');
  assert.equal(gco.buildMooncakeBlock({ mode: [] }).error,
    'mooncake.mode must be one of {both, disaggregated, store}, got []');
});

// --- misuse throws --------------------------------------------------------------------

test('misuse throws a TypeError naming the function', () => {
  const cyclic = []; cyclic.push(cyclic);
  let deep = 1; for (let i = 0; i < 1001; i++) deep = [deep];
  const cases = [
    [() => gco.validate(), /^validate: expected a JSON value, got undefined$/],
    [() => gco.validate(undefined), /^validate: /],
    [() => gco.validate(() => 1), /^validate: invalid type/],
    [() => gco.validate(Symbol('x')), /^validate: invalid type/],
    [() => gco.validate(cyclic), /^validate: value is nested too deeply \(or is cyclic\)$/],
    [() => gco.validate(deep), /^validate: value is nested too deeply/],
    [() => gco.validate({ mode: 'both', topology: { prefill: 2n ** 70n, decode: 1 } }), /^validate: .*BigInt/],
    [() => gco.validate(new Map([['mode', 'both']])), /^validate: invalid type: an iterable object/],
    [() => gco.validate({ mode: 'both', store: new Set() }), /^validate: invalid type: an iterable object/],
    [() => gco.validateJson(), /^validateJson: expected a string$/],
    [() => gco.validateJson(42), /^validateJson: expected a string$/],
    [() => gco.validateJson({ mode: 'both' }), /^validateJson: expected a string$/],
    [() => gco.authorByteSize(), /^authorByteSize: expected a JSON value, got undefined$/],
    [() => gco.authorByteSize(2n ** 70n), /^authorByteSize: .*BigInt/],
    [() => gco.parseByteSize(4), /^parseByteSize: expected a string$/],
    [() => gco.formatByteSize(4294967296), /^formatByteSize: expected a string$/],
    [() => gco.buildMooncakeBlock(), /^buildMooncakeBlock: expected an options object$/],
    [() => gco.buildMooncakeBlock(null), /^buildMooncakeBlock: expected an options object$/],
    [() => gco.buildMooncakeBlock(['both']), /^buildMooncakeBlock: expected an options object$/],
    [() => gco.buildMooncakeBlock('both'), /^buildMooncakeBlock: expected an options object$/],
    [() => gco.buildMooncakeBlock({}), /^buildMooncakeBlock: option "mode" is required$/],
    [() => gco.buildMooncakeBlock({ mode: undefined }), /^buildMooncakeBlock: option "mode" is required$/],
    [() => gco.buildMooncakeBlock({ mode: 'both', prefill_replicas: 2 }),
      /^buildMooncakeBlock: unknown option "prefill_replicas"; expected one of mode, prefillReplicas, /],
    [() => gco.buildMooncakeBlock({ mode: 'both', store: { x: () => 1 } }), /^buildMooncakeBlock: option "store": invalid type/],
    [() => gco.buildMooncakeBlock({ mode: 'both', store: cyclic }), /^buildMooncakeBlock: option "store": value is nested too deeply/],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, (e) => e instanceof TypeError && message.test(e.message), String(call));
  }
  // The module is still usable after a throw.
  assert.equal(gco.validate({ mode: 'store' }).ok, true);
});

test('a value nested as deep as the text parser allows is accepted', () => {
  let deep = 1; for (let i = 0; i < 1000; i++) deep = [deep];
  assert.deepEqual(gco.validate(deep).errors, [err('mooncake', 'mooncake block must be a mapping')]);
});

// --- whole documents, plans and commands ---------------------------------------------

test('validateDocument: the kind, and each kind checked as gco-spec validate does', () => {
  const request = '{"endpoint_name":"llm","image":"img:1","replicas":0}';
  assert.deepEqual(unplaced(gco.validateDocument(request)), {
    kind: 'deploy_request', ok: true, errors: [], warnings: [],
    spec: { image: 'img:1', port: 8000, replicas: 0, gpu_count: 1, health_check_path: '/health' },
  });
  assert.deepEqual(unplaced(gco.validateDocument('{"image":"img:1","port":0}')), {
    kind: 'spec', ok: false, errors: [err('port', 'port must be an integer in [1, 65535], got 0')], warnings: [],
  });
  assert.deepEqual(gco.validateDocument('{"mode":"store"}'), { kind: 'mooncake_block', ok: true, errors: [], warnings: [] });
  assert.deepEqual(unplaced(gco.validateDocument('[1')), {
    kind: null, ok: false, errors: [err('', "invalid JSON: Expecting ',' delimiter: line 1 column 3 (char 2)")], warnings: [],
  });
});

test('validateDocument: the deploy surroundings come from the options', () => {
  const request = '{"endpoint_name":"llm","mooncake_mode":"store"}';
  // Without deployed regions (a file check) no target regions is fine.
  assert.equal(gco.validateDocument(request).ok, true);
  assert.equal(gco.validateDocument(request).spec.image, gco.validateDocument(request, {}).spec.image);
  // An option set to undefined is one not given.
  assert.equal(gco.validateDocument(request, { deployedRegions: undefined }).ok, true);
  assert.deepEqual(unplaced(gco.validateDocument(request, { deployedRegions: [], defaultImage: 'd:1' })).errors, [
    err('target_regions', 'No deployed regions found. Deploy infrastructure first.'),
  ]);
  assert.equal(gco.validateDocument(request, { deployedRegions: ['us-east-1'], defaultImage: 'd:1' }).spec.image, 'd:1');
});

/** The text a range covers, found from its lines and UTF-16 columns as an
 * editor finds it (lines end at \n, \r\n or \r), checked against its byte
 * offsets. */
function rangeText(text, range) {
  const lineStarts = [0];
  for (const m of text.matchAll(/\r\n|\n|\r/g)) lineStarts.push(m.index + m[0].length);
  const at = ({ line, column }) => lineStarts[line - 1] + column - 1;
  const slice = text.slice(at(range.start), at(range.end));
  const bytes = Buffer.from(text, 'utf8').subarray(range.start.offset, range.end.offset).toString('utf8');
  assert.equal(bytes, slice, 'the byte offsets cover what the columns do');
  return slice;
}

test('validateDocument: each diagnostic\'s range covers the value, the lacking object or the unknown key', () => {
  const text = '{\r\n\t"endpoint_name": "chat-pd", "image": "vllm/vllm-openai:v1",\r\n'
    + '\t"labels": {"team": "推理😀"}, "mooncake": {"mode": "disaggregated",\r\n'
    + '\t  "topology": {"prefill": 0, "decode": 2}, "colour": "蓝", "colour": "红"}}';
  const doc = gco.validateDocument(text);
  const placed = [...doc.errors, ...doc.warnings].map((d) => [d.path, rangeText(text, d.range)]);
  assert.deepEqual(placed, [
    ['mooncake.topology.prefill', '0'],
    ['labels.team', '"推理😀"'],
    ['mooncake.colour', '"colour"'],
  ]);
  const zero = text.indexOf(': 0') + 2;
  assert.deepEqual(doc.errors[0].range.start, { line: 4, column: 28, offset: Buffer.byteLength(text.slice(0, zero)) });
  // A missing member: the object that lacks it.
  const lacking = '{"mode": "both", "topology": {"decode": 1}}';
  assert.equal(rangeText(lacking, gco.validateDocument(lacking).errors[0].range), '{"decode": 1}');
  // Text that is no document: one error, placed where it goes wrong.
  for (const [bad, at, message] of [
    ['{"mode": }', '}', "invalid JSON: Expecting value: line 1 column 10 (char 9)"],
    ['', '', 'invalid JSON: the document is empty'],
    ['['.repeat(1001), '[', 'invalid JSON: Nesting too deep: line 1 column 1001 (char 1000)'],
  ]) {
    const answer = gco.validateDocument(bad);
    assert.equal(answer.errors.length, 1);
    assert.equal(answer.errors[0].message, message);
    assert.equal(rangeText(bad, answer.errors[0].range), at);
  }
  // A value not given as text has no range, and nothing pretends otherwise.
  assert.equal('range' in gco.validate({ mode: 'both' }).errors[0], false);
  assert.equal('range' in gco.validateJson('{"mode": "both"}').errors[0], false);
});

test('validateDocument: with monitorSettings, a deploy request is checked as POST /api/validate checks it', () => {
  const request = '{"endpoint_name": "kv", "mooncake_mode": "store", "target_regions": ["us-east-1", "eu-west-1"]}';
  const options = { deployedRegions: ['us-east-1', 'eu-west-1'], defaultImage: 'img:1' };
  assert.deepEqual(gco.validateDocument(request, options).warnings, []);
  const settings = { default: {}, regions: { 'eu-west-1': { master_image: 'mooncake/master:1' } } };
  const doc = gco.validateDocument(request, { ...options, monitorSettings: settings });
  assert.equal(doc.ok, true);
  assert.deepEqual(doc.warnings.map((d) => [d.path, d.message.split(':')[0]]), [
    ['mooncake.store.master_image', 'us-east-1 has no master image'],
  ]);
  // No mooncake block in the text: the request itself lacks it.
  assert.equal(rangeText(request, doc.warnings[0].range), request);
  const everywhere = { default: { master_image: 'mooncake/master:1' } };
  assert.deepEqual(gco.validateDocument(request, { ...options, monitorSettings: everywhere }).warnings, []);
  for (const [bad, message] of [
    [{ default: { master_imag: 'x' } }, /^validateDocument: option "monitorSettings": unknown monitor setting default\.master_imag; the settings are /],
    [{ regions: { mars: {} } }, /^validateDocument: option "monitorSettings": regions\.mars: 'mars' is not an AWS region/],
    [[], /^validateDocument: option "monitorSettings": the monitor settings must be a table$/],
  ]) {
    assert.throws(() => gco.validateDocument(request, { monitorSettings: bad }), (e) => e instanceof TypeError && message.test(e.message));
  }
});

test('planDeploy and deployCommands: as gco-spec plan and cli', () => {
  const request = '{"endpoint_name":"llm","image":"img:1","namespace":"ml","target_regions":["us-east-1","eu-west-1"]}';
  const one = gco.planDeploy(request, 'us-east-1');
  assert.equal(one.ok, true);
  // Namespace ml: none of what GCO's base pass keeps in gco-inference.
  assert.deepEqual([one.value.region, one.value.objects.map((o) => `${o.kind} ${o.name}`)], ['us-east-1', ['ConfigMap llm-tls-proxy', 'Deployment llm', 'Service llm']]);
  const all = gco.planDeploy(request);
  assert.deepEqual(all.value.map((p) => p.region), ['us-east-1', 'eu-west-1']);
  assert.deepEqual(gco.planDeploy('{"image":"img:1"}'), {
    ok: false, errors: [err('', 'expected a deploy request or an endpoint record')],
  });
  assert.deepEqual(gco.planDeploy('{"endpoint_name":"llm"}').errors.map((d) => d.path), ['image']);
  assert.deepEqual(gco.deployCommands(request), {
    ok: true,
    lines: ['gco inference deploy llm -i img:1 -r us-east-1 -r eu-west-1'],
    notes: [err('namespace', 'namespace has no `gco inference` flag; the commands leave it out')],
  });
  assert.deepEqual(gco.deployCommands('nope').errors.map((d) => d.path), ['']);
});

test('document functions: misuse throws a TypeError naming the function', () => {
  const cases = [
    [() => gco.validateDocument(1), /^validateDocument: expected a string$/],
    [() => gco.validateDocument('{}', null), /^validateDocument: expected an options object$/],
    [() => gco.validateDocument('{}', { regions: [] }), /^validateDocument: unknown option "regions"; expected one of deployedRegions, defaultImage, frameworks, monitorSettings$/],
    [() => gco.validateDocument('{}', { frameworks: ['vllm', 'x'] }), /^validateDocument: option "frameworks" must name one or more of "vllm", "sglang" and "tgi"$/],
    [() => gco.validateDocument('{}', { frameworks: [1] }), /^validateDocument: option "frameworks": expected an array of strings$/],
    [() => gco.validateDocument('{}', { deployedRegions: 'us-east-1' }), /^validateDocument: option "deployedRegions": expected an array of strings$/],
    [() => gco.validateDocument('{}', { deployedRegions: [1] }), /^validateDocument: option "deployedRegions": expected an array of strings$/],
    [() => gco.validateDocument('{}', { deployedRegions: null }), /^validateDocument: option "deployedRegions": expected an array of strings$/],
    [() => gco.validateDocument('{}', { defaultImage: 1 }), /^validateDocument: option "defaultImage": expected a string$/],
    [() => gco.planDeploy('{}', 5), /^planDeploy: expected a string$/],
    [() => gco.planDeploy(), /^planDeploy: expected a string$/],
    [() => gco.deployCommands(), /^deployCommands: expected a string$/],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, (e) => e instanceof TypeError && message.test(e.message), String(call));
  }
});
