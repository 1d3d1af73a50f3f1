//! The JS/TS API of the validator (wasm-bindgen), built by
//! `scripts/build-wasm.sh` into `core/pkg/web` and `core/pkg/node`.
//!
//! A thin layer: each function reads its JS arguments, calls the core and
//! hands the answer back as plain JS objects. No rule lives here. Invalid
//! specs and bad values are answers (`ok: false`); only misuse throws a
//! `TypeError` (an argument of the wrong JS type, a missing argument, an
//! unknown option name, a value that is not JSON-like: a function, a
//! symbol, a cyclic or too deeply nested object, a BigInt beyond 64 bits).
//!
//! The TypeScript declarations are written by hand below, so the generated
//! `.d.ts` has real interfaces; keep them in step with the shapes built here.

use js_sys::{Array, Object, Reflect};
use serde::Serialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::diagnostics::{Diagnostic, Report};
use crate::json::{MAX_DEPTH, Value};
use crate::mooncake::{BuildArgs, build_mooncake_block};
use crate::{ByteSizeArg, author_byte_size, document};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** One problem: a dotted field path (`[i]` for list items; `""` for the whole document) and its message. */
export interface Diagnostic {
  path: string;
  message: string;
}

/**
 * What `validate` and `validateJson` answer. `ok` is false when there is at
 * least one error; warnings never make it false. Errors come in the
 * reference's order: the first is the message GCO's Python validator gives.
 */
export interface ValidationResult {
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

/** A value, or the reference's message saying why there is none. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export type MooncakeMode = "both" | "disaggregated" | "store";

/** Counts of a split (`both`, `disaggregated`) topology, each in [1, 1000]. */
export interface MooncakeTopology {
  prefill: number;
  decode: number;
  [key: string]: unknown;
}

export interface MooncakeStore {
  enabled?: unknown;
  /** A canonical decimal byte count, e.g. "4294967296". */
  global_segment_size?: string;
  /** A canonical decimal byte count. */
  local_buffer_size?: string;
  cold_tier_enabled?: unknown;
  [key: string]: unknown;
}

export interface MooncakeTransfer {
  protocol?: "rdma" | "tcp";
  device_name?: string;
  [key: string]: unknown;
}

export interface MooncakeProxy {
  image?: unknown;
  scheduling?: unknown;
  [key: string]: unknown;
}

export interface MooncakeRoleBounds {
  /** An integer >= 1; a bigint beyond 2^53. */
  min_replicas?: number | bigint | null;
  /** An integer >= min_replicas; a bigint beyond 2^53. */
  max_replicas?: number | bigint | null;
  [key: string]: unknown;
}

export interface MooncakeAutoscaling {
  enabled?: unknown;
  prefill?: MooncakeRoleBounds | null;
  decode?: MooncakeRoleBounds | null;
  [key: string]: unknown;
}

/**
 * A valid `mooncake` block as `buildMooncakeBlock` makes it. Keys GCO does
 * not know are kept (they are warnings, not errors), hence the index
 * signatures.
 */
export interface MooncakeBlock {
  mode: MooncakeMode;
  topology?: MooncakeTopology;
  store?: MooncakeStore;
  transfer?: MooncakeTransfer;
  proxy?: MooncakeProxy;
  autoscaling?: MooncakeAutoscaling;
  [key: string]: unknown;
}

/**
 * The arguments of the reference's `_build_mooncake_block`, in camelCase.
 * Only `mode` is required; an absent (or `undefined`) option takes the
 * reference's default (replicas 1, nothing else). `null` is passed on as
 * Python's `None`. Values of the wrong kind are reported, not thrown; an
 * option name not listed here throws.
 */
export interface BuildOptions {
  mode: MooncakeMode | (string & {}) | null;
  prefillReplicas?: number | bigint | null;
  decodeReplicas?: number | bigint | null;
  store?: Record<string, unknown> | null;
  transfer?: Record<string, unknown> | null;
  proxy?: Record<string, unknown> | null;
  autoscaling?: Record<string, unknown> | null;
  /** Split modes default `proxy.image` to this when it is truthy. */
  defaultProxyImage?: string | null;
}

/**
 * `buildMooncakeBlock`'s answer: the block, with `json` its text as Python's
 * `json.dumps` writes it (exact even for integers a JS number cannot hold);
 * or the reference's message, the path of the field at fault and the Python
 * exception class the reference raises.
 */
export type BuildResult =
  | { ok: true; value: MooncakeBlock; json: string }
  | { ok: false; error: string; path: string; kind: "ValueError" | "TypeError" };
"#;

/// Throws a `TypeError` saying how `function` was misused.
fn misuse(function: &str, what: &str) -> JsValue {
    js_sys::TypeError::new(&format!("{function}: {what}")).into()
}

/// Plain objects (not `Map`s) and `null`, so results can go to `JSON.stringify`.
fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(JsValue::from)
}

