//! The JS/TS API of the validator package (wasm-bindgen), built by
//! `scripts/build-wasm.sh` into the npm package `gco-spec` (`core/pkg`).
//!
//! A thin layer: each function reads its JS arguments, calls the same core
//! function the CLI and the server call, and hands the answer back. No rule
//! lives here. Answers are typed Rust values converted with
//! serde-wasm-bindgen, and options objects are read with serde into typed
//! values (`args.rs`); the TypeScript declarations of both are generated
//! from these types (tsify). Text arguments are read as Python's `json`
//! reads them (the exact path: integers of any size, `2.0` a float).
//!
//! Invalid input is an answer (`ok: false`); only misuse throws a
//! `TypeError` (an argument of the wrong JS type, a missing argument, an
//! unknown option name, a value that is not JSON-like: a function, a
//! symbol, a `Map` or other iterable that is not an array, a cyclic or too
//! deeply nested object, a BigInt beyond 64 bits).

mod args;

use js_sys::JsString;
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize};
use tsify::Tsify;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::commands::record_commands;
use crate::deploy::{DeployContext, plan_deploy_owned, plan_deploy_with_monitors};
use crate::diagnostics::Report;
use crate::document::{self, Located, check_document, record_of_document};
use crate::framework::{Framework, Frameworks};
use crate::json::{self, Value};
use crate::mooncake::{BuildArgs, build_mooncake_block};
use crate::region::MonitorSettings;
use crate::text_range::TextRange;
use crate::{ByteSizeArg, author_byte_size, check_mooncake};
use args::{JsDeserializer, Misuse};

/// Answers cross as plain JS data: dicts as plain objects, integers beyond
/// 2^53 as BigInts (see `json::serde_impl`).
const SERIALIZER: serde_wasm_bindgen::Serializer = serde_wasm_bindgen::Serializer::new()
    .serialize_maps_as_objects(true)
    .serialize_missing_as_null(true);

fn to_js<T: Serialize>(answer: &T) -> JsValue {
    // Every answer type serializes: strings, bools, lists and JSON values.
    answer
        .serialize(&SERIALIZER)
        .unwrap_or_else(|e| wasm_bindgen::throw_str(&e.to_string()))
}

/// One problem: a dotted field path (`mooncake.topology.prefill`; `""` for
/// text that is not JSON or for the whole document), its message, and where
/// a document given as text has it (`range`: the value at fault, the object
/// lacking a member, an unknown member's key; lines and columns from 1,
/// columns in UTF-16 code units as JS strings count, and UTF-8 byte
/// offsets). A value given as a JS object has no range.
#[derive(Serialize, Tsify)]
pub struct Diagnostic {
    pub path: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub range: Option<TextRange>,
}

/// What `validate` and `validateJson` answer for a `mooncake` block. `ok` is
/// false when there is at least one error; warnings never make it false.
/// Errors come in the reference's order: the first is the message GCO's
/// Python validator (`validate_mooncake_spec`) gives.
#[derive(Serialize, Tsify)]
pub struct ValidationResult {
    pub ok: bool,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
}

impl From<Report> for ValidationResult {
    fn from(report: Report) -> Self {
        let (mut errors, mut warnings) = (Vec::new(), Vec::new());
        for d in report.diagnostics {
            let list = if d.is_error() {
                &mut errors
            } else {
                &mut warnings
            };
            list.push(Diagnostic {
                path: d.path,
                message: d.message,
                range: None,
            });
        }
        ValidationResult {
            ok: errors.is_empty(),
            errors,
            warnings,
        }
    }
}

impl From<Vec<Located>> for ValidationResult {
    fn from(list: Vec<Located>) -> Self {
        let (mut errors, mut warnings) = (Vec::new(), Vec::new());
        for Located {
            diagnostic: d,
            range,
        } in list
        {
            let list = if d.is_error() {
                &mut errors
            } else {
                &mut warnings
            };
            list.push(Diagnostic {
                path: d.path,
                message: d.message,
                range,
            });
        }
        ValidationResult {
            ok: errors.is_empty(),
            errors,
            warnings,
        }
    }
}

