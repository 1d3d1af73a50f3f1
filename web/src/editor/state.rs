//! The editor's one state (a deploy request as JSON), its history, and the
//! verdicts on it: the core's, and the server's on a deploy of it.

use gco_spec::json::{Object, Value};
use gco_spec::{DeployCheck, DeployContext, Diagnostic, Report, plan_deploy};
use leptos::prelude::*;

use super::undo::History;
use crate::paths;
use crate::settings::Settings;

/// Text in the JSON view that does not parse: while it is there, the state
/// (the last request that parsed) is not what the user sees, so nothing may
/// deploy or link it.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonDraft {
    pub text: String,
    pub error: String,
}

#[derive(Clone, Copy)]
pub struct Editor {
    pub state: RwSignal<Value>,
    history: StoredValue<History>,
    /// The core's check of the state and the deployment it gives: runs on
    /// every change, no network.
    pub check: Memo<DeployCheck>,
    pub report: Memo<Report>,
    /// The frameworks the server accepts (GCO's current ones until known).
    pub frameworks: Memo<gco_spec::Frameworks>,
    /// The server's diagnostics of the state (its answer to a deploy of
    /// exactly this request).
    server: Memo<Vec<Diagnostic>>,
    /// The JSON view's text when it does not parse.
    pub json_draft: RwSignal<Option<JsonDraft>>,
    /// A name an endpoint already has, as the server said while it was
    /// typed (`name_check.rs`).
    pub taken: RwSignal<Option<String>>,
    version: RwSignal<u32>,
}

impl Editor {
    /// An editor on `initial`, checked against the server's settings:
    /// until they arrive (or without a usable answer) as a file check is,
    /// with no regions assumed. `server` gives the server's diagnostics of
    /// a request.
    pub fn new(
        initial: Value,
        settings: Settings,
        server: impl Fn(&Value) -> Vec<Diagnostic> + Send + Sync + 'static,
    ) -> Editor {
        let state = RwSignal::new(initial);
        let frameworks = settings.frameworks;
        let check = Memo::new(move |_| {
            settings.with_defaults(|d| {
                let ctx = DeployContext {
                    deployed_regions: d.map(|d| d.regions.as_slice()),
                    default_image: Settings::default_image(d),
                    frameworks: frameworks.get(),
                };
                match d.and_then(|d| d.monitors.as_ref()) {
                    Some(m) => {
                        state.with(|s| gco_spec::plan_deploy_with_monitors(s.clone(), &ctx, m))
                    }
                    None => state.with(|s| plan_deploy(s, &ctx)),
                }
            })
        });
        let report = Memo::new(move |_| check.with(|c| c.report.clone()));
        Editor {
            state,
            history: StoredValue::new(History::default()),
            check,
            report,
            frameworks,
            server: Memo::new(move |_| state.with(&server)),
            json_draft: RwSignal::new(None),
            taken: RwSignal::new(None),
            version: RwSignal::new(0),
        }
    }

    fn record(&self, field: Option<&str>) {
        let now = js_sys::Date::now();
        self.state
            .with_untracked(|before| self.history.update_value(|h| h.record(before, field, now)));
        self.version.update(|v| *v += 1);
    }

    /// Sets one field (`None` removes it).
    pub fn set_field(&self, path: &[&str], value: Option<Value>) {
        self.record(Some(&path.join(".")));
        self.state.update(|s| paths::set(s, path, value));
    }

    /// Replaces the whole state (JSON view, a link).
    pub fn replace(&self, value: Value) {
        self.record(None);
        self.state.set(value);
    }

    fn step(&self, back: bool) {
        let current = self.state.get_untracked();
        let target = self
            .history
            .try_update_value(|h| {
                if back {
                    h.undo(current)
                } else {
                    h.redo(current)
                }
            })
            .flatten();
        if let Some(t) = target {
            self.state.set(t);
            self.version.update(|v| *v += 1);
        }
    }

    pub fn undo(&self) {
        self.step(true);
    }

    pub fn redo(&self) {
        self.step(false);
    }

    pub fn can_undo(&self) -> bool {
        self.version.get();
        self.history.with_value(History::can_undo)
    }

    pub fn can_redo(&self) -> bool {
        self.version.get();
        self.history.with_value(History::can_redo)
    }

    /// Local and server diagnostics at `path` or below it.
    pub fn messages(&self, path: &str) -> Vec<Diagnostic> {
        let under = |d: &&Diagnostic| is_under(&d.path, path);
        let mut out: Vec<Diagnostic> = self
            .report
            .with(|r| r.diagnostics.iter().filter(under).cloned().collect());
        out.extend(
            self.server
                .with(|s| s.iter().filter(under).cloned().collect::<Vec<_>>()),
        );
        out.extend(self.name_taken().into_iter().filter(|d| under(&d)));
        out
    }

    /// The name typed is an endpoint's already: the words a deploy of it
    /// gets (the server's 409), said while it is typed, until the server
    /// answers a deploy of this request (its 409 then says them, once).
    fn name_taken(&self) -> Option<Diagnostic> {
        if !self.server.with(Vec::is_empty) {
            return None;
        }
        let name = self.state.with(|s| {
            paths::get(s, &["endpoint_name"])
                .and_then(Value::as_str)
                .map(str::to_owned)
        })?;
        self.taken
            .with(|t| t.as_deref() == Some(name.as_str()))
            .then(|| {
                Diagnostic::error("endpoint_name", gco_spec::deploy::name_taken_message(&name))
            })
    }

    /// Every diagnostic, local then server, errors first; text in the JSON
    /// view that does not parse comes before all of them.
    pub fn all(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self.json_draft.with(|d| {
            d.iter()
                .map(|d| Diagnostic::error("", d.error.clone()))
                .collect()
        });
        out.extend(self.report.with(|r| r.diagnostics.clone()));
        out.extend(self.server.with(|s| s.clone()));
        out.extend(self.name_taken());
        let mut all = Report { diagnostics: out };
        all.sort();
        all.diagnostics
    }

    /// Whether the request must not be deployed or linked: an error, or
    /// JSON text that does not parse (the state is then an older request).
    pub fn has_errors(&self) -> bool {
        self.json_draft.with(Option::is_some) || !self.report.with(Report::is_ok)
    }
}

/// Whether diagnostic path `path` is `field` or inside it.
pub fn is_under(path: &str, field: &str) -> bool {
    path == field
        || path
            .strip_prefix(field)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

pub fn empty_request() -> Value {
    Value::Object(Object::new())
}
