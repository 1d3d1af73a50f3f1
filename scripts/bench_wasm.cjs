// wasm part of scripts/benchmarks.sh: the validator package under node
// (core/pkg/node, built by scripts/build-wasm.sh) against ajv validating the
// same texts with the spec's JSON Schema (core/schema/), in one process.
//
//   node scripts/bench_wasm.cjs [inputs...]   (default core/benches/inputs/*.json)
//
// Prints one JSON line per input and path:
//   {"what": "wasm", "input": "full_valid", "path": "validateJson", "ns": 1234.5, "verdict": "ok"}
// Paths: validateJson(text); validate(object) (object parsed once, outside
// the loop); ajv(JSON.parse(text)), the counterpart of validateJson; ajv(object),
// the counterpart of validate. Then two rows of the package alone:
// validateDocument of the full deploy request (core/benches/inputs/requests/
// full.json, input "request_full") and a trivial call, formatByteSize("0")
// (input "trivial": the cost of crossing into wasm and back with a string).
// ns is the best of REPEAT rounds, as Python's timeit
// (scripts/bench_reference.py) reports it. QUICK=1 runs briefly.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { loadPackage, ROOT } = require('../tests/wasm/load.cjs');
const Ajv2020 = require('ajv/dist/2020').default;

const QUICK = process.env.QUICK === '1';
const REPEAT = QUICK ? 2 : 7;
const MIN_ROUND_NS = QUICK ? 2e7 : 2e8; // as timeit's autorange: rounds of at least 0.2 s

/** Nanoseconds per call of fn: the best of REPEAT rounds of a calibrated loop. */
function time(fn) {
  let number = 1;
  for (;;) {
    const ns = round(fn, number);
    if (ns >= MIN_ROUND_NS) break;
    number *= ns > 0 ? Math.min(10, Math.ceil((MIN_ROUND_NS * 1.2) / ns)) : 10;
  }
  let best = Infinity;
  for (let r = 0; r < REPEAT; r++) best = Math.min(best, round(fn, number));
  return best / number;
}

let sink; // keeps results alive so no call is optimised away
function round(fn, number) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < number; i++) sink = fn();
  return Number(process.hrtime.bigint() - t0);
}

/** ajv compiled for the mooncake block: the schema's MooncakeSpec definition. */
function compileAjv() {
  const schema = JSON.parse(fs.readFileSync(path.join(ROOT, 'core', 'schema', 'endpoint-spec.schema.json'), 'utf8'));
  // schemars writes "format": "int64" on integers; ajv knows no such format.
  // Integer-ness and the bounds are keywords of their own, so the format adds nothing.
  const ajv = new Ajv2020({ allErrors: false });
  ajv.addFormat('int64', true);
  return ajv.compile({ $schema: schema.$schema, $defs: schema.$defs, $ref: '#/$defs/MooncakeSpec' });
}

function main() {
  const pkg = loadPackage();
  const ajvValidate = compileAjv();
  const inputs = process.argv.slice(2);
  const dir = path.join(ROOT, 'core', 'benches', 'inputs');
  const files = inputs.length ? inputs : fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(dir, f));

  for (const file of files) {
    const input = path.basename(file, '.json');
    const text = fs.readFileSync(file, 'utf8');
    const object = JSON.parse(text);
    const verdict = (r) => (r.ok ? 'ok' : r.errors[0].message);
    const ajvVerdict = (ok) => (ok ? 'ok' : `${ajvValidate.errors[0].instancePath} ${ajvValidate.errors[0].message}`);
    const paths = [
      ['validateJson', () => pkg.validateJson(text), () => verdict(pkg.validateJson(text))],
      ['validate', () => pkg.validate(object), () => verdict(pkg.validate(object))],
      ['ajv_text', () => ajvValidate(JSON.parse(text)), () => ajvVerdict(ajvValidate(JSON.parse(text)))],
      ['ajv_object', () => ajvValidate(object), () => ajvVerdict(ajvValidate(object))],
    ];
    for (const [name, fn, describe] of paths) {
      const ns = time(fn);
      console.log(JSON.stringify({ what: 'wasm', input, path: name, ns, verdict: describe() }));
    }
  }
  const request = fs.readFileSync(path.join(dir, 'requests', 'full.json'), 'utf8');
  const options = { deployedRegions: ['us-east-1', 'eu-west-1'] };
  const doc = pkg.validateDocument(request, options);
  console.log(JSON.stringify({
    what: 'wasm', input: 'request_full', path: 'validateDocument',
    ns: time(() => pkg.validateDocument(request, options)), verdict: doc.ok ? 'ok' : doc.errors[0].message,
  }));
  console.log(JSON.stringify({
    what: 'wasm', input: 'trivial', path: 'formatByteSize', ns: time(() => pkg.formatByteSize('0')), verdict: pkg.formatByteSize('0'),
  }));
  if (sink === undefined) console.error('(no result)');
}

main();
