//! The kinds of message the checks give, as linters name their rules: a
//! code, a name, what it means and the GCO source that states the rule.
//! CI formats (SARIF's rules, GitLab's `check_name`, GitHub's titles) and
//! editors read them; no check does. A message's kind is told from its
//! words, which are GCO's own, so it is named here once rather than at each
//! of the checks' many call sites.

use crate::diagnostics::Diagnostic;

/// One kind of message.
#[derive(Debug, PartialEq, Eq)]
pub struct MessageKind {
    /// Stable, as Ruff's codes: `GCO108`.
    pub code: &'static str,
    /// Kebab-case, as Ruff's rule names: `out-of-range`.
    pub name: &'static str,
    pub summary: &'static str,
    /// Where GCO states the rule (file and function), or whose rule it is.
    pub source: &'static str,
    pub source_url: &'static str,
    /// Whether the message is about a member's key (an editor marks the
    /// key), not its value.
    pub at_key: bool,
    /// Words that tell the kind: any of them in the message.
    words: &'static [&'static str],
}

/// GCO's sources, at the newest commit whose text could be read in full.
const INF: &str = "https://github.com/aws-solutions-library-samples/global-capacity-orchestrator-on-aws/blob/7a0b3c6fd401b7524cd0fe722ab2ce2629ae79ab/cli/inference.py";
const MON: &str = "https://github.com/aws-solutions-library-samples/global-capacity-orchestrator-on-aws/blob/7a0b3c6fd401b7524cd0fe722ab2ce2629ae79ab/gco/services/inference_monitor.py";
const MODELS: &str = "https://github.com/aws-solutions-library-samples/global-capacity-orchestrator-on-aws/blob/7a0b3c6fd401b7524cd0fe722ab2ce2629ae79ab/gco/models/inference_models.py";
const CONSOLE: &str =
    "https://github.com/aws-solutions-library-samples/global-capacity-orchestrator-on-aws";

const fn kind(
    code: &'static str,
    name: &'static str,
    summary: &'static str,
    source: &'static str,
    source_url: &'static str,
    words: &'static [&'static str],
) -> MessageKind {
    MessageKind {
        code,
        name,
        summary,
        source,
        source_url,
        at_key: false,
        words,
    }
}

/// Every kind, in the order a message is matched against them (the more
/// particular first); the last matches any message.
pub const KINDS: [MessageKind; 15] = [
    kind(
        "GCO001",
        "invalid-json",
        "The text is not a JSON document: not UTF-8, empty, malformed or nested too deep.",
        "Python's json.loads, which GCO reads documents with (its messages); the UTF-8 and empty-document messages are the console's own",
        "https://docs.python.org/3/library/json.html#json.loads",
        &["invalid JSON:", "not UTF-8 text:"],
    ),
    kind(
        "GCO002",
        "unreadable-file",
        "The file could not be read.",
        "the console's own (gco-spec validate)",
        CONSOLE,
        &[],
    ),
    MessageKind {
        at_key: true,
        ..kind(
            "GCO101",
            "unknown-member",
            "A member GCO does not read: it is ignored, often a misspelt name.",
            "the console's own warning: GCO's monitor (gco/services/inference_monitor.py) and deploy() read only the members they know",
            MON,
            &["unknown key ", "unknown spec key ", "unknown deploy field "],
        )
    },
    kind(
        "GCO102",
        "cross-region-scope",
        "A mooncake address that resolves to another region than the one its monitor runs in.",
        "gco/services/inference_monitor.py (regional scope check; tests/test_mooncake_regional_scope.py)",
        MON,
        &["cross-region boundary violation"],
    ),
    kind(
        "GCO103",
        "unstorable-value",
        "A value GCO's DynamoDB table cannot hold (a number of more than 38 digits, a lone surrogate).",
        "gco/services/inference_store.py (the record is a DynamoDB item)",
        CONSOLE,
        &["DynamoDB", "which cannot be stored"],
    ),
    kind(
        "GCO104",
        "monitor-setting",
        "What a region's monitor needs or ignores (the shared master's image, fields it no longer reads).",
        "gco/services/inference_monitor.py (the mooncake master and mooncake.json)",
        MON,
        &["has no master image", "is not read by GCO's newest monitor"],
    ),
    kind(
        "GCO110",
        "missing-member",
        "A member the document needs is missing.",
        "cli/inference.py (validate_mooncake_spec, deploy)",
        INF,
        &[
            "is required",
            "requires mooncake.",
            "requires a 'disaggregated'",
        ],
    ),
    kind(
        "GCO105",
        "framework",
        "A framework the team's GCO does not serve, or a setting it needs (SGLang's model, an Ampere or newer GPU).",
        "cli/inference.py (deploy) and gco/models/inference_models.py (SGLANG_SUPPORTED_GPU_EXAMPLES)",
        MODELS,
        &["framework"],
    ),
    kind(
        "GCO106",
        "invalid-name",
        "A name GCO, Kubernetes or AWS cannot use (endpoint, region, environment variable, label).",
        "cli/inference.py (deploy) and the Kubernetes names the monitor derives",
        INF,
        &[
            "endpoint_name",
            "env key ",
            "labels key ",
            "must be an AWS region",
            "target_regions",
            "namespace must be",
        ],
    ),
    kind(
        "GCO107",
        "invalid-image",
        "An image reference the monitor could not pull.",
        "cli/inference.py (deploy's image) and cli/images.py",
        INF,
        &["image"],
    ),
    kind(
        "GCO108",
        "out-of-range",
        "A number outside its bounds.",
        "cli/inference.py (validate_mooncake_spec, _validate_role_autoscaling_bounds, author_byte_size)",
        INF,
        &[
            "out of range",
            "must be >=",
            "must be an integer in [",
            "must be an integer >=",
            "between",
        ],
    ),
    kind(
        "GCO109",
        "not-one-of",
        "A value outside its vocabulary (modes, protocols, capacity types).",
        "cli/inference.py (validate_mooncake_spec: MOONCAKE_MODES, MOONCAKE_TRANSFER_PROTOCOLS)",
        INF,
        &["must be one of"],
    ),
    kind(
        "GCO111",
        "wrong-type",
        "A value of the wrong JSON type.",
        "cli/inference.py (validate_mooncake_spec, author_byte_size, _build_mooncake_block)",
        INF,
        &[
            "must be a mapping",
            "must be a string",
            "must be a non-empty string",
            "must be an integer",
            "must be a list",
            "must be a boolean",
            "must be an int",
            "object is not iterable",
            "byte-size value",
            "dictionary update sequence",
        ],
    ),
    kind(
        "GCO112",
        "mooncake-block",
        "Any other rule of the mooncake block.",
        "cli/inference.py (validate_mooncake_spec)",
        INF,
        &["mooncake"],
    ),
    kind(
        "GCO199",
        "spec-check",
        "Any other check of a spec, deploy request or record.",
        "cli/inference.py (deploy) and gco/services/inference_monitor.py",
        INF,
        &[""],
    ),
];

