//! Who is signed in (`GET /api/me`) and what their roles let them do. One
//! rule decides whether an action is open to the user ([`refusal`]) and one
//! component closes the actions it is not ([`Guard`]), with the reason on
//! hover and for screen readers. The server decides in the end: a 403
//! names the role the action needs, and the console asks who it is again.

use gco_api::{AuthMode, Me, Role, SessionEnd};
use gco_spec::json::Value;
use leptos::prelude::*;

use crate::auth::Auth;
use crate::paths;
use crate::settings::Settings;

/// What the console knows of the user.
#[derive(Clone, Debug, PartialEq)]
pub enum Who {
    /// Not yet asked, or a server without `/api/me` (an older one): every
    /// action stays open, and the server decides.
    Unknown,
    /// The server wants an identity (401).
    SignedOut,
    Known(Me),
}

/// The role an identity is named by: the greatest it holds.
pub fn highest(roles: &[Role]) -> Option<Role> {
    roles.iter().copied().max()
}

fn with_article(role: Role) -> String {
    match role {
        Role::Operator | Role::Admin => format!("an {role}"),
        Role::Viewer => format!("a {role}"),
    }
}

/// Why an identity holding `roles` may not do `doing` (a gerund: "Deleting
/// this endpoint"), which needs `needed`; `None` when it may.
pub fn refusal(doing: &str, needed: Role, roles: &[Role]) -> Option<String> {
    if needed.granted_by(roles) {
        return None;
    }
    let you = highest(roles).map_or_else(
        || "you have no role".to_owned(),
        |r| format!("you are {}", with_article(r)),
    );
    Some(format!("{doing} needs the {needed} role; {you}."))
}

/// The signed-in user, asked for at the root and again on each sign-in
/// and after a 403. (A signal filled by a task rather than a resource: the
/// same answer for 3 KB less wasm.)
#[derive(Clone, Copy)]
pub struct Session {
    who: RwSignal<Who>,
    /// When the console's own sign-in session ends (ms since the epoch, by
    /// this browser's clock), and its whole length in seconds.
    ends: RwSignal<Option<(f64, u64)>>,
}

impl Session {
    pub fn load() -> Session {
        let session = Session {
            who: RwSignal::new(Who::Unknown),
            ends: RwSignal::new(None),
        };
        Effect::new(move |_| {
            crate::auth::epoch();
            session.ask_again();
        });
        session
    }

    pub fn get() -> Session {
        expect_context::<Session>()
    }

    /// The signed-in user's name, when known (not reactive).
    pub fn name(&self) -> Option<String> {
        self.who.with_untracked(|w| match w {
            Who::Known(me) => Some(me.name.clone()),
            _ => None,
        })
    }

    /// Why the user may not do `doing`, which needs `needed` (reactive).
    pub fn refusal(&self, doing: &str, needed: Role) -> Option<String> {
        self.who.with(|w| match w {
            Who::Known(me) => refusal(doing, needed, &me.roles),
            _ => None,
        })
    }

    /// Whether the user may do what needs `needed` (reactive; yes while
    /// unknown: the server decides).
    pub fn may(&self, needed: Role) -> bool {
        self.who.with(|w| match w {
            Who::Known(me) => me.may(needed),
            _ => true,
        })
    }

    /// Asks the server who the user is (again: roles may have changed
    /// since, and a 403 says so).
    pub fn ask_again(self) {
        let (who, ends) = (self.who, self.ends);
        leptos::task::spawn_local(async move {
            let answer = me().await;
            // The session's end, from the seconds left when the server
            // answered: this browser's clock need not agree with it.
            let end = match &answer {
                Who::Known(Me {
                    session: Some(s), ..
                }) => Some((
                    js_sys::Date::now() + s.expires_in as f64 * 1000.0,
                    s.lifetime,
                )),
                _ => None,
            };
            let _ = ends.try_set(end);
            let _ = who.try_set(answer);
        });
    }

    /// "Forget token": the tab holds none from now on.
    fn forget_token(self, auth: Auth) {
        auth.forget_token();
        self.who.set(Who::SignedOut);
    }
}

async fn me() -> Who {
    match crate::api::get(gco_api::route::ME).await {
        Ok(r) if r.ok() => match me_of(&r.body) {
            Some(me) => {
                crate::auth::signed_in();
                Who::Known(me)
            }
            None => Who::Unknown,
        },
        Ok(r) if r.status == 401 => Who::SignedOut,
        _ => Who::Unknown,
    }
}

