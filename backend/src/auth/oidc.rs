//! `--auth oidc`: the console signs users in itself, with the authorization
//! code flow and PKCE at an OpenID provider found by discovery
//! (`openidconnect` checks the ID token's signature, issuer, audience,
//! expiry and nonce), and keeps who they are in a session cookie.
//!
//! Both cookies are encrypted and authenticated (axum-extra's
//! `PrivateCookieJar`: AES-256-GCM, the cookie's name bound in), so a browser can
//! neither read nor forge them, and one console's cookie is noise to a
//! console with another key. The sign-in cookie carries the flow's state,
//! nonce and PKCE verifier for ten minutes; the callback consumes it, and a
//! state seen once is refused again. The session cookie is made new at
//! every sign-in and names its own expiry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, Key, PrivateCookieJar};
use gco_api::route;
use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreErrorResponseType, CoreGenderClaim, CoreIdToken,
    CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm, CoreResponseType,
    CoreRevocableToken, CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::url::Url;
use openidconnect::{
    AdditionalClaims, AuthenticationFlow, AuthorizationCode, Client, ClientId, ClientSecret,
    CsrfToken, EmptyExtraTokenFields, EndSessionUrl, EndpointMaybeSet, EndpointNotSet, EndpointSet,
    IdTokenFields, IssuerUrl, LogoutRequest, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    PostLogoutRedirectUrl, ProviderMetadataWithLogout, RedirectUrl, Scope, StandardErrorResponse,
    StandardTokenResponse, TokenResponse,
};
use serde::{Deserialize, Serialize};

use super::roles::groups_of;
pub use super::session::{NoSession, Session};
use super::session::{SESSION_COOKIE, SessionCookies};
use super::sign_outs::SignOutList;
use crate::clock::unix_seconds;
use crate::store::SignOuts;

const SIGN_IN_COOKIE: &str = "gco_sign_in";
/// How long a sign-in may take at the provider.
const SIGN_IN_SECONDS: u64 = 600;
/// The session's ID token, the `id_token_hint` of a sign-out at the
/// provider: encrypted as the session is, and sent only to `/auth`.
const ID_TOKEN_COOKIE: &str = "gco_id_token";
/// This browser signed out: its next sign-in asks the provider to prompt
/// for credentials (`prompt=login`), so a provider session still open there
/// does not sign the same user in again unasked. Holds nothing secret.
const SIGNED_OUT_COOKIE: &str = "gco_signed_out";
/// How long a sign-out is remembered for the next sign-in.
const SIGNED_OUT_SECONDS: i64 = 30 * 24 * 3600;
/// Browsers keep cookies up to 4,096 bytes; a larger ID token is left out
/// and the sign-out names the client instead (`client_id`).
const MAX_COOKIE_BYTES: usize = 4_000;

/// The ID token's claims beyond the standard ones, such as the team's
/// groups claim (`--oidc-groups-claim`): openidconnect decodes them with the
/// rest, once the signature is checked.
#[derive(Debug, Default, Deserialize, Serialize)]
struct ExtraClaims(serde_json::Map<String, serde_json::Value>);

impl AdditionalClaims for ExtraClaims {}

/// The token answer, its ID token carrying [`ExtraClaims`].
type Tokens = StandardTokenResponse<
    IdTokenFields<
        ExtraClaims,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

/// `CoreClient`, with [`ExtraClaims`] in its ID tokens.
type DiscoveredClient = Client<
    ExtraClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    Tokens,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// What `--auth oidc` is configured with.
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// The address users reach the console at (`--public-url`): the
    /// redirect URL and the origin changes must come from.
    pub public_url: String,
    pub scopes: Vec<String>,
    pub groups_claim: String,
    pub session_lifetime: Duration,
    /// The cookies' key; consoles that share one accept each other's
    /// sessions.
    pub key: Key,
}