/// What a document is, told from its keys as `gco-spec validate` does.
#[derive(Serialize, Tsify)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    Record,
    DeployRequest,
    Spec,
    MooncakeBlock,
}

impl From<document::DocumentKind> for DocumentKind {
    fn from(kind: document::DocumentKind) -> Self {
        match kind {
            document::DocumentKind::Record => DocumentKind::Record,
            document::DocumentKind::DeployRequest => DocumentKind::DeployRequest,
            document::DocumentKind::Spec => DocumentKind::Spec,
            document::DocumentKind::MooncakeBlock => DocumentKind::MooncakeBlock,
        }
    }
}

/// `validateDocument`'s answer: the document's kind (`null` for text that is
/// not JSON), every error and warning, and for a valid deploy request the
/// spec the deploy stores. A deploy request's diagnostics are
/// `POST /api/validate`'s, in its order.
#[derive(Serialize, Tsify)]
#[tsify(missing_as_null)]
pub struct DocumentResult {
    pub kind: Option<DocumentKind>,
    pub ok: bool,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "Record<string, unknown>")]
    pub spec: Option<json::Object>,
}

/// What a deploy assumes: the server's `GET /api/config`. Without
/// `deployedRegions` a request naming no target regions is not an error (as
/// in `gco-spec validate`); `defaultImage` is the image a mooncake deploy
/// without one gets (GCO's default when absent); `frameworks` are the ones
/// the team's GCO accepts (`["vllm", "sglang"]` when absent, GCO since its
/// SGLang release; `["vllm", "tgi"]` for an older GCO). `monitorSettings`
/// is what `GET /api/monitor-settings` answers: with it a deploy request is
/// also checked against each target region's monitor (a region that would
/// need the shared master and has no master image is warned about, as
/// `POST /api/validate` does); without it no monitor is assumed.
#[derive(Deserialize, Tsify, Default)]
#[serde(rename_all = "camelCase")]
pub struct DocumentOptions {
    #[serde(deserialize_with = "strings_option")]
    #[tsify(optional)]
    pub deployed_regions: Option<Vec<String>>,
    #[serde(deserialize_with = "string_option")]
    #[tsify(optional)]
    pub default_image: Option<String>,
    #[serde(deserialize_with = "strings_option")]
    #[tsify(optional, type = "(\"vllm\" | \"sglang\" | \"tgi\")[]")]
    pub frameworks: Option<Vec<String>>,
    /// Each table: `cluster_name`, `regional_bucket`, `metadata_server`,
    /// `master_address`, `master_image`, `project_name` (strings).
    #[tsify(
        optional,
        type = "{ default?: Record<string, string>; regions?: Record<string, Record<string, string>> }"
    )]
    pub monitor_settings: Option<Value>,
}

// Strings are read as the JSON values every other option is, then taken
// apart: serde's own readers would be generic code kept for them alone
// (2 KB before compression), and serde's wording of a wrong type prints
// floats with Rust's float formatting, which the package does without.

/// An option that is a string.
fn string_option<'de, D: Deserializer<'de>>(option: D) -> Result<Option<String>, D::Error> {
    let string = |value: Value| value.as_str().map(str::to_owned);
    Option::<Value>::deserialize(option)?
        .map(|value| string(value).ok_or_else(|| de::Error::custom("expected a string")))
        .transpose()
}

