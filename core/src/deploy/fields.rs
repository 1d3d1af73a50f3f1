//! A deploy request's fields that stand alone: each read with its default,
//! or refused at its name with GCO's words.

use super::DeployRequest;
use crate::diagnostics::{Diagnostic, Report};
use crate::framework::FrameworkFields;
use crate::json::Value;
use crate::limits::DEFAULT_NAMESPACE;
use crate::mooncake::Mode;
use crate::names::{NameIssue, endpoint_name_issues, is_dns_label};

/// What the framework check reads of the request (GCO's deploy checks the
/// framework first, before it builds the block); a null counts as absent.
pub(super) fn framework_fields(req: &DeployRequest) -> FrameworkFields<'_> {
    fn given(v: &Option<Value>) -> Option<&Value> {
        v.as_ref().filter(|v| !v.is_null())
    }
    FrameworkFields {
        framework: given(&req.framework),
        mooncake: given(&req.mooncake_mode).is_some() || given(&req.mooncake).is_some(),
        env: given(&req.env),
        args: given(&req.extra_args),
        node_selector: given(&req.node_selector),
    }
}

/// `endpoint_name`, with each issue of it (an error or a warning); empty
/// when it is missing or no string.
pub(super) fn endpoint_name(
    given: Option<Value>,
    mode: Option<Mode>,
    report: &mut Report,
) -> String {
    match given {
        Some(Value::Str(s)) => {
            let name = s.to_string_lossy();
            // Text the table cannot hold (a lone surrogate) is refused as
            // such; its lossy form would only misname the Service.
            let storable = s.as_str().is_some();
            for issue in endpoint_name_issues(&name, mode)
                .into_iter()
                .filter(|i| storable || !matches!(i, NameIssue::NotServiceName(_)))
            {
                let d = if issue.is_error() {
                    Diagnostic::error
                } else {
                    Diagnostic::warning
                };
                report.push(d("endpoint_name", issue.message(&name)));
            }
            name
        }
        Some(other) => {
            report.push(Diagnostic::error(
                "endpoint_name",
                format!("endpoint_name must be a string, got {}", other.repr()),
            ));
            String::new()
        }
        None => {
            report.push(Diagnostic::error(
                "endpoint_name",
                "endpoint_name is required",
            ));
            String::new()
        }
    }
}

/// `namespace`, GCO's default when absent.
pub(super) fn namespace(given: Option<Value>, report: &mut Report) -> String {
    match given {
        None => DEFAULT_NAMESPACE.to_owned(),
        Some(Value::Str(s)) if is_dns_label(&s.to_string_lossy()) => s.to_string_lossy(),
        Some(other) => {
            report.push(Diagnostic::error(
                "namespace",
                format!("namespace must be a DNS label, got {}", other.repr()),
            ));
            String::new()
        }
    }
}

/// `rewrite_image`, true when absent (or refused).
pub(super) fn rewrite_image(given: Option<Value>, report: &mut Report) -> bool {
    match given {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            report.push(Diagnostic::error(
                "rewrite_image",
                format!("rewrite_image must be a boolean, got {}", other.repr()),
            ));
            true
        }
    }
}