/// A sign-in in progress: what the callback must find.
#[derive(Serialize, Deserialize)]
struct Pending {
    state: String,
    nonce: String,
    verifier: String,
    next: String,
    expires: u64,
}

pub struct Oidc {
    client: DiscoveredClient,
    http: openidconnect::reqwest::Client,
    settings: OidcSettings,
    /// `--public-url`, parsed.
    public: Url,
    origin: String,
    cookies: SessionCookies,
    /// States of sign-ins completed, until their cookie would have expired.
    used_states: Mutex<HashMap<String, u64>>,
    /// Sessions signed out, until they would have expired.
    sign_outs: SignOutList,
    /// The provider's `end_session_endpoint` (RP-initiated logout), when
    /// its discovery document names one.
    end_session: Option<EndSessionUrl>,
    /// `<public-url>/auth/signed-out`, where the provider sends users back
    /// after its sign-out (register it as a post-logout redirect URI).
    signed_out_url: Url,
}

/// Drops what has expired, so neither set grows without bound.
fn remember(set: &Mutex<HashMap<String, u64>>, key: String, until: u64) {
    let mut set = set.lock().unwrap_or_else(|e| e.into_inner());
    let now = unix_seconds();
    set.retain(|_, until| *until > now);
    set.insert(key, until);
}

fn seen(set: &Mutex<HashMap<String, u64>>, key: &str) -> bool {
    set.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .is_some_and(|until| *until > unix_seconds())
}

/// `scheme://host[:port]` of a URL.
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

impl Oidc {
    /// Finds the provider (its discovery document and keys).
    pub async fn discover(settings: OidcSettings) -> Result<Oidc, String> {
        let public = Url::parse(&settings.public_url).map_err(|e| {
            format!(
                "--public-url {:?}: {e} (the console's address, such as https://console.example.com)",
                settings.public_url
            )
        })?;
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .map_err(|e| format!("--oidc-issuer {:?}: {e}", settings.issuer))?;
        let redirect = public
            .join(route::SIGN_IN_CALLBACK)
            .map_err(|e| format!("--public-url: {e}"))?;
        // No redirects: discovery and the token call go where configured.
        let http = openidconnect::reqwest::ClientBuilder::new()
            .redirect(openidconnect::reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| e.to_string())?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &http)
            .await
            .map_err(|e| {
                format!(
                    "--oidc-issuer {}: discovery failed: {}",
                    settings.issuer,
                    error_chain(&e)
                )
            })?;
        let end_session = metadata.additional_metadata().end_session_endpoint.clone();
        let signed_out_url = public
            .join(SIGNED_OUT)
            .map_err(|e| format!("--public-url: {e}"))?;
        let client = DiscoveredClient::from_provider_metadata(
            metadata,
            ClientId::new(settings.client_id.clone()),
            settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(RedirectUrl::from_url(redirect));
        Ok(Oidc {
            client,
            http,
            origin: origin_of(&public),
            cookies: SessionCookies::new(settings.key.clone(), public.scheme() == "https"),
            public,
            settings,
            used_states: Mutex::default(),
            sign_outs: SignOutList::default(),
            end_session,
            signed_out_url,
        })
    }

    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// The provider's sign-out endpoint, if it has one.
    pub fn end_session(&self) -> Option<&str> {
        self.end_session.as_ref().map(|u| u.url().as_str())
    }

    /// `--session-lifetime`, in seconds.
    pub fn session_lifetime(&self) -> u64 {
        self.settings.session_lifetime.as_secs().max(1)
    }

    /// The origin state-changing requests with a session must come from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Keeps sign-outs in `store` (the console's store), so they hold at
    /// every console sharing it and the session key, and across restarts.
    /// Until called, they are kept in this process's memory.
    pub fn keep_sign_outs_in(&self, store: Arc<dyn SignOuts>) {
        if !self.sign_outs.keep_in(store) {
            tracing::warn!("sign-outs are kept in a store already");
        }
    }

