// The recorded oracle corpus through the package: each line of a gzip
// JSON-lines file is `{"request": "<request line>", "answer": "<answer
// line>"}` (the reference oracle's JSON-lines protocol, as
// tests/differential records it), and the package must give the recorded
// answer.
//
//   const { checkCorpus } = require('./corpus.cjs');
//   checkCorpus('/path/to/corpus.jsonl.gz', gco)  // -> { checked, skipped }, throws on a difference
//
// `validate` requests go through validateJson on the block's own text (the
// exact path); `author_byte_size` and `build` through authorByteSize and
// buildMooncakeBlock, whose JS arguments cannot say `1.0` or hold integers
// beyond 2^53 as numbers: integers become BigInts when they must, and a
// request JS arguments cannot say (an integral float such as `1.0`, an
// integer beyond 64 bits, a lone surrogate, an integer-like object key,
// whose place JS objects do not keep) is counted as skipped.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const zlib = require('node:zlib');

/** The raw text of the top-level member `key` of a JSON object's text. */
function memberText(text, key) {
  let depth = 0;
  let i = 0;
  let last = null;
  const skipString = (at) => {
    let j = at + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = skipString(i);
      if (depth === 1 && JSON.parse(text.slice(i, end)) === key) {
        let j = end;
        while (/\s|:/.test(text[j])) j += 1;
        const start = j;
        let d = 0;
        for (; j < text.length; j += 1) {
          const ch = text[j];
          if (ch === '"') { j = skipString(j) - 1; continue; }
          if (ch === '{' || ch === '[') d += 1;
          else if (ch === '}' || ch === ']') { if (d === 0) break; d -= 1; }
          else if (ch === ',' && d === 0) break;
        }
        last = text.slice(start, j).trim();
        i = j;
        continue;
      }
      i = end;
      continue;
    }
    if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
    i += 1;
  }
  return last;
}

/** The number literals of a text outside its strings. */
function numbers(text) {
  return text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g) || [];
}

/** The package's arguments take integers from -2^63 to 2^64 - 1. */
const INT_RANGE = [-(2n ** 63n), 2n ** 64n - 1n];

/**
 * JS arguments for a request, or null when the package's arguments cannot
 * say them: `1.0`, or an integer beyond 64 bits (validateJson's text can).
 */
function jsArguments(line) {
  const literals = numbers(line);
  if (literals.some((n) => /[.eE]/.test(n) && Number.isInteger(Number(n)))) return null;
  const ints = literals.filter((n) => !/[.eE]/.test(n)).map(BigInt);
  if (ints.some((i) => i < INT_RANGE[0] || i > INT_RANGE[1])) return null;
  // A lone surrogate crosses into wasm as U+FFFD (wasm-bindgen's strings
  // are UTF-8); validateJson's `\ud800` escapes keep it, JS strings cannot.
  // And a JS object lists integer-like keys ("12") first, whatever order
  // the text gave them in (Python's dicts keep it).
  let unsayable = false;
  // Integers a JS number cannot hold become BigInts (marked, then revived).
  const marked = line.replace(/"(?:[^"\\]|\\.)*"|(-?\d{16,})(?![.eE\d])/g, (m, big) => (big ? `{"$bigint":"${big}"}` : m));
  const args = JSON.parse(marked, (_, v) => {
    if (typeof v === 'string' && !v.isWellFormed()) unsayable = true;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    if (typeof v.$bigint === 'string') return BigInt(v.$bigint);
    if (Object.keys(v).some((k) => /^(0|[1-9]\d*)$/.test(k) || !k.isWellFormed())) unsayable = true;
    return v;
  });
  return unsayable ? null : args;
}

const BUILD_ARGUMENTS = ['mode', 'prefill_replicas', 'decode_replicas', 'store', 'transfer', 'proxy', 'autoscaling', 'default_proxy_image'];
const SNAKE = { prefill_replicas: 'prefillReplicas', decode_replicas: 'decodeReplicas', default_proxy_image: 'defaultProxyImage' };

/** The package's answer to one request line, compared with the recorded one; false when skipped. */
function checkLine(gco, requestLine, answerLine) {
  // Python's json writes NaN and Infinity; their place is all that is read
  // here (a built block's text is compared whole below).
  const answer = JSON.parse(answerLine.replace(/"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)/g, (m, bare) => (bare ? 'null' : m)));
  // Read from the text: a request may hold what JSON.parse refuses (NaN).
  const opText = memberText(requestLine, 'op');
  const op = opText?.startsWith('"') ? JSON.parse(opText) : null;
  const quirk = answer.kind === 'TypeError' && String(answer.error).startsWith('unhashable type');
  if (op === 'validate') {
    const port = gco.validateJson(memberText(requestLine, 'block') ?? 'null');
    if ('ok' in answer) assert.deepEqual([port.ok, port.errors], [true, []], requestLine);
    else if (quirk) assert.equal(port.ok, false, requestLine);
    else assert.equal(port.errors[0]?.message, answer.error, requestLine);
    return true;
  }
  if (op !== 'author_byte_size' && op !== 'build') return false;
  let request;
  try {
    request = jsArguments(requestLine);
  } catch {
    return false; // NaN or Infinity in the arguments: JS's JSON cannot read them
  }
  if (request === null) return false;
  if (op === 'author_byte_size') {
    const port = gco.authorByteSize(request.value === undefined ? null : request.value);
    assert.deepEqual(port, 'ok' in answer ? { ok: true, value: answer.ok } : { ok: false, error: answer.error }, requestLine);
    return true;
  }
  if (op === 'build') {
    const options = {};
    for (const [k, v] of Object.entries(request)) {
      // The oracle reads its arguments and ignores other members ("id").
      if (!BUILD_ARGUMENTS.includes(k)) continue;
      // The oracle reads absent and null optional arguments alike.
      if (v === null && !['mode', 'prefill_replicas', 'decode_replicas'].includes(k)) continue;
      options[SNAKE[k] || k] = v;
    }
    if (!('mode' in options)) options.mode = null;
    const port = gco.buildMooncakeBlock(options);
    if ('ok' in answer) assert.equal(`{"ok": ${port.json}}`, answerLine, requestLine);
    else if (quirk) assert.equal(port.ok, false, requestLine);
    else assert.deepEqual([port.ok, port.error, port.kind], [false, answer.error, answer.kind], requestLine);
    return true;
  }
  return false;
}

/** Checks every line of a gzip JSON-lines corpus; throws at the first difference. */
function checkCorpus(file, gco) {
  const lines = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').split('\n');
  let checked = 0;
  let skipped = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    const { request, answer } = JSON.parse(line);
    // The header line (format, seed, the oracle's digest) holds no request.
    if (request === undefined) continue;
    if (checkLine(gco, request, answer)) checked += 1;
    else skipped += 1;
  }
  return { checked, skipped };
}

module.exports = { checkCorpus, checkLine, memberText };