/// An option that is an array of strings.
fn strings_option<'de, D: Deserializer<'de>>(option: D) -> Result<Option<Vec<String>>, D::Error> {
    let strings = |value: Value| match value {
        Value::List(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    };
    Option::<Value>::deserialize(option)?
        .map(|value| {
            strings(value).ok_or_else(|| de::Error::custom("expected an array of strings"))
        })
        .transpose()
}

/// A value, or the reference's message saying why there is none.
#[derive(Serialize, Tsify)]
#[serde(untagged)]
pub enum Outcome {
    Value {
        #[tsify(type = "true")]
        ok: bool,
        value: String,
    },
    Error {
        #[tsify(type = "false")]
        ok: bool,
        error: String,
    },
}

impl<E: std::fmt::Display> From<Result<String, E>> for Outcome {
    fn from(result: Result<String, E>) -> Self {
        match result {
            Ok(value) => Outcome::Value { ok: true, value },
            Err(e) => Outcome::Error {
                ok: false,
                error: e.to_string(),
            },
        }
    }
}

/// `planDeploy`'s answer: what GCO's monitor creates, as `gco-spec plan`
/// prints it (one plan for the region asked about, else one per target
/// region); or why there is none.
#[derive(Serialize, Tsify)]
#[serde(untagged)]
pub enum PlanResult {
    Value {
        #[tsify(type = "true")]
        ok: bool,
        #[tsify(type = "Record<string, unknown> | Record<string, unknown>[]")]
        value: Value,
    },
    Error {
        #[tsify(type = "false")]
        ok: bool,
        errors: Vec<Diagnostic>,
    },
}

/// `deployCommands`' answer: the `gco inference` commands that make the same
/// endpoint, as `gco-spec cli` prints them, with a note for each field they
/// cannot express; or why there are none.
#[derive(Serialize, Tsify)]
#[serde(untagged)]
pub enum CommandsResult {
    Value {
        #[tsify(type = "true")]
        ok: bool,
        lines: Vec<String>,
        notes: Vec<Diagnostic>,
    },
    Error {
        #[tsify(type = "false")]
        ok: bool,
        errors: Vec<Diagnostic>,
    },
}

/// The Python exception class the reference raises.
#[derive(Serialize, Tsify)]
pub enum BuildErrorKind {
    ValueError,
    TypeError,
}

/// `buildMooncakeBlock`'s answer: the block, with `json` its text as
/// Python's `json.dumps` writes it (exact even for integers a JS number
/// cannot hold); or the reference's message, the path of the field at fault
/// and the exception class.
#[derive(Serialize, Tsify)]
#[serde(untagged)]
pub enum BuildResult {
    Value {
        #[tsify(type = "true")]
        ok: bool,
        #[tsify(type = "Record<string, unknown>")]
        value: Value,
        json: String,
    },
    Error {
        #[tsify(type = "false")]
        ok: bool,
        error: String,
        path: String,
        kind: BuildErrorKind,
    },
}

/// The arguments of the reference's `_build_mooncake_block`, in camelCase.
/// Only `mode` is required; an absent (or `undefined`) option takes the
/// reference's default (replicas 1, nothing else). `null` is passed on as
/// Python's `None`. Values of the wrong kind are reported, not thrown; an
/// option name not listed here throws.
#[derive(Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct BuildOptions {
    #[tsify(type = "\"both\" | \"disaggregated\" | \"store\" | (string & {}) | null")]
    mode: Value,
    #[tsify(optional, type = "number | bigint | null")]
    prefill_replicas: Option<Value>,
    #[tsify(optional, type = "number | bigint | null")]
    decode_replicas: Option<Value>,
    #[tsify(optional, type = "Record<string, unknown> | null")]
    store: Option<Value>,
    #[tsify(optional, type = "Record<string, unknown> | null")]
    transfer: Option<Value>,
    #[tsify(optional, type = "Record<string, unknown> | null")]
    proxy: Option<Value>,
    #[tsify(optional, type = "Record<string, unknown> | null")]
    autoscaling: Option<Value>,
    /// Split modes default `proxy.image` to this when it is truthy.
    #[tsify(optional, type = "string | null")]
    default_proxy_image: Option<Value>,
}

fn diagnostics(list: Vec<crate::diagnostics::Diagnostic>) -> Vec<Diagnostic> {
    list.into_iter()
        .map(|d| Diagnostic {
            path: d.path,
            message: d.message,
            range: None,
        })
        .collect()
}