    /// The session a request's cookie holds.
    pub async fn session(&self, headers: &HeaderMap) -> Result<Session, NoSession> {
        let now = unix_seconds();
        let session = self.cookies.read(headers, now)?;
        match self.sign_outs.has_signed_out(&session.id, now).await {
            Ok(false) => Ok(session),
            Ok(true) => Err(NoSession::SignedOut),
            Err(e) => {
                tracing::error!(error = %e, "the list of sign-outs cannot be read");
                Err(NoSession::Unchecked)
            }
        }
    }

    /// `/auth/sign-in`, `/auth/callback`, `/auth/sign-out` and
    /// `/auth/signed-out`.
    pub fn router<S>(self: Arc<Self>) -> Router<S> {
        Router::new()
            .route(route::SIGN_IN, axum::routing::get(sign_in))
            .route(route::SIGN_IN_CALLBACK, axum::routing::get(callback))
            .route(route::SIGN_OUT, axum::routing::post(sign_out))
            .route(SIGNED_OUT, axum::routing::get(signed_out))
            .with_state(self)
    }
}

/// Where a sign-out lands.
const SIGNED_OUT: &str = "/auth/signed-out";

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A console page to return to after signing in: a page of this console
/// (`public`), else `/`. It is read as a browser reads a `Location`, by
/// the WHATWG URL rules (which drop tabs and newlines, take `\` for `/`,
/// and read `//name` as another host), and kept only when it names the
/// console's own origin; what is sent back is the path the parser made of
/// it, so the browser reads what was checked. Control characters and
/// whitespace have no place in a console address, and refuse it whole.
fn safe_next(next: Option<&str>, public: &Url) -> String {
    let home = || "/".to_owned();
    let Some(next) = next else {
        return home();
    };
    if !next.starts_with('/') || next.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return home();
    }
    match public.join(next) {
        Ok(url) if url.origin() == public.origin() => {
            url[openidconnect::url::Position::BeforePath..].to_owned()
        }
        _ => home(),
    }
}

/// A small page saying what happened, with a way on.
pub(super) fn page(status: StatusCode, title: &str, text: &str, link: (&str, &str)) -> Response {
    page_with(status, title, text, link, "")
}

/// A page that goes on to `location` at once (a refresh), saying so with a
/// link: how a sign-out leaves for another origin (its cookies go with it,
/// as a cookie jar before it in the answer). A redirect would not do: the console's page posts the sign-out
/// form, and its Content-Security-Policy (`form-action 'self'`) stops a
/// form's redirect to another origin.
pub(super) fn go_on(location: &str, text: &str) -> Response {
    let refresh = format!(
        "<meta http-equiv=\"refresh\" content=\"0; url={}\">",
        html_escape::encode_double_quoted_attribute(location)
    );
    page_with(
        StatusCode::OK,
        "Signing out",
        text,
        (location, "Continue"),
        &refresh,
    )
}