/// A JS value as the core's JSON model: JS numbers that are safe integers
/// become ints, others floats (JS cannot tell `2.0` from `2`; use
/// `validateJson` for that); a BigInt within 64 bits is an int.
fn from_js(function: &str, value: JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Err(misuse(function, "expected a JSON value, got undefined"));
    }
    check_depth(function, &value)?;
    serde_wasm_bindgen::from_value(value).map_err(|e| {
        let message = e.to_string();
        misuse(function, message.strip_prefix("Error: ").unwrap_or(&message))
    })
}

/// Refuses values nested deeper than the text parser accepts (which also
/// stops cycles) before serde-wasm-bindgen recurses into them: the core's
/// checks are written for what `json::parse` can produce.
fn check_depth(function: &str, root: &JsValue) -> Result<(), JsValue> {
    let mut stack: Vec<(JsValue, usize)> = vec![(root.clone(), 0)];
    while let Some((value, depth)) = stack.pop() {
        if !value.is_object() || value.is_function() {
            continue;
        }
        if depth >= MAX_DEPTH {
            return Err(misuse(function, "value is nested too deeply (or is cyclic)"));
        }
        let children = if Array::is_array(&value) {
            value.unchecked_into::<Array>()
        } else if let Some(map) = value.dyn_ref::<js_sys::Map>() {
            Array::from(&map.values())
        } else {
            Object::values(value.unchecked_ref::<Object>())
        };
        stack.extend(children.iter().filter(JsValue::is_object).map(|v| (v, depth + 1)));
    }
    Ok(())
}

fn string_arg(function: &str, value: JsValue) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| misuse(function, "expected a string"))
}

#[derive(Serialize)]
struct Diag<'a> {
    path: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct Validation<'a> {
    ok: bool,
    errors: Vec<Diag<'a>>,
    warnings: Vec<Diag<'a>>,
}

fn report_to_js(report: &Report) -> Result<JsValue, JsValue> {
    fn diag(d: &Diagnostic) -> Diag<'_> {
        Diag { path: &d.path, message: &d.message }
    }
    to_js(&Validation {
        ok: report.is_ok(),
        errors: report.errors().map(diag).collect(),
        warnings: report.warnings().map(diag).collect(),
    })
}

#[derive(Serialize)]
struct Done<'a, T: Serialize> {
    ok: bool,
    value: &'a T,
}

#[derive(Serialize)]
struct Failed<'a> {
    ok: bool,
    error: &'a str,
}

fn outcome_to_js<T: Serialize, E: std::fmt::Display>(result: Result<T, E>) -> Result<JsValue, JsValue> {
    match result {
        Ok(value) => to_js(&Done { ok: true, value: &value }),
        Err(e) => to_js(&Failed { ok: false, error: &e.to_string() }),
    }
}

/// Checks a document given as a JS value: an endpoint record, a deploy
/// request, a spec or a bare `mooncake` block, told apart by their keys.
///
/// JS numbers are read as JSON numbers are by JS: a safe integer is an int,
/// anything else (`2.5`, `2 ** 53`) a float, and `2.0` is the int 2; a
/// BigInt is an int. For Python's reading of text (`2.0` a float, integers
/// exact at any size) use `validateJson`. Throws a `TypeError` for
/// `undefined`, functions, symbols, BigInts beyond 64 bits, and values
/// nested deeper than 1000 levels or cyclic.
#[wasm_bindgen(unchecked_return_type = "ValidationResult")]
pub fn validate(#[wasm_bindgen(unchecked_param_type = "unknown")] document: JsValue) -> Result<JsValue, JsValue> {
    let value = from_js("validate", document)?;
    report_to_js(&document::check_document(&value))
}

