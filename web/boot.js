// Starts the console. A module file rather than an inline script, so the
// page's Content-Security-Policy can forbid inline scripts.
import init from "/gco-web.js";
init({ module_or_path: "/gco-web_bg.wasm" });