fn page_with(
    status: StatusCode,
    title: &str,
    text: &str,
    link: (&str, &str),
    head: &str,
) -> Response {
    // The icon is inline: a request for /favicon.ico from a signed-out
    // page would, behind an ALB, sign the user in again at once.
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · GCO console</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><link rel=\"icon\" href=\"data:,\">{head}</head>\
         <body style=\"font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem\">\
         <h1>{title}</h1><p>{text}</p><p><a href=\"{href}\">{label}</a></p></body></html>",
        title = html_escape::encode_text(title),
        text = html_escape::encode_text(text),
        href = html_escape::encode_double_quoted_attribute(link.0),
        label = html_escape::encode_text(link.1),
    );
    let mut response = (status, Html(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(super) fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[derive(Deserialize)]
struct SignInQuery {
    next: Option<String>,
}

async fn sign_in(
    State(oidc): State<Arc<Oidc>>,
    headers: HeaderMap,
    Query(query): Query<SignInQuery>,
) -> Response {
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = oidc
        .client
        .authorize_url(
            AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .set_pkce_challenge(challenge);
    for scope in &oidc.settings.scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    // After a sign-out here, the provider must ask who is signing in: its
    // own session may still be open (a provider without a sign-out
    // endpoint, or one the user left), and the next person at this browser
    // must not carry on as the last.
    if CookieJar::from_headers(&headers)
        .get(SIGNED_OUT_COOKIE)
        .is_some()
    {
        request = request.add_prompt(CoreAuthPrompt::Login);
    }
    let (url, state, nonce) = request.url();
    let pending = Pending {
        state: state.secret().clone(),
        nonce: nonce.secret().clone(),
        verifier: verifier.secret().clone(),
        next: safe_next(query.next.as_deref(), &oidc.public),
        expires: unix_seconds() + SIGN_IN_SECONDS,
    };
    let value = serde_json::to_string(&pending).expect("a sign-in serializes");
    let mut cookie = oidc.cookies.cookie(SIGN_IN_COOKIE, value, "/auth");
    cookie.set_max_age(cookie::time::Duration::seconds(SIGN_IN_SECONDS as i64));
    let jar = oidc.cookies.private_jar().add(cookie);
    (jar, see_other(url.as_str())).into_response()
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

fn sign_in_failed(reason: &str, logged: &str) -> Response {
    tracing::warn!(reason = %logged, "sign-in refused");
    page(
        StatusCode::UNAUTHORIZED,
        "Sign-in failed",
        reason,
        (route::SIGN_IN, "Sign in again"),
    )
}

async fn callback(
    State(oidc): State<Arc<Oidc>>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    if let Some(error) = &query.error {
        let text = query.error_description.as_deref().unwrap_or(error);
        return sign_in_failed(
            &format!("The identity provider refused the sign-in: {text}"),
            error,
        );
    }
    let pending: Option<Pending> =
        PrivateCookieJar::from_headers(&headers, oidc.cookies.key().clone())
            .get(SIGN_IN_COOKIE)
            .and_then(|c| serde_json::from_str(c.value()).ok());
    let Some(pending) = pending.filter(|p| p.expires > unix_seconds()) else {
        return sign_in_failed(
            "This sign-in is unknown, expired or was already used.",
            "no sign-in cookie",
        );
    };
    let (Some(code), Some(state)) = (query.code, query.state) else {
        return sign_in_failed("The provider sent no code.", "no code or state");
    };
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        state.as_bytes(),
        pending.state.as_bytes(),
    )) {
        return sign_in_failed(
            "This sign-in does not match the one this browser started.",
            "state mismatch",
        );
    }
    if seen(&oidc.used_states, &pending.state) {
        return sign_in_failed(
            "This sign-in is unknown, expired or was already used.",
            "replayed state",
        );
    }
    remember(&oidc.used_states, pending.state.clone(), pending.expires);
    let exchange = match oidc.client.exchange_code(AuthorizationCode::new(code)) {
        Ok(exchange) => exchange,
        Err(e) => return sign_in_failed("The provider has no token endpoint.", &e.to_string()),
    };
    let tokens = match exchange
        .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier))
        .request_async(&oidc.http)
        .await
    {
        Ok(tokens) => tokens,
        Err(e) => {
            return sign_in_failed(
                "The provider did not accept the sign-in code.",
                &error_chain(&e),
            );
        }
    };
    let Some(id_token) = tokens.id_token() else {
        return sign_in_failed("The provider sent no ID token.", "no id_token");
    };
    let verifier = oidc.client.id_token_verifier();
    let claims = match id_token.claims(&verifier, &Nonce::new(pending.nonce)) {
        Ok(claims) => claims,
        Err(e) => {
            return sign_in_failed(
                "The provider's ID token is not valid for this console.",
                &e.to_string(),
            );
        }
    };
    let email = claims
        .email_verified()
        .unwrap_or(false)
        .then(|| claims.email())
        .flatten();
    let Some(name) = crate::auth::identity::name_of(
        email.map(|e| e.as_str()),
        claims.issuer().as_str(),
        claims.subject().as_str(),
    ) else {
        return sign_in_failed(
            "The provider's ID token names no subject.",
            "no sub or iss claim",
        );
    };
    let lifetime = oidc.settings.session_lifetime.as_secs().max(1);
    // The groups claim is the team's choice, so it is among the extra claims.
    let groups = groups_of(
        claims
            .additional_claims()
            .0
            .get(&oidc.settings.groups_claim),
    );
    let session = Session::new(name, groups, unix_seconds() + lifetime);
    tracing::info!(who = %session.name, groups = ?session.groups, "signed in");
    let mut sealed = oidc
        .cookies
        .put(oidc.cookies.private_jar(), &session, lifetime);
    let mut out = CookieJar::new()
        .add(removal(SIGN_IN_COOKIE, "/auth"))
        .add(removal(SIGNED_OUT_COOKIE, "/auth"));
    // Kept for the sign-out's `id_token_hint`, only where the provider has
    // a sign-out endpoint and the cookie fits.
    if oidc.end_session.is_some() {
        let mut cookie = oidc
            .cookies
            .cookie(ID_TOKEN_COOKIE, id_token.to_string(), "/auth");
        cookie.set_max_age(cookie::time::Duration::seconds(lifetime as i64));
        // Its size as sent: the `Set-Cookie` its jar writes.
        let sized = oidc
            .cookies
            .private_jar()
            .add(cookie.clone())
            .into_response();
        let fits = sized
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .all(|line| line.len() <= MAX_COOKIE_BYTES);
        if fits {
            sealed = sealed.add(cookie);
        } else {
            out = out.add(removal(ID_TOKEN_COOKIE, "/auth"));
        }
    }
    (out, sealed, see_other(&pending.next)).into_response()
}

