// The package's ES module entry under node: the CommonJS build's exports
// (wasm-bindgen --target nodejs loads the wasm synchronously on require).
export * from './gco_spec.js';
