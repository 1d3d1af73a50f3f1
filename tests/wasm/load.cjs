// Loads the node build of the validator, or says how to make it.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const PKG = path.join(ROOT, 'core', 'pkg', 'node', 'gco_spec.js');

function loadPackage() {
  if (!fs.existsSync(PKG)) {
    throw new Error(`${path.relative(ROOT, PKG)} is missing: run bash scripts/build-wasm.sh first`);
  }
  return require(PKG);
}

module.exports = { ROOT, loadPackage };