/// A cookie that deletes `name`.
pub(super) fn removal(
    name: impl Into<std::borrow::Cow<'static, str>>,
    path: &'static str,
) -> Cookie<'static> {
    let mut cookie = Cookie::build((name, "")).path(path).build();
    cookie.make_removal();
    cookie
}

async fn sign_out(State(oidc): State<Arc<Oidc>>, headers: HeaderMap) -> Response {
    // A cross-site page cannot sign users out either.
    if !super::from_page_of(&headers, oidc.origin()) {
        return page(
            StatusCode::FORBIDDEN,
            "Not signed out",
            "Sign out from the console's own page.",
            ("/", "Back to the console"),
        );
    }
    // The cookie's session, whether or not the list of sign-outs can be
    // read now: signing out again does no harm.
    if let Ok(session) = oidc.cookies.read(&headers, unix_seconds()) {
        if let Err(e) = oidc.sign_outs.sign_out(&session.id, session.expires).await {
            // The session stays valid, and the cookie with it: saying it
            // ended would be untrue at the other consoles.
            tracing::error!(who = %session.name, error = %e, "sign-out not recorded");
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Not signed out",
                "The console could not record the sign-out; try again in a moment.",
                ("/", "Back to the console"),
            );
        }
        tracing::info!(who = %session.name, "signed out");
    }
    let id_token: Option<CoreIdToken> =
        PrivateCookieJar::from_headers(&headers, oidc.cookies.key().clone())
            .get(ID_TOKEN_COOKIE)
            .and_then(|c| c.value().parse().ok());
    let mut marker = oidc
        .cookies
        .cookie(SIGNED_OUT_COOKIE, "1".to_owned(), "/auth");
    marker.set_max_age(cookie::time::Duration::seconds(SIGNED_OUT_SECONDS));
    let jar = CookieJar::new()
        .add(removal(SESSION_COOKIE, "/"))
        .add(removal(ID_TOKEN_COOKIE, "/auth"))
        .add(marker);
    let page = match oidc.provider_sign_out(id_token.as_ref()) {
        Some(url) => go_on(
            &url,
            "You are signed out of the GCO console; on to your identity provider, to end its session too.",
        ),
        None => see_other(SIGNED_OUT),
    };
    (jar, page).into_response()
}