/// `{"name": ..., "roles": [...], "session": {...}}` (roles this console
/// does not know are left out; no session but the console's own sign-in).
pub fn me_of(body: &Value) -> Option<Me> {
    let name = paths::get(body, &["name"])?.as_str()?.to_owned();
    let Some(Value::List(roles)) = paths::get(body, &["roles"]) else {
        return None;
    };
    let roles = roles
        .iter()
        .filter_map(|r| Role::parse(r.as_str()?))
        .collect();
    let seconds = |key| {
        paths::get(body, &["session", key])
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .and_then(|n| u64::try_from(n).ok())
    };
    let session = seconds("expires_in")
        .zip(seconds("lifetime"))
        .map(|(expires_in, lifetime)| SessionEnd {
            expires_in,
            lifetime,
        });
    Some(Me {
        name,
        roles,
        session,
    })
}

/// A session is warned about this long before it ends: five minutes, or
/// half of a shorter session.
pub fn warn_before_seconds(lifetime: u64) -> u64 {
    (lifetime / 2).min(300)
}

/// "4 min 05 s", "42 s".
fn remaining(seconds: u64) -> String {
    if seconds >= 60 {
        format!("{} min {:02} s", seconds / 60, seconds % 60)
    } else {
        format!("{seconds} s")
    }
}

/// Shown from a few minutes before the console's own sign-in session ends
/// ([`warn_before_seconds`]): when, and "Sign in again now", which renews
/// it through the provider (which asks nothing while its own session
/// lasts) and comes back to this page with what was open. A session that
/// ends under the page signs in the same way on the next request.
#[component]
pub fn SessionEnding() -> impl IntoView {
    let ends = Session::get().ends;
    let auth = Auth::get();
    let left = move || {
        let (at, lifetime) = ends.get()?;
        let seconds = ((at - crate::time::now()) / 1000.0).max(0.0) as u64;
        (seconds <= warn_before_seconds(lifetime)).then_some((seconds, at))
    };
    move || {
        left().map(|(seconds, at)| {
            let clock = crate::time::local_millis(at);
            let text = if seconds == 0 {
                "Your session has ended: the console signs you in again, keeping what you have open.".to_owned()
            } else {
                format!(
                    "Your session ends in {} (at {clock}). Sign in again now to renew it: what you have open is kept.",
                    remaining(seconds)
                )
            };
            view! {
                <p class="banner warning-banner session-ending" role="status">{text}" "
                    <button type="button" on:click=move |_| auth.renew()>"Sign in again now"</button>
                </p>
            }
        })
    }
}

/// Controls that need `needed` to do `doing`: open to a user who holds it,
/// else disabled as a group (a disabled fieldset), the reason on hover
/// (`title`, which the controls inside inherit) and tied to the group for
/// screen readers (`aria-describedby`), shown beside them unless `quiet`
/// (then read by screen readers only: a list of many such groups says it
/// once, above them).
#[component]
pub fn Guard(
    needed: Role,
    doing: &'static str,
    /// The id of the reason's text (unique on the page).
    id: String,
    #[prop(optional)] quiet: bool,
    children: Children,
) -> impl IntoView {
    let session = Session::get();
    let reason = Memo::new(move |_| session.refusal(doing, needed));
    let described = id.clone();
    view! {
        <fieldset class="guard" disabled=move || reason.with(Option::is_some)
            title=move || reason.get()
            aria-describedby=move || reason.with(Option::is_some).then(|| described.clone())>
            {move || reason.get().map(|r| view! {
                <p id=id.clone() class=if quiet { "guard-reason sr-only" } else { "guard-reason" }>{r}</p>
            })}
            {children()}
        </fieldset>
    }
}

