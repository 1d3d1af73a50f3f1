// Names the console's assets in dist/ by their content and writes their
// compressed forms beside them (scripts/build-web.sh runs it last).
//
// Each asset becomes `<stem>-<16 hex>.<ext>`, the hex the start of the
// SHA-256 of its bytes, after the names it refers to are rewritten: so a
// name always means the same bytes, and the server may let browsers keep
// it for a year (backend/src/console_files.rs). The order follows the
// references: wasm-bindgen's snippets (its JS modules, under snippets/), the
// wasm, the bindings, which import the snippets, then boot.js, which names
// the bindings and the wasm, then index.html, which names every asset and
// keeps its own name.
// Each asset then gets a brotli (quality 11) and a gzip (level 9) form,
// `<name>.br` and `<name>.gz`, which the server sends as the request's
// Accept-Encoding allows.
//
// Usage: node scripts/dist-assets.mjs dist
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, renameSync, writeFileSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";

const dist = process.argv[2];
if (!dist) {
  console.error("usage: node scripts/dist-assets.mjs DIST");
  process.exit(2);
}

/** The page's assets, in the order they are named. */
const PAGE_ASSETS = ["gco-web_bg.wasm", "gco-web.js", "style.css", "boot.js"];
/** wasm-bindgen's snippets: every module under snippets/, by its path in dist/. */
const snippets = existsSync(join(dist, "snippets"))
  ? readdirSync(join(dist, "snippets"), { recursive: true })
      .filter((p) => p.endsWith(".js"))
      .map((p) => relative(dist, join(dist, "snippets", p)))
      .sort()
  : [];
const ASSETS = [...snippets, ...PAGE_ASSETS];

const digest = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);
const renamed = new Map();

/** Rewrites every `/name` reference already renamed in `text`. */
function rewrite(text) {
  for (const [from, to] of renamed) text = text.split(`/${from}`).join(`/${to}`);
  return text;
}

for (const name of ASSETS) {
  const path = join(dist, name);
  if (!existsSync(path)) {
    console.error(`dist-assets: ${path} is missing`);
    process.exit(1);
  }
  let bytes = readFileSync(path);
  if (!name.endsWith(".wasm")) {
    bytes = Buffer.from(rewrite(bytes.toString("utf8")), "utf8");
    writeFileSync(path, bytes);
  }
  const dot = name.lastIndexOf(".");
  const named = `${name.slice(0, dot)}-${digest(bytes)}${name.slice(dot)}`;
  renameSync(path, join(dist, named));
  renamed.set(name, named);
}

const page = join(dist, "index.html");
const html = rewrite(readFileSync(page, "utf8"));
for (const name of PAGE_ASSETS) {
  if (!html.includes(`/${renamed.get(name)}`)) {
    console.error(`dist-assets: index.html does not name /${name}`);
    process.exit(1);
  }
}
writeFileSync(page, html);

for (const named of renamed.values()) {
  const bytes = readFileSync(join(dist, named));
  writeFileSync(
    join(dist, `${named}.br`),
    brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  );
  writeFileSync(join(dist, `${named}.gz`), gzipSync(bytes, { level: 9 }));
}
console.log(JSON.stringify(Object.fromEntries(renamed)));