/// Throws a `TypeError` saying how `function` was misused.
fn misuse(function: &str, what: &str) -> JsValue {
    js_sys::TypeError::new(&format!("{function}: {what}")).into()
}

/// Reads an argument with serde (`JsDeserializer`); what cannot be read
/// throws a `TypeError` naming the function.
fn read<T: DeserializeOwned>(function: &str, value: JsValue) -> Result<T, JsValue> {
    T::deserialize(JsDeserializer::new(value)).map_err(|Misuse(what)| misuse(function, &what))
}

/// A JS value as the core's JSON model (see `JsDeserializer`).
fn from_js(function: &str, value: JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Err(misuse(function, "expected a JSON value, got undefined"));
    }
    read(function, value)
}

fn string_arg(function: &str, value: JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .ok_or_else(|| misuse(function, "expected a string"))
}

/// A document's text. wasm-bindgen's own string argument copies ASCII one
/// UTF-16 unit at a time in JS: 1.1 µs of a 900-byte document's 8, against
/// about 0.2 µs through the engine's `TextEncoder.encodeInto`. That takes
/// three more crossings, which a short argument (a byte size) does not
/// repay, so those go through `string_arg`.
fn text_arg(function: &str, value: JsValue) -> Result<String, JsValue> {
    let text = value
        .dyn_into::<JsString>()
        .map_err(|_| misuse(function, "expected a string"))?;
    // The largest UTF-8 length: 3 bytes per UTF-16 unit.
    let mut bytes = vec![0; text.length() as usize * 3];
    let written = ENCODER.with(|encoder| encoder.encode_into(&text, &mut bytes).written());
    bytes.truncate(written as usize);
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|_| wasm_bindgen::throw_str("TextEncoder wrote bytes that are not UTF-8")))
}

#[wasm_bindgen]
extern "C" {
    /// The engine's UTF-8 encoder.
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    /// Writes `source` as UTF-8 into `dest` (straight into this module's
    /// memory), lone surrogates as U+FFFD.
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, source: &JsString, dest: &mut [u8]) -> EncodeIntoResult;
    type EncodeIntoResult;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> u32;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// Checks a `mooncake` block given as a JS value, as GCO's
/// `validate_mooncake_spec` does, and lists every error and warning.
///
/// JS numbers are read as JSON numbers are by JS: a safe integer is an int,
/// anything else (`2.5`, `2 ** 53`) a float, and `2.0` is the int 2; a
/// BigInt is an int. For Python's reading of text (`2.0` a float, integers
/// exact at any size) use `validateJson`. The argument is the block itself
/// (`{ mode: "both", ... }`), not a spec holding one. Throws a `TypeError`
/// for `undefined`, functions, symbols, `Map`s and other iterables that are
/// not arrays, BigInts beyond 64 bits, and values nested deeper than 1000
/// levels or cyclic.
#[wasm_bindgen(unchecked_return_type = "ValidationResult")]
pub fn validate(
    #[wasm_bindgen(unchecked_param_type = "unknown")] block: JsValue,
) -> Result<JsValue, JsValue> {
    let value = from_js("validate", block)?;
    Ok(to_js(&ValidationResult::from(check_mooncake(&value))))
}