/// Checks a document given as JSON text, read as Python's `json` reads it:
/// integers exact at any size, `2.0` a float, the last of duplicate keys
/// wins. Text that is not JSON is an error at path `""`, not an exception;
/// throws a `TypeError` only when `text` is not a string.
#[wasm_bindgen(js_name = validateJson, unchecked_return_type = "ValidationResult")]
pub fn validate_json(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<JsValue, JsValue> {
    let text = string_arg("validateJson", text)?;
    report_to_js(&document::check_document_text(&text))
}

/// The reference's `author_byte_size`: the canonical decimal string of a
/// byte size given as an integer or a digit string. Any other value is
/// answered with the reference's message (`ok: false`); JS numbers are read
/// as in `validate` (use a BigInt or a digit string beyond 2^53).
#[wasm_bindgen(js_name = authorByteSize, unchecked_return_type = "Outcome<string>")]
pub fn author_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "number | bigint | string")] value: JsValue,
) -> Result<JsValue, JsValue> {
    let value = from_js("authorByteSize", value)?;
    outcome_to_js(author_byte_size(ByteSizeArg::from(&value)))
}

/// Reads a human byte size (`4 GiB`, `1.5 GB`, `4294967296`) as the
/// canonical decimal string. Decimal units are powers of 1000, binary ones
/// (`KiB` ...) of 1024.
#[wasm_bindgen(js_name = parseByteSize, unchecked_return_type = "Outcome<string>")]
pub fn parse_byte_size_js(#[wasm_bindgen(unchecked_param_type = "string")] input: JsValue) -> Result<JsValue, JsValue> {
    let input = string_arg("parseByteSize", input)?;
    outcome_to_js(crate::parse_byte_size(&input))
}

/// Formats a canonical byte count in the largest exact unit (`4 GiB`);
/// `null` when it is not a byte size.
#[wasm_bindgen(js_name = formatByteSize, unchecked_return_type = "string | null")]
pub fn format_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "string")] canonical: JsValue,
) -> Result<JsValue, JsValue> {
    let canonical = string_arg("formatByteSize", canonical)?;
    Ok(crate::format_byte_size(&canonical).map_or(JsValue::NULL, |s| JsValue::from_str(&s)))
}

const BUILD_OPTIONS: [&str; 8] =
    ["mode", "prefillReplicas", "decodeReplicas", "store", "transfer", "proxy", "autoscaling", "defaultProxyImage"];

#[derive(Serialize)]
struct Built<'a> {
    ok: bool,
    value: &'a Value,
    json: String,
}

#[derive(Serialize)]
struct BuildFailed<'a> {
    ok: bool,
    error: &'a str,
    path: &'a str,
    kind: &'a str,
}

/// The reference's `_build_mooncake_block`: assembles a block from deploy
/// arguments (topology for split modes, the store enabled for store-bearing
/// ones, byte sizes authored, the proxy image defaulted) and validates it.
/// Throws a `TypeError` when `options` is not an object, lacks `mode`, or
/// has an option name not in `BuildOptions`; option values are read as in
/// `validate`.
#[wasm_bindgen(js_name = buildMooncakeBlock, unchecked_return_type = "BuildResult")]
pub fn build_mooncake_block_js(
    #[wasm_bindgen(unchecked_param_type = "BuildOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    const F: &str = "buildMooncakeBlock";
    if !options.is_object() || Array::is_array(&options) || options.is_function() {
        return Err(misuse(F, "expected an options object"));
    }
    for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !BUILD_OPTIONS.contains(&key.as_str()) {
            return Err(misuse(F, &format!("unknown option \"{key}\"; expected one of {}", BUILD_OPTIONS.join(", "))));
        }
    }
    let option = |name: &str| -> Result<Option<Value>, JsValue> {
        let value = Reflect::get(&options, &JsValue::from_str(name))?;
        if value.is_undefined() { Ok(None) } else { from_js(F, value).map(Some) }
    };
    let mode = option("mode")?.ok_or_else(|| misuse(F, "option \"mode\" is required"))?;
    let mut args = BuildArgs::new(mode);
    if let Some(n) = option("prefillReplicas")? {
        args.prefill_replicas = n;
    }
    if let Some(n) = option("decodeReplicas")? {
        args.decode_replicas = n;
    }
    args.store = option("store")?;
    args.transfer = option("transfer")?;
    args.proxy = option("proxy")?;
    args.autoscaling = option("autoscaling")?;
    args.default_proxy_image = option("defaultProxyImage")?;
    match build_mooncake_block(&args) {
        Ok(block) => to_js(&Built { ok: true, value: &block, json: block.to_json() }),
        Err(e) => to_js(&BuildFailed { ok: false, error: &e.message, path: &e.path, kind: e.kind.as_str() }),
    }
}
