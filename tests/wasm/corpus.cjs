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
// request with an integral float (`1.0`, `1e3`) is counted as skipped.
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

/** JS arguments for a request, or null when JS cannot say them (`1.0`). */
function jsArguments(line) {
  if (numbers(line).some((n) => /[.eE]/.test(n) && Number.isInteger(Number(n)))) return null;
  // Integers a JS number cannot hold become BigInts (marked, then revived).
  const marked = line.replace(/"(?:[^"\\]|\\.)*"|(-?\d{16,})(?![.eE\d])/g, (m, big) => (big ? `{"$bigint":"${big}"}` : m));
  return JSON.parse(marked, (_, v) => (v && typeof v === 'object' && typeof v.$bigint === 'string' ? BigInt(v.$bigint) : v));
}

const SNAKE = { prefill_replicas: 'prefillReplicas', decode_replicas: 'decodeReplicas', default_proxy_image: 'defaultProxyImage' };

/** The package's answer to one request line, compared with the recorded one; false when skipped. */
function checkLine(gco, requestLine, answerLine) {
  const answer = JSON.parse(answerLine);
  const op = JSON.parse(requestLine).op;
  const quirk = answer.kind === 'TypeError' && String(answer.error).startsWith('unhashable type');
  if (op === 'validate') {
    const port = gco.validateJson(memberText(requestLine, 'block') ?? 'null');
    if ('ok' in answer) assert.deepEqual([port.ok, port.errors], [true, []], requestLine);
    else if (quirk) assert.equal(port.ok, false, requestLine);
    else assert.equal(port.errors[0]?.message, answer.error, requestLine);
    return true;
  }
  const request = jsArguments(requestLine);
  if (request === null) return false;
  if (op === 'author_byte_size') {
    const port = gco.authorByteSize(request.value === undefined ? null : request.value);
    assert.deepEqual(port, 'ok' in answer ? { ok: true, value: answer.ok } : { ok: false, error: answer.error }, requestLine);
    return true;
  }
  if (op === 'build') {
    const options = {};
    for (const [k, v] of Object.entries(request)) {
      if (k === 'op') continue;
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
    if (checkLine(gco, request, answer)) checked += 1;
    else skipped += 1;
  }
  return { checked, skipped };
}

module.exports = { checkCorpus, checkLine, memberText };
