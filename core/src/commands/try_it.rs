//! "Try it": the `gco inference` commands that ask a deployed endpoint for
//! its models and send it a first request, per target region, as GCO's
//! newest CLI takes them (`cli/commands/inference_cmd.py@f6629b2046`).

use super::{Commands, Line};
use crate::framework::Frameworks;
use crate::json::Value;
use crate::pyrepr::py_lower;
use crate::record::Record;

/// The serving contract GCO's `invoke` and `models` speak to an endpoint
/// (`_resolve_invoke_framework`): the stored `framework` when it is `vllm`
/// or `sglang`, else what the image's name (lower-cased) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contract {
    Vllm,
    Sglang,
    Triton,
    /// Any other OpenAI-compatible server.
    Openai,
}

impl Contract {
    fn of(record: &Record) -> Contract {
        match record.spec.get("framework").and_then(Value::as_str) {
            Some("vllm") => return Contract::Vllm,
            Some("sglang") => return Contract::Sglang,
            _ => {}
        }
        let image = py_lower(
            record
                .spec
                .get("image")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        if image.contains("vllm") {
            Contract::Vllm
        } else if image.contains("sglang") {
            Contract::Sglang
        } else if image.contains("triton") {
            Contract::Triton
        } else {
            Contract::Openai
        }
    }

    /// What `models --framework` reads: SGLang's `/server_info`, else the
    /// OpenAI inventory (`v1/models`, GCO's choice for Triton too).
    fn models_framework(self) -> &'static str {
        match self {
            Contract::Sglang => "sglang",
            _ => "vllm",
        }
    }

    /// Where `invoke` posts by default.
    fn invoke_path(self) -> &'static str {
        match self {
            Contract::Sglang => "/generate",
            Contract::Triton => "/v2/models",
            Contract::Vllm | Contract::Openai => "/v1/completions",
        }
    }
}

/// The prompt of the first request; GCO's `invoke` builds the body for
/// the path (SGLang: `text` and `sampling_params`).
const PROMPT: &str = "Hello, my name is";

/// The commands that try `record` in each of its target regions: `models`
/// and `invoke`. None, with a note, for a framework the team's GCO does not
/// serve.
pub fn try_it_commands(record: &Record, frameworks: &Frameworks) -> Commands {
    let mut out = Commands::default();
    let name = &record.endpoint_name;
    if let Some(given) = frameworks.unserved(&record.spec) {
        out.note(
            "spec.framework",
            format!(
                "spec.framework {} is not served by this GCO ({}): its models answers 'endpoint has an unsupported persisted inference framework'; deploy the endpoint again with one of those to try it",
                given.repr(),
                frameworks.names().join(", ")
            ),
        );
        return out;
    }
    if record.target_regions.is_empty() {
        out.note(
            "target_regions",
            "the endpoint has no target region to try it in",
        );
        return out;
    }
    // A stored framework GCO's newest CLI does not know (an older GCO's
    // tgi): its own CLI chooses.
    let stored = record.spec.get("framework").filter(|f| !f.is_null());
    let newest = stored.is_none_or(|f| matches!(f.as_str(), Some("vllm" | "sglang")));
    let contract = Contract::of(record);
    if contract == Contract::Sglang && newest {
        out.note(
            "spec.framework",
            format!(
                "sglang: models reads /inference/{name}/server_info and prints its model_path, served_model_name, revision, tokenizer_path and version; invoke posts the prompt to /generate as text with sampling_params and prints the reply's text"
            ),
        );
    }
    for region in &record.target_regions {
        let mut models = Line::new("models", name);
        if newest {
            models.flag("--framework", contract.models_framework());
        }
        models.flag("--region", region.as_str());
        out.push(models);
        let mut invoke = Line::new("invoke", name);
        invoke.flag("-p", PROMPT);
        if newest {
            invoke.flag("--path", contract.invoke_path());
        }
        invoke.flag("--region", region.as_str());
        out.push(invoke);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn record(spec: &str, regions: &str) -> Record {
        let text = format!(
            r#"{{"endpoint_name": "chat", "desired_state": "running", "target_regions": {regions}, "namespace": "gco-inference", "spec": {spec}, "ingress_path": "/inference/chat", "created_at": "2026-12-06T00:00:00", "updated_at": "2026-12-06T00:00:00", "region_status": {{}}}}"#
        );
        Record::from_value(&parse(&text).unwrap()).unwrap()
    }

    #[test]
    fn sglang_is_tried_through_generate() {
        let r = record(
            r#"{"image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#,
            r#"["us-east-1"]"#,
        );
        let c = try_it_commands(&r, &Frameworks::CURRENT);
        assert_eq!(
            c.lines,
            [
                "gco inference models chat --framework sglang --region us-east-1",
                "gco inference invoke chat -p 'Hello, my name is' --path /generate --region us-east-1",
            ]
        );
        assert!(c.notes[0].message.contains("/inference/chat/server_info"));
    }

    #[test]
    fn each_target_region_is_tried() {
        let r = record(
            r#"{"image": "vllm/vllm-openai:v0.27.1", "framework": "vllm"}"#,
            r#"["us-east-1", "eu-west-1"]"#,
        );
        let lines = try_it_commands(&r, &Frameworks::CURRENT).lines;
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[2],
            "gco inference models chat --framework vllm --region eu-west-1"
        );
        assert!(lines[3].contains("--path /v1/completions --region eu-west-1"));
    }

    #[test]
    fn without_a_stored_framework_the_image_decides_as_gcos_cli_does() {
        let lines = |image: &str| {
            try_it_commands(
                &record(&format!(r#"{{"image": "{image}"}}"#), r#"["us-east-1"]"#),
                &Frameworks::CURRENT,
            )
            .lines
        };
        assert_eq!(
            lines("docker.io/LMSysOrg/SGLang:v0.5.21"),
            [
                "gco inference models chat --framework sglang --region us-east-1",
                "gco inference invoke chat -p 'Hello, my name is' --path /generate --region us-east-1",
            ]
        );
        // Triton: the OpenAI inventory for models, /v2/models for invoke.
        let triton = lines("nvcr.io/nvidia/tritonserver:25.01");
        assert!(triton[0].contains("--framework vllm"));
        assert!(triton[1].contains("--path /v2/models"));
        assert!(lines("ghcr.io/acme/llm:1")[1].contains("--path /v1/completions"));
    }

    #[test]
    fn a_framework_gco_no_longer_serves_is_not_tried() {
        let r = record(
            r#"{"image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#,
            r#"["us-east-1"]"#,
        );
        let c = try_it_commands(&r, &Frameworks::CURRENT);
        assert!(c.lines.is_empty());
        assert_eq!(
            c.notes[0].message,
            "spec.framework 'tgi' is not served by this GCO (vllm, sglang): its models answers 'endpoint has an unsupported persisted inference framework'; deploy the endpoint again with one of those to try it"
        );
        let older = Frameworks::parse_list("vllm,tgi").unwrap();
        assert_eq!(
            try_it_commands(&r, &older).lines,
            [
                "gco inference models chat --region us-east-1",
                "gco inference invoke chat -p 'Hello, my name is' --region us-east-1",
            ]
        );
    }
}