/// The header's part: who is signed in and as what, and the way to sign
/// in or out as the server's mode has it. (One static tree whose parts
/// show and hide: smaller wasm than a tree per state.)
#[component]
pub fn WhoAmI() -> impl IntoView {
    let who = Session::get().who;
    let mode = Settings::get().auth;
    let known = move || who.with(|w| matches!(w, Who::Known(_)));
    let out = move || who.with(|w| *w == Who::SignedOut);
    // Signing out is the console's (oidc) or the load balancer's (alb).
    let signs_out = move || matches!(mode.get(), Some(AuthMode::Oidc | AuthMode::Alb));
    let oidc = move || mode.get() == Some(AuthMode::Oidc);
    let token = move || mode.get() == Some(AuthMode::Token);
    let session = Session::get();
    let auth = Auth::get();
    let field = move |f: fn(&Me) -> String| {
        move || {
            who.with(|w| match w {
                Who::Known(me) => f(me),
                _ => String::new(),
            })
        }
    };
    view! {
        <span class="who" hidden=move || !known()>
            "Signed in as "<strong class="who-name">{field(|me| me.name.clone())}</strong>" "
            <span class="badge role" title=field(|me| format!("Roles: {}", me.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")))>
                {field(|me| highest(&me.roles).map_or("no role", Role::as_str).to_owned())}
            </span>
        </span>
        <span class="who" hidden=move || !out()>"Not signed in"</span>
        <form class="sign-out" method="post" action=gco_api::route::SIGN_OUT hidden=move || !(signs_out() && known())
            on:submit=move |_| auth.signing_out()>
            <button type="submit">"Sign out"</button>
        </form>
        <a class="button" href=crate::auth::sign_in_href("/") hidden=move || !(oidc() && out())>"Sign in"</a>
        <button type="button" on:click=move |_| auth.ask_for_token()
            hidden=move || !token() || !(known() || out())>
            {move || if known() { "Change token" } else { "Enter token" }}
        </button>
        <button type="button" on:click=move |_| session.forget_token(auth)
            title="Remove the token from this tab" hidden=move || !(token() && known())>"Forget token"</button>
    }
}

/// On every page while the server keeps no history.
#[component]
pub fn Unrecorded() -> impl IntoView {
    let unrecorded = Settings::get().unrecorded;
    view! {
        <Show when=move || unrecorded.get()>
            <p class="unrecorded" role="note">
                "Changes are not recorded: this console runs without its history (--history-table off), so who changed what is not kept."
            </p>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_role_needed_and_the_one_held() {
        assert_eq!(
            refusal(
                "Deleting this endpoint",
                Role::Admin,
                &[Role::Viewer, Role::Operator]
            ),
            Some("Deleting this endpoint needs the admin role; you are an operator.".into())
        );
        assert_eq!(
            refusal("Deploying", Role::Operator, &[Role::Viewer]),
            Some("Deploying needs the operator role; you are a viewer.".into())
        );
        assert_eq!(
            refusal("Deploying", Role::Operator, &[]),
            Some("Deploying needs the operator role; you have no role.".into())
        );
    }

    #[test]
    fn me_reads_the_name_and_the_known_roles() {
        let body = gco_spec::json::parse(
            r#"{"name": "ada@example.com", "roles": ["viewer", "operator", "owner"]}"#,
        )
        .unwrap();
        assert_eq!(
            me_of(&body),
            Some(Me {
                name: "ada@example.com".into(),
                roles: vec![Role::Viewer, Role::Operator],
                session: None,
            })
        );
        assert_eq!(
            me_of(&gco_spec::json::parse(r#"{"name": "x"}"#).unwrap()),
            None
        );
    }

    #[test]
    fn me_reads_the_session_and_no_roles() {
        let body = gco_spec::json::parse(
            r#"{"name": "nobody@example.com", "roles": [], "session": {"expires_in": 95, "lifetime": 28800}}"#,
        )
        .unwrap();
        let me = me_of(&body).unwrap();
        assert!(me.roles.is_empty());
        assert_eq!(
            me.session,
            Some(SessionEnd {
                expires_in: 95,
                lifetime: 28800
            })
        );
        assert_eq!(warn_before_seconds(28800), 300);
        assert_eq!(warn_before_seconds(20), 10);
        assert_eq!(remaining(305), "5 min 05 s");
        assert_eq!(remaining(42), "42 s");
    }

    #[test]
    fn a_greater_role_includes_the_ones_before() {
        assert_eq!(refusal("Scaling", Role::Operator, &[Role::Admin]), None);
        assert_eq!(refusal("Reading", Role::Viewer, &[Role::Operator]), None);
        assert_eq!(
            highest(&[Role::Viewer, Role::Admin, Role::Operator]),
            Some(Role::Admin)
        );
        assert_eq!(highest(&[]), None);
    }
}