/// The kind of a file that could not be read.
pub const UNREADABLE_FILE: &MessageKind = &KINDS[1];

/// The kind whose messages are about a key.
pub const UNKNOWN_MEMBER: &MessageKind = &KINDS[2];

impl MessageKind {
    /// The kind of a diagnostic's message.
    pub fn of(d: &Diagnostic) -> &'static MessageKind {
        KINDS
            .iter()
            .find(|k| k.matches(d))
            .unwrap_or(&KINDS[KINDS.len() - 1])
    }

    /// Whether a message is of this kind (the fallback's is any).
    pub fn matches(&self, d: &Diagnostic) -> bool {
        self.words.iter().any(|w| d.message.contains(w))
    }

    /// Its place in [`KINDS`] (SARIF's `ruleIndex`).
    pub fn index(&self) -> usize {
        KINDS
            .iter()
            .position(|k| k.code == self.code)
            .unwrap_or(KINDS.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(message: &str) -> &'static str {
        MessageKind::of(&Diagnostic::error("x", message)).name
    }

    #[test]
    fn messages_get_their_kind() {
        assert_eq!(
            name("mooncake.topology.prefill out of range [1, 1000]: 0"),
            "out-of-range"
        );
        assert_eq!(
            name("mooncake.mode must be one of {both, disaggregated, store}, got 'x'"),
            "not-one-of"
        );
        assert_eq!(name("mooncake.store must be a mapping"), "wrong-type");
        assert_eq!(
            name("unknown key 'colour' in mooncake, which GCO ignores"),
            "unknown-member"
        );
        assert_eq!(
            name("invalid JSON: Expecting value: line 1 column 1 (char 0)"),
            "invalid-json"
        );
        assert_eq!(name("endpoint_name is required"), "missing-member");
        assert_eq!(
            name("endpoint_name must be a non-empty string"),
            "invalid-name"
        );
        assert!(UNKNOWN_MEMBER.at_key && UNREADABLE_FILE.words.is_empty());
        assert_eq!(
            name("mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true"),
            "missing-member"
        );
        assert_eq!(name("something else"), "spec-check");
    }

    #[test]
    fn codes_and_names_are_unique() {
        for (i, a) in KINDS.iter().enumerate() {
            assert_eq!(a.index(), i);
            for b in &KINDS[i + 1..] {
                assert!(a.code != b.code && a.name != b.name, "{}", a.code);
            }
        }
    }
}