/// Checks a `mooncake` block given as JSON text, read as Python's `json`
/// reads it: integers exact at any size, `2.0` a float (`1e400` is `inf`),
/// the last of duplicate keys wins. Text that is not JSON is an error at
/// path `""`, not an exception; throws a `TypeError` only when `text` is not
/// a string.
#[wasm_bindgen(js_name = validateJson, unchecked_return_type = "ValidationResult")]
pub fn validate_json(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsValue> {
    let text = text_arg("validateJson", text)?;
    // The reference's answer, without places: `validateDocument` reads a
    // bare block too, and places each diagnostic.
    let report = match json::parse(&text) {
        Ok(block) => check_mooncake(&block),
        Err(e) => Report {
            diagnostics: vec![document::invalid_json(&text, &text, e).diagnostic],
        },
    };
    Ok(to_js(&ValidationResult::from(report)))
}

/// Checks a document of any kind, as `gco-spec validate` does: an endpoint
/// record, a deploy request, a spec or a bare `mooncake` block, told apart
/// by their keys. A deploy request is checked as `POST /api/validate`
/// checks it (the same core function), in the surroundings `options` gives
/// (the server's `GET /api/config`); a valid one answers the spec the
/// deploy stores. Throws a `TypeError` when `text` is not a string or
/// `options` is given and is not a `DocumentOptions`.
#[wasm_bindgen(js_name = validateDocument, unchecked_return_type = "DocumentResult")]
pub fn validate_document(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "DocumentOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    const F: &str = "validateDocument";
    let text = text_arg(F, text)?;
    let options: DocumentOptions = if options.is_undefined() {
        DocumentOptions::default()
    } else {
        read(F, options)?
    };
    let frameworks = match &options.frameworks {
        None => Frameworks::CURRENT,
        // A short fixed message: the core's, naming the framework, costs the
        // package half a kilobyte gzipped.
        Some(names) => names
            .iter()
            .map(|name| Framework::parse(name))
            .collect::<Option<Vec<_>>>()
            .and_then(Frameworks::of)
            .ok_or_else(|| {
                misuse(
                    F,
                    "option \"frameworks\" must name one or more of \"vllm\", \"sglang\" and \"tgi\"",
                )
            })?,
    };
    let mut ctx = DeployContext {
        deployed_regions: options.deployed_regions.as_deref(),
        frameworks,
        ..DeployContext::default()
    };
    if let Some(image) = &options.default_image {
        ctx.default_image = image;
    }
    let monitors = match &options.monitor_settings {
        None => None,
        Some(settings) => Some(
            MonitorSettings::from_value(settings)
                .map_err(|d| misuse(F, &format!("option \"monitorSettings\": {}", d.message)))?,
        ),
    };
    let (kind, located, spec) = match document::read_text(&text) {
        Err(refusal) => (None, vec![refusal], None),
        Ok((text, document)) => {
            let kind = document::DocumentKind::of(&document);
            let (report, spec) = match kind {
                document::DocumentKind::DeployRequest => {
                    let check = match &monitors {
                        Some(monitors) => plan_deploy_with_monitors(document, &ctx, monitors),
                        None => plan_deploy_owned(document, &ctx),
                    };
                    (check.report, check.deployment.map(|d| d.spec))
                }
                _ => (check_document(&document, &frameworks), None),
            };
            (Some(kind), document::locate(text, report), spec)
        }
    };
    let ValidationResult {
        ok,
        errors,
        warnings,
    } = located.into();
    Ok(to_js(&DocumentResult {
        kind: kind.map(DocumentKind::from),
        ok,
        errors,
        warnings,
        spec,
    }))
}

/// The record a document stands for (a record, or the one a deploy request
/// would create in `regions`), as `gco-spec plan` and `cli` read files.
fn record_of_text(
    text: &str,
    regions: Option<&[String]>,
) -> Result<crate::record::Record, Vec<Diagnostic>> {
    let ctx = DeployContext {
        deployed_regions: regions,
        ..DeployContext::default()
    };
    // Plans and commands are not an editor's diagnostics: their errors
    // carry no range.
    let document = json::parse(text)
        .map_err(|e| diagnostics(vec![document::invalid_json(text, text, e).diagnostic]))?;
    record_of_document(&document, &ctx)
        .map_err(|report| diagnostics(report.errors().cloned().collect()))
}

/// What GCO's monitor creates for the endpoint (a deploy request or an
/// endpoint record, as JSON text) in `region`, or in each of its target
/// regions, as `gco-spec plan` prints it. Throws a `TypeError` when `text`
/// is not a string or `region` is neither a string nor absent.
#[wasm_bindgen(js_name = planDeploy, unchecked_return_type = "PlanResult")]
pub fn plan_deploy_js(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "string")] region: JsValue,
) -> Result<JsValue, JsValue> {
    const F: &str = "planDeploy";
    let text = text_arg(F, text)?;
    let region = if region.is_undefined() {
        None
    } else {
        Some(string_arg(F, region)?)
    };
    let regions = region.clone().map(|r| vec![r]);
    let answer = match record_of_text(&text, regions.as_deref()) {
        Err(errors) => PlanResult::Error { ok: false, errors },
        Ok(record) => {
            let plans = crate::plan::plans_value(&record, region.as_deref());
            match plans {
                Ok(value) => PlanResult::Value { ok: true, value },
                Err(e) => PlanResult::Error {
                    ok: false,
                    errors: vec![Diagnostic {
                        path: e.path,
                        message: e.message,
                        range: None,
                    }],
                },
            }
        }
    };
    Ok(to_js(&answer))
}