impl Oidc {
    /// The provider's sign-out (RP-initiated logout) a sign-out goes on
    /// to, when it has one: its endpoint with the session's ID token as
    /// `id_token_hint` when kept, `client_id`, and the signed-out page as
    /// `post_logout_redirect_uri`.
    fn provider_sign_out(&self, id_token: Option<&CoreIdToken>) -> Option<String> {
        let endpoint = self.end_session.as_ref()?;
        let mut request = LogoutRequest::from(endpoint.clone())
            .set_client_id(ClientId::new(self.settings.client_id.clone()))
            .set_post_logout_redirect_uri(PostLogoutRedirectUrl::from_url(
                self.signed_out_url.clone(),
            ));
        if let Some(token) = id_token {
            request = request.set_id_token_hint(token);
        }
        Some(request.http_get_url().to_string())
    }
}

async fn signed_out(State(oidc): State<Arc<Oidc>>) -> Response {
    let text = if oidc.end_session.is_some() {
        "You are signed out of the GCO console, and your identity provider was asked to end its session too."
    } else {
        "You are signed out of the GCO console. Signing in again asks your identity provider for your credentials."
    };
    page(
        StatusCode::OK,
        "Signed out",
        text,
        (route::SIGN_IN, "Sign in again"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_claims_come_with_the_standard_ones() {
        let claims: openidconnect::IdTokenClaims<ExtraClaims, CoreGenderClaim> =
            serde_json::from_value(serde_json::json!({
                "iss": "https://idp.example.com", "aud": "console", "exp": 2_000_000_000,
                "iat": 1_000_000_000, "sub": "0f3c", "email": "ada@example.com",
                "email_verified": true, "groups": ["ml"], "cognito:groups": "ops"
            }))
            .unwrap();
        assert_eq!(claims.subject().as_str(), "0f3c");
        assert_eq!(claims.email_verified(), Some(true));
        let extra = &claims.additional_claims().0;
        assert_eq!(groups_of(extra.get("groups")), vec!["ml"]);
        assert_eq!(groups_of(extra.get("cognito:groups")), vec!["ops"]);
    }

    #[test]
    fn next_stays_on_this_site() {
        let public = Url::parse("https://console.example.com/").unwrap();
        let next = |n: &str| safe_next(Some(n), &public);
        assert_eq!(next("/endpoints/a?tab=history"), "/endpoints/a?tab=history");
        assert_eq!(next("/endpoints/a#history"), "/endpoints/a#history");
        // Sent as the parser reads it: a path of this origin.
        assert_eq!(next("/a/../endpoints"), "/endpoints");
        assert_eq!(next("/%09/evil.example"), "/%09/evil.example");
        for bad in [
            "https://evil.example",
            "https://console.example.com/",
            "//evil.example",
            "/\\evil.example",
            "\\/evil.example",
            "/\\/evil.example",
            "evil",
            // The probe's: a tab (or two) that a browser drops, leaving `//`.
            "/\t/evil.example/steal",
            "/\t\t/evil.example/steal",
            "/\r/evil.example",
            "/\n/evil.example",
            "/\r\n/evil.example",
            "/ /evil.example",
            "/\u{b}/evil.example",
            "/\u{a0}/evil.example",
            "/\u{2028}/evil.example",
            "/endpoints\u{0}",
            "/\t\\evil.example",
        ] {
            assert_eq!(next(bad), "/", "{bad:?}");
        }
        assert_eq!(safe_next(None, &public), "/");
    }
}
