//! "Try it": the `gco inference` commands that ask a deployed endpoint for
//! its models and send it a first request, per target region (GCO's CLI
//! since its SGLang release, GCO_FACTS_NEWEST section 3.2).

use super::{Commands, Line};
use crate::framework::{Framework, Frameworks};
use crate::record::Record;

/// A first request per framework: the path `invoke` posts to and its body.
/// SGLang's native `/generate` takes `text` and `sampling_params` (section
/// 3.3); vLLM and other OpenAI-compatible servers take a completion. The
/// paths and prompts are inferred (as read).
fn first_request(framework: Option<Framework>) -> (&'static str, &'static str) {
    match framework {
        Some(Framework::Sglang) => (
            "/generate",
            r#"{"text": "Hello, my name is", "sampling_params": {"max_new_tokens": 32}}"#,
        ),
        _ => (
            "/v1/completions",
            r#"{"prompt": "Hello, my name is", "max_tokens": 32}"#,
        ),
    }
}

/// The commands that try `record` in each of its target regions: `models`
/// and `invoke`. None, with a note, for a framework the team's GCO does not
/// serve (its `models` and `invoke` no longer recognise `tgi`).
pub fn try_it_commands(record: &Record, frameworks: &Frameworks) -> Commands {
    let mut out = Commands::default();
    let name = &record.endpoint_name;
    let framework = Framework::of_spec(&record.spec);
    if let Some(given) = frameworks.unserved(&record.spec) {
        out.note(
            "spec.framework",
            format!(
                "spec.framework {} is not served by this GCO ({}): deploy the endpoint again with one of those to try it",
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
    let (path, data) = first_request(framework);
    for region in &record.target_regions {
        let mut models = Line::new("models", name);
        if let Some(framework) = framework {
            models.flag("--framework", framework.as_str());
        }
        models.flag("--region", region.as_str());
        out.push(models);
        let mut invoke = Line::new("invoke", name);
        invoke.flag("--data", data);
        invoke.flag("--path", path);
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
                r#"gco inference invoke chat --data '{"text": "Hello, my name is", "sampling_params": {"max_new_tokens": 32}}' --path /generate --region us-east-1"#,
            ]
        );
        assert!(c.notes.is_empty());
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
    fn a_framework_gco_no_longer_serves_is_not_tried() {
        let r = record(
            r#"{"image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#,
            r#"["us-east-1"]"#,
        );
        let c = try_it_commands(&r, &Frameworks::CURRENT);
        assert!(c.lines.is_empty());
        assert_eq!(
            c.notes[0].message,
            "spec.framework 'tgi' is not served by this GCO (vllm, sglang): deploy the endpoint again with one of those to try it"
        );
        let older = Frameworks::parse_list("vllm,tgi").unwrap();
        assert_eq!(try_it_commands(&r, &older).lines.len(), 2);
    }
}