/// The `gco inference` commands that make the same endpoint (a deploy
/// request or an endpoint record, as JSON text), as `gco-spec cli` prints
/// them. Throws a `TypeError` when `text` is not a string.
#[wasm_bindgen(js_name = deployCommands, unchecked_return_type = "CommandsResult")]
pub fn deploy_commands_js(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsValue> {
    let text = text_arg("deployCommands", text)?;
    let answer = match record_of_text(&text, None) {
        Err(errors) => CommandsResult::Error { ok: false, errors },
        Ok(record) => {
            let commands = record_commands(&record);
            CommandsResult::Value {
                ok: true,
                lines: commands.lines,
                notes: diagnostics(commands.notes),
            }
        }
    };
    Ok(to_js(&answer))
}

/// The reference's `author_byte_size`: the canonical decimal string of a
/// byte size given as an integer or a digit string. Any other value is
/// answered with the reference's message (`ok: false`); JS numbers are read
/// as in `validate` (use a BigInt or a digit string beyond 2^53).
#[wasm_bindgen(js_name = authorByteSize, unchecked_return_type = "Outcome")]
pub fn author_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "number | bigint | string")] value: JsValue,
) -> Result<JsValue, JsValue> {
    let value = from_js("authorByteSize", value)?;
    Ok(to_js(&Outcome::from(author_byte_size(ByteSizeArg::from(
        &value,
    )))))
}

/// Reads a human byte size (`4 GiB`, `1.5 GB`, `4294967296`) as the
/// canonical decimal string. Decimal units are powers of 1000, binary ones
/// (`KiB` ...) of 1024.
#[wasm_bindgen(js_name = parseByteSize, unchecked_return_type = "Outcome")]
pub fn parse_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "string")] input: JsValue,
) -> Result<JsValue, JsValue> {
    let input = string_arg("parseByteSize", input)?;
    Ok(to_js(&Outcome::from(crate::parse_byte_size(&input))))
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
    let options: BuildOptions = read("buildMooncakeBlock", options)?;
    let mut args = BuildArgs::new(options.mode);
    if let Some(n) = options.prefill_replicas {
        args.prefill_replicas = n;
    }
    if let Some(n) = options.decode_replicas {
        args.decode_replicas = n;
    }
    args.store = options.store;
    args.transfer = options.transfer;
    args.proxy = options.proxy;
    args.autoscaling = options.autoscaling;
    args.default_proxy_image = options.default_proxy_image;
    let answer = match build_mooncake_block(&args) {
        Ok(block) => BuildResult::Value {
            ok: true,
            json: block.to_json(),
            value: block,
        },
        Err(e) => BuildResult::Error {
            ok: false,
            error: e.message,
            path: e.path,
            kind: match e.kind {
                crate::mooncake::ErrorKind::ValueError => BuildErrorKind::ValueError,
                crate::mooncake::ErrorKind::TypeError => BuildErrorKind::TypeError,
            },
        },
    };
    Ok(to_js(&answer))
}
