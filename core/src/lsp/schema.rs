//! What the language server knows of each member: the committed JSON
//! Schemas (`core/schema/`), so hover and completion say what an editor
//! with only the schema would, from the same doc strings.

use serde_json::Value;

use super::cursor::Step;
use crate::document::DocumentKind;

/// The schemas as committed (`core/tests/schema.rs` keeps them current).
const DEPLOY_REQUEST: &str = include_str!("../../schema/deploy-request.schema.json");
const ENDPOINT_RECORD: &str = include_str!("../../schema/endpoint-record.schema.json");
const ENDPOINT_SPEC: &str = include_str!("../../schema/endpoint-spec.schema.json");

pub struct Schemas {
    request: Value,
    record: Value,
    spec: Value,
}

/// A member's schema: where it is described, and what it resolves to.
pub struct Member<'s> {
    /// The property's own schema (its description, default).
    pub declared: &'s Value,
    /// Through `$ref`s and optional `anyOf`s: the type, enum, members.
    pub resolved: Vec<&'s Value>,
}

impl Schemas {
    /// The schemas, read once.
    pub fn get() -> &'static Schemas {
        static SCHEMAS: std::sync::OnceLock<Schemas> = std::sync::OnceLock::new();
        SCHEMAS.get_or_init(|| {
            let parse = |text: &str| serde_json::from_str(text).expect("a committed schema parses");
            Schemas {
                request: parse(DEPLOY_REQUEST),
                record: parse(ENDPOINT_RECORD),
                spec: parse(ENDPOINT_SPEC),
            }
        })
    }

    /// The schema of a document of `kind` at `path` (`None`: the schema
    /// says nothing of it).
    pub fn at(&self, kind: DocumentKind, path: &[Step]) -> Option<Member<'_>> {
        let (root, prefix) = match kind {
            DocumentKind::DeployRequest => (&self.request, None),
            DocumentKind::Record => (&self.record, None),
            DocumentKind::Spec => (&self.spec, None),
            // A bare block is the spec's `mooncake`.
            DocumentKind::MooncakeBlock => (&self.spec, Some(Step::Key("mooncake".into()))),
        };
        let mut member = Member {
            declared: root,
            resolved: resolve(root, root),
        };
        for step in prefix.iter().chain(path) {
            let declared = member.resolved.iter().find_map(|node| match step {
                Step::Key(key) => node["properties"]
                    .get(key)
                    .or_else(|| node.get("additionalProperties").filter(|a| a.is_object())),
                Step::Index(_) => node.get("items"),
            })?;
            member = Member {
                declared,
                resolved: resolve(root, declared),
            };
        }
        Some(member)
    }
}

/// A schema and what it stands for: the target of a `$ref`, each branch of
/// an `anyOf` but `null`.
fn resolve<'s>(root: &'s Value, node: &'s Value) -> Vec<&'s Value> {
    let mut out = Vec::new();
    let mut todo = vec![node];
    // A bound: the committed schemas are shallow, and no input reaches here.
    while let Some(node) = todo.pop().filter(|_| out.len() < 32) {
        if let Some(name) = node["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            todo.push(&root["$defs"][name]);
        } else if let Some(branches) = node["anyOf"].as_array() {
            todo.extend(branches.iter().rev());
        } else if node["type"] != "null" {
            out.push(node);
        }
    }
    out
}

impl Member<'_> {
    /// What the member is for.
    pub fn description(&self) -> Option<&str> {
        self.declared["description"]
            .as_str()
            .or_else(|| self.resolved.iter().find_map(|n| n["description"].as_str()))
    }

    /// The values it takes, when they are a closed list.
    pub fn choices(&self) -> Vec<&Value> {
        self.resolved
            .iter()
            .filter_map(|n| n["enum"].as_array())
            .flatten()
            .collect()
    }

    /// The JSON types it takes (`null` left out).
    pub fn types(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for node in &self.resolved {
            let named = match &node["type"] {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for t in named {
                if t != "null" && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// Its members, when it is an object, in the schema's order.
    pub fn members(&self) -> Vec<(&str, &Value)> {
        self.resolved
            .iter()
            .filter_map(|n| n["properties"].as_object())
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
            .collect()
    }

    /// The hover's Markdown: what the member is, its type, its values,
    /// bounds and default.
    pub fn markdown(&self, name: &str) -> String {
        let mut out = format!("**`{name}`**");
        let types = self.types();
        if !types.is_empty() {
            out.push_str(&format!(" · {}", types.join(" or ")));
        }
        if let Some(description) = self.description() {
            out.push_str("\n\n");
            out.push_str(description);
        }
        let choices = self.choices();
        if !choices.is_empty() {
            let listed: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
            out.push_str(&format!("\n\nOne of {}.", listed.join(", ")));
        }
        let bound = |key: &str| self.resolved.iter().find_map(|n| n.get(key).cloned());
        match (bound("minimum"), bound("maximum")) {
            (Some(low), Some(high)) => out.push_str(&format!("\n\nFrom {low} to {high}.")),
            (Some(low), None) => out.push_str(&format!("\n\nAt least {low}.")),
            (None, Some(high)) => out.push_str(&format!("\n\nAt most {high}.")),
            (None, None) => {}
        }
        if let Some(default) = self.declared.get("default") {
            out.push_str(&format!("\n\nDefault: `{default}`."));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn finds_members_through_refs_and_optional_branches() {
        let schemas = Schemas::get();
        let master = schemas
            .at(
                DocumentKind::DeployRequest,
                &[key("mooncake"), key("store"), key("master_image")],
            )
            .unwrap();
        assert!(
            master
                .description()
                .unwrap()
                .contains("MOONCAKE_MASTER_IMAGE")
        );
        assert_eq!(master.types(), ["string"]);
        let mode = schemas
            .at(DocumentKind::DeployRequest, &[key("mooncake_mode")])
            .unwrap();
        assert_eq!(mode.choices(), ["both", "disaggregated", "store"]);
        let region = schemas
            .at(
                DocumentKind::Record,
                &[key("target_regions"), Step::Index(3)],
            )
            .unwrap();
        assert_eq!(region.types(), ["string"]);
        let env = schemas
            .at(DocumentKind::Spec, &[key("env"), key("ANY_NAME")])
            .unwrap();
        assert_eq!(env.types(), ["string"]);
        let block = schemas.at(DocumentKind::MooncakeBlock, &[]).unwrap();
        assert!(block.members().iter().any(|(k, _)| *k == "transfer"));
        assert!(schemas.at(DocumentKind::Spec, &[key("nope")]).is_none());
    }

    #[test]
    fn the_hover_says_type_values_bounds_and_default() {
        let schemas = Schemas::get();
        let port = schemas
            .at(DocumentKind::DeployRequest, &[key("port")])
            .unwrap();
        let text = port.markdown("port");
        assert!(text.starts_with("**`port`** · integer\n\nThe model server's port"));
        assert!(text.contains("From 1 to 65535.") && text.contains("Default: `8000`."));
    }
}
