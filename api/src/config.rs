//! `GET /api/config`: what a deploy assumes on this service.

use gco_spec::Frameworks;
use gco_spec::json::Value;
use serde::{Deserialize, Serialize};

/// The deploy defaults of a service: the regions a deploy without target
/// regions uses, the image a mooncake deploy without one gets, and the
/// frameworks the team's GCO accepts (its `--frameworks`), so the console's
/// editor checks as the server does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Config {
    pub deployed_regions: Vec<String>,
    pub default_image: String,
    #[cfg_attr(feature = "openapi", schema(example = json!(["vllm", "sglang"])))]
    pub frameworks: Vec<String>,
    /// How users are known (`--auth`); the console signs in by it.
    #[serde(default)]
    pub auth: crate::AuthMode,
    /// Whether every change is recorded in the history (false only with
    /// `--history-table off`).
    #[serde(default)]
    pub history: bool,
}

/// An answer that is no [`Config`]: what serde found wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the deploy defaults are not valid: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// The answer's JSON (the core's, as every answer of the API).
    pub fn to_value(&self) -> Value {
        gco_spec::json::to_value(self).expect("a config is JSON")
    }

    /// The frameworks as the core checks them; an answer naming none, or
    /// one the core does not know, is refused by name.
    pub fn frameworks(&self) -> Result<Frameworks, ConfigError> {
        Frameworks::new(&mut self.frameworks.iter().map(String::as_str))
            .map_err(|e| ConfigError(format!("frameworks: {e}")))
    }

    /// Reads an answer (unknown fields are ignored, so a newer server's
    /// answer still reads).
    pub fn from_value(value: &Value) -> Result<Config, ConfigError> {
        Config::deserialize(value).map_err(|e| ConfigError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn the_answer_reads_back() {
        let config = Config {
            deployed_regions: vec!["us-east-1".into(), "eu-west-1".into()],
            default_image: "vllm/vllm-openai:v0.27.1".into(),
            frameworks: vec!["vllm".into(), "tgi".into()],
            auth: crate::AuthMode::Oidc,
            history: true,
        };
        let text = config.to_value().to_json();
        assert_eq!(
            text,
            r#"{"deployed_regions": ["us-east-1", "eu-west-1"], "default_image": "vllm/vllm-openai:v0.27.1", "frameworks": ["vllm", "tgi"], "auth": "oidc", "history": true}"#
        );
        assert_eq!(
            Config::from_value(&parse(&text).unwrap()),
            Ok(config.clone())
        );
        assert_eq!(config.frameworks().unwrap().to_string(), "vllm,tgi");
        let unknown = Config {
            frameworks: vec!["triton".into()],
            ..config
        };
        assert_eq!(
            unknown.frameworks().unwrap_err().to_string(),
            "the deploy defaults are not valid: frameworks: unknown framework 'triton'; GCO knows vllm, sglang, tgi"
        );
    }

    #[test]
    fn an_answer_without_a_field_is_refused_by_name() {
        let refused = Config::from_value(
            &parse(r#"{"deployed_regions": [], "frameworks": ["vllm"]}"#).unwrap(),
        );
        assert_eq!(
            refused.map_err(|e| e.to_string()),
            Err("the deploy defaults are not valid: missing field `default_image`".into())
        );
        let wrong = Config::from_value(
            &parse(r#"{"deployed_regions": "us-east-1", "default_image": "x", "frameworks": []}"#)
                .unwrap(),
        );
        assert!(wrong.is_err());
    }
}
