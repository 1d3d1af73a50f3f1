//! Command-line flags, each with an environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use gco_api::AuthMode;

use crate::auth::alb::{AlbVerifier, check_arn as check_alb_arn, default_keys_url};
use crate::auth::alb_sign_out::AlbSignOut;
use crate::auth::oidc::{Oidc, OidcSettings};
use crate::auth::roles::RolesMap;
use crate::auth::tokens::{MIN_TOKEN_CHARS, Tokens};
use crate::auth::{Access, AllowedHosts, Authenticator};

/// The GCO console: the endpoint editor and its API.
///
/// Endpoints are stored in GCO's DynamoDB table when --dynamodb-endpoint or
/// --dynamodb-region is given, else in an embedded file-backed store under
/// --data-dir.
#[derive(Debug, Clone, Parser)]
#[command(name = "gco-console", version)]
pub struct Config {
    /// Address to listen on. A non-loopback address needs --auth-token-file.
    /// Requests must name a loopback host (localhost, 127.0.0.1, [::1]), an
    /// IP address when this is not loopback, or one of --allowed-hosts.
    #[arg(long, env = "GCO_CONSOLE_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Directory of the embedded store (used when no DynamoDB is configured).
    #[arg(long, env = "GCO_CONSOLE_DATA_DIR", default_value = "./.data")]
    pub data_dir: PathBuf,

    /// URL of a DynamoDB-compatible server, e.g. http://127.0.0.1:8000.
    /// Leave out for AWS (credentials from the standard chain).
    #[arg(long, env = "GCO_DYNAMODB_ENDPOINT")]
    pub dynamodb_endpoint: Option<String>,

    /// The endpoints table GCO's monitors read.
    #[arg(
        long,
        env = "INFERENCE_ENDPOINTS_TABLE_NAME",
        default_value = "gco-inference-endpoints"
    )]
    pub dynamodb_table: String,

    /// The history table, where every change the console writes is
    /// recorded in the same transaction (default `{table}-history`; the
    /// embedded store keeps its own). `off` records nothing: for a
    /// DynamoDB-compatible server without transactions (dynalite).
    #[arg(long, env = "GCO_HISTORY_TABLE", value_name = "NAME|off")]
    pub history_table: Option<String>,

    /// Region of the table (GCO's global region). Setting it selects DynamoDB;
    /// with --dynamodb-endpoint it defaults to us-east-1.
    #[arg(long, env = "DYNAMODB_REGION")]
    pub dynamodb_region: Option<String>,

    /// How often the console's one view of the table is read again while
    /// someone is looking (lists and pages are answered from it; an idle
    /// console reads nothing). A write made elsewhere shows within it.
    /// `0s` reads the table for every list instead. DynamoDB only: the
    /// embedded store is its own view.
    #[arg(long, env = "GCO_REFRESH_INTERVAL", default_value = "3s", value_parser = parse_interval)]
    pub refresh_interval: Duration,

    /// Write the view's age (`gco_view_age_seconds`) to stdout this often as
    /// a CloudWatch embedded-metric-format line, which CloudWatch Logs turns
    /// into a metric with no scraper (namespace `GcoConsole`, dimension
    /// `Table`). Only while someone looks: an idle view writes nothing.
    /// Off unless given (`0s` is off too). DynamoDB only.
    #[arg(long, env = "GCO_EMF_INTERVAL", value_parser = parse_interval)]
    pub emf_interval: Option<Duration>,

    /// Serve GET /metrics on this address only, instead of beside the API.
    #[arg(long, env = "GCO_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,

    /// Create the table at start-up when missing (for local servers).
    #[arg(long, env = "GCO_CREATE_TABLE")]
    pub create_table: bool,

    /// Regions with GCO infrastructure: where a deploy goes when it names
    /// none. Comma-separated.
    #[arg(long, env = "GCO_REGIONS", value_delimiter = ',')]
    pub regions: Vec<String>,

    /// Image of a mooncake deploy that names none.
    #[arg(long, env = "GCO_DEFAULT_IMAGE", default_value = gco_spec::limits::DEFAULT_MOONCAKE_IMAGE)]
    pub default_image: String,

    /// The serving frameworks the team's GCO accepts, comma-separated: every
    /// check and write obeys it, and the console's editor reads it from
    /// /api/config. GCO since its SGLang release: vllm,sglang; an older
    /// GCO: vllm,tgi.
    #[arg(long, env = "GCO_FRAMEWORKS", default_value = "vllm,sglang")]
    pub frameworks: gco_spec::Frameworks,

    /// How users are known: `none` (loopback only; everyone is `local`
    /// with every role), `token` (bearer tokens: --auth-token-file and
    /// --tokens-file), `oidc` (the console signs users in at
    /// --oidc-issuer) or `alb` (an AWS Application Load Balancer signs
    /// them in; --alb-arn). Default: `token` when a token file is given,
    /// else `none`.
    #[arg(long, env = "GCO_AUTH")]
    pub auth: Option<gco_api::AuthMode>,

    /// File holding a shared bearer token (identity `token`, every role).
    #[arg(long, env = "GCO_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,

    /// Named tokens for automation: TOML, one `[[token]]` table per token
    /// with `name`, `roles` and `sha256` (the hex SHA-256 of the token).
    /// Under `token` and `oidc`.
    #[arg(long, env = "GCO_TOKENS_FILE")]
    pub tokens_file: Option<PathBuf>,

    /// Roles of signed-in users (`oidc`, `alb`): TOML with `default =
    /// "<role>"` (or "none") and a `[groups]` table mapping a group to a
    /// role (viewer, operator, admin). Without it every signed-in user is a
    /// viewer.
    #[arg(long, env = "GCO_ROLES_FILE", conflicts_with = "roles")]
    pub roles_file: Option<PathBuf>,

    /// The roles file's TOML itself, for where no file can be mounted (a
    /// container's environment).
    #[arg(long, env = "GCO_ROLES")]
    pub roles: Option<String>,

    /// The claim that lists a user's groups (`oidc`: in the ID token;
    /// `alb`: in the load balancer's header).
    #[arg(long, env = "GCO_GROUPS_CLAIM", default_value = "groups")]
    pub groups_claim: String,

    /// `alb`: the load balancer's ARN; its header must name it as signer.
    /// `arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/app/<name>/*`
    /// admits any ALB of that exact name in that account and region (for an
    /// ALB a controller creates, whose ARN is not known before); no other
    /// pattern is taken.
    #[arg(long, env = "GCO_ALB_ARN")]
    pub alb_arn: Option<String>,

    /// `alb`: the URL prefix of the load balancer's public keys (the key's
    /// id is appended). Default: the region's endpoint, from --alb-arn.
    #[arg(long, env = "GCO_ALB_PUBLIC_KEYS")]
    pub alb_public_keys: Option<String>,

    /// `alb`: where Sign out sends the browser once the load balancer's
    /// session cookies are expired: the identity provider's logout URL
    /// (e.g. Cognito's `https://<domain>/logout?client_id=...&logout_uri=...`,
    /// Okta's or Entra ID's end-session URL), so its session ends too.
    /// Without it the provider may sign the same user in again unasked.
    #[arg(long, env = "GCO_ALB_LOGOUT_URL")]
    pub alb_logout_url: Option<String>,

    /// `oidc`: the OpenID provider's issuer URL (discovery reads
    /// <issuer>/.well-known/openid-configuration).
    #[arg(long, env = "GCO_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,

    /// `oidc`: this console's client id at the provider.
    #[arg(long, env = "GCO_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,

    /// `oidc`: file holding the client secret (none for a public client).
    #[arg(long, env = "GCO_OIDC_CLIENT_SECRET_FILE")]
    pub oidc_client_secret_file: Option<PathBuf>,

    /// `oidc`: the scopes asked for, comma-separated.
    #[arg(
        long,
        env = "GCO_OIDC_SCOPES",
        value_delimiter = ',',
        default_value = "openid,email,profile"
    )]
    pub oidc_scopes: Vec<String>,

    /// The address users reach the console at, such as
    /// https://console.example.com: its scheme is the one a page's Origin
    /// must name (default: https under `alb`, else http). `oidc` needs it:
    /// the provider sends users back to <url>/auth/callback, and changes
    /// must come from its origin.
    #[arg(long, env = "GCO_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// `oidc`: how long a sign-in lasts (`8h`, `30m`, `90s`).
    #[arg(long, env = "GCO_SESSION_LIFETIME", default_value = "8h", value_parser = parse_lifetime)]
    pub session_lifetime: Duration,

    /// `oidc`: file holding the session cookies' key (at least 32 bytes;
    /// consoles sharing it share sessions). Without it a key is made at
    /// start-up, and a restart signs everyone out.
    #[arg(long, env = "GCO_SESSION_KEY_FILE")]
    pub session_key_file: Option<PathBuf>,

    /// Host names requests may be addressed to besides loopback ones and IP
    /// addresses: the name users browse to, or a proxy passes as Host.
    /// `.example.com` admits example.com and its subdomains. Requests naming
    /// another host are refused (421), which keeps other sites' pages out
    /// by DNS rebinding. Comma-separated.
    #[arg(long, env = "GCO_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Directory of the built console (index.html and its assets).
    #[arg(long, env = "GCO_CONSOLE_DIST", default_value = "./dist")]
    pub dist: PathBuf,

    /// What each region's monitor is configured with: a TOML file with a
    /// `[default]` table and `[regions.<name>]` tables whose keys are the
    /// `manifests` command's settings (master_image, cluster_name,
    /// regional_bucket, metadata_server, master_address, project_name).
    /// The preview's manifests use it, and deploy checks warn about a
    /// region left without a master image (GCO has no default; without
    /// this file no region has one).
    #[arg(long, env = "GCO_MONITOR_SETTINGS")]
    pub monitor_settings: Option<PathBuf>,

    /// Refuse to start unless DynamoDB is configured (--dynamodb-region or
    /// --dynamodb-endpoint). The container image sets it: an embedded store
    /// inside a container is lost when the container is replaced.
    #[arg(long, env = "GCO_REQUIRE_DYNAMODB")]
    pub require_dynamodb: bool,
}

/// `--refresh-interval`, `--emf-interval`: 0s to an hour.
fn parse_interval(text: &str) -> Result<Duration, String> {
    parse_duration_within(text, Duration::ZERO, Duration::from_secs(3600))
}

/// `--session-lifetime`: a second to a week.
fn parse_lifetime(text: &str) -> Result<Duration, String> {
    parse_duration_within(
        text,
        Duration::from_secs(1),
        Duration::from_secs(7 * 24 * 3600),
    )
}

/// A duration flag's value in humantime's forms (`500ms`, `3s`, `30m`,
/// `8h`, `1h 30m`), or plain seconds, from `min` to `max`.
fn parse_duration_within(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let text = text.trim();
    let plain_seconds = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let parsed = if plain_seconds {
        text.parse().ok().map(Duration::from_secs)
    } else {
        humantime::parse_duration(text).ok()
    };
    let duration =
        parsed.ok_or_else(|| format!("{text:?} is not a duration such as 500ms, 3s, 30m or 8h"))?;
    if !(min..=max).contains(&duration) {
        return Err(format!(
            "{text:?} must be between {} and {}",
            humantime::format_duration(min),
            humantime::format_duration(max)
        ));
    }
    Ok(duration)
}

impl Config {
    /// The history table's name; `None` with `--history-table off`.
    pub fn history_table(&self) -> Option<String> {
        match self.history_table.as_deref() {
            Some("off") => None,
            Some(name) => Some(name.to_owned()),
            None => Some(crate::store::DynamoConfig::default_history_table(
                &self.dynamodb_table,
            )),
        }
    }

    /// Where the flags say the endpoints are kept (`store::open` opens it).
    pub fn store_location(&self) -> crate::store::Location {
        match self.dynamodb_region() {
            Some(region) => crate::store::Location::Dynamo {
                table: crate::store::DynamoConfig {
                    table: self.dynamodb_table.clone(),
                    region,
                    endpoint: self.dynamodb_endpoint.clone(),
                    history_table: self.history_table(),
                },
                create_table: self.create_table,
                refresh_interval: self.refresh_interval,
            },
            None => crate::store::Location::Embedded {
                data_dir: self.data_dir.clone(),
                history: self.history_table().is_some(),
            },
        }
    }

    /// The DynamoDB region, when DynamoDB is configured.
    pub fn dynamodb_region(&self) -> Option<String> {
        match (&self.dynamodb_region, &self.dynamodb_endpoint) {
            (Some(r), _) => Some(r.clone()),
            (None, Some(_)) => Some("us-east-1".into()),
            (None, None) => None,
        }
    }

    /// With --require-dynamodb, refuses the embedded store, saying why.
    pub fn check_store(&self) -> Result<(), String> {
        if self.require_dynamodb && self.dynamodb_region().is_none() {
            return Err("--require-dynamodb (GCO_REQUIRE_DYNAMODB) is set and no DynamoDB table is configured: \
                 set DYNAMODB_REGION (--dynamodb-region) and INFERENCE_ENDPOINTS_TABLE_NAME, or GCO_DYNAMODB_ENDPOINT. \
                 Refusing the embedded store: inside a container its endpoints are lost when the container is replaced"
                .to_owned());
        }
        Ok(())
    }

    /// Checks what clap cannot (regions, the files, the bind address) and
    /// sets up who may ask: under `--auth oidc` this finds the provider.
    pub async fn check(&self) -> Result<Access, String> {
        for region in &self.regions {
            if !gco_spec::names::is_region(region) {
                return Err(format!(
                    "--regions: {region:?} is not an AWS region such as us-east-1"
                ));
            }
        }
        let mut tokens = match &self.auth_token_file {
            None => Tokens::default(),
            Some(path) => Tokens::shared(&read_secret("--auth-token-file", path, MIN_TOKEN_CHARS)?),
        };
        if let Some(path) = &self.tokens_file {
            tokens = tokens.with(Tokens::read(path)?);
        }
        let mode = self.auth.unwrap_or(if tokens.is_empty() {
            AuthMode::None
        } else {
            AuthMode::Token
        });
        let auth = match mode {
            AuthMode::None => {
                if !tokens.is_empty() {
                    return Err(
                        "--auth none takes no tokens: use --auth token with --auth-token-file or --tokens-file".into(),
                    );
                }
                if !self.addr.ip().is_loopback() {
                    return Err(format!(
                        "refusing to listen on {} with --auth none: anyone who can reach it could change endpoints; choose --auth token, oidc or alb",
                        self.addr
                    ));
                }
                Authenticator::None
            }
            AuthMode::Token => {
                if tokens.is_empty() {
                    return Err("--auth token needs --auth-token-file or --tokens-file".into());
                }
                Authenticator::Token(tokens)
            }
            AuthMode::Oidc => {
                let needed = |flag: &str, value: &Option<String>| {
                    value
                        .clone()
                        .ok_or_else(|| format!("--auth oidc needs {flag}"))
                };
                let client_secret = match &self.oidc_client_secret_file {
                    Some(path) => Some(read_secret("--oidc-client-secret-file", path, 1)?),
                    None => None,
                };
                let key = match &self.session_key_file {
                    Some(path) => {
                        let secret = read_secret("--session-key-file", path, 32)?;
                        cookie::Key::derive_from(secret.as_bytes())
                    }
                    None => cookie::Key::generate(),
                };
                let settings = OidcSettings {
                    issuer: needed("--oidc-issuer", &self.oidc_issuer)?,
                    client_id: needed("--oidc-client-id", &self.oidc_client_id)?,
                    client_secret,
                    public_url: needed("--public-url", &self.public_url)?,
                    scopes: self.oidc_scopes.clone(),
                    groups_claim: self.groups_claim.clone(),
                    session_lifetime: self.session_lifetime,
                    key,
                };
                Authenticator::Oidc {
                    oidc: std::sync::Arc::new(Oidc::discover(settings).await?),
                    tokens,
                    roles: self.roles_map()?,
                }
            }
            AuthMode::Alb => {
                let arn = self
                    .alb_arn
                    .clone()
                    .ok_or("--auth alb needs --alb-arn: the load balancer's ARN")?;
                check_alb_arn(&arn)?;
                let keys = match &self.alb_public_keys {
                    Some(url) => url.clone(),
                    None => default_keys_url(&arn)?,
                };
                let logout_url = match &self.alb_logout_url {
                    Some(text) => Some(check_logout_url(text)?),
                    None => None,
                };
                Authenticator::Alb {
                    verifier: AlbVerifier::new(arn, keys, self.groups_claim.clone()),
                    roles: self.roles_map()?,
                    sign_out: std::sync::Arc::new(AlbSignOut { logout_url }),
                }
            }
        };
        let names = self
            .allowed_hosts
            .iter()
            .map(|name| AllowedHosts::entry(name))
            .collect::<Result<_, _>>()?;
        let access = Access::for_listener(self.addr, auth, names);
        match &self.public_url {
            Some(text) => access.reached_at(&url::Url::parse(text).map_err(|e| {
                format!("--public-url {text:?}: {e} (the console's address, such as https://console.example.com)")
            })?),
            None => Ok(access),
        }
    }

    /// `--roles-file` or `--roles`; every signed-in user a viewer without.
    fn roles_map(&self) -> Result<RolesMap, String> {
        match (&self.roles_file, &self.roles) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--roles-file {}: {e}", path.display()))?;
                RolesMap::parse(&text).map_err(|e| format!("--roles-file {}: {e}", path.display()))
            }
            (None, Some(text)) => RolesMap::parse(text).map_err(|e| format!("--roles: {e}")),
            (None, None) => Ok(RolesMap::default()),
        }
    }
}

/// `--alb-logout-url`: an absolute https URL (http only to a loopback
/// host, for tests), as a `Location` sends it.
fn check_logout_url(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| {
        format!("--alb-logout-url {text:?}: {e} (the identity provider's logout URL, such as https://idp.example.com/logout)")
    })?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match url.scheme() {
        "https" => Ok(url.into()),
        "http" if loopback => Ok(url.into()),
        _ => Err(format!(
            "--alb-logout-url {text:?}: must be an https URL (the identity provider's logout URL)"
        )),
    }
}

/// A secret file's text, trimmed, of at least `min` characters.
fn read_secret(flag: &str, path: &std::path::Path, min: usize) -> Result<String, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    let secret = text.trim().to_owned();
    if secret.chars().count() < min {
        return Err(format!(
            "{flag} {}: the secret must have at least {min} characters",
            path.display()
        ));
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::{Config, parse_interval, parse_lifetime};

    #[test]
    fn an_interval_reads_with_its_unit_and_refuses_the_rest() {
        assert_eq!(parse_interval("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_interval("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("0s"), Ok(Duration::ZERO));
        for text in ["-1s", "fast", "3 parsecs", ""] {
            assert_eq!(
                parse_interval(text),
                Err(format!(
                    "{text:?} is not a duration such as 500ms, 3s, 30m or 8h"
                ))
            );
        }
        for text in ["61m", "3h"] {
            assert_eq!(
                parse_interval(text),
                Err(format!("{text:?} must be between 0s and 1h"))
            );
        }
        assert!(parse_interval(&"9".repeat(400)).is_err());
    }

    #[test]
    fn require_dynamodb_refuses_the_embedded_store_only() {
        let refused = Config::try_parse_from(["gco-console", "--require-dynamodb"])
            .unwrap()
            .check_store()
            .unwrap_err();
        assert!(
            refused.contains("no DynamoDB table is configured"),
            "{refused}"
        );
        assert!(
            refused.contains("lost when the container is replaced"),
            "{refused}"
        );
        for dynamodb in [
            ["--dynamodb-region", "eu-west-1"],
            ["--dynamodb-endpoint", "http://127.0.0.1:8000"],
        ] {
            let mut args = vec!["gco-console", "--require-dynamodb"];
            args.extend(dynamodb);
            assert_eq!(Config::try_parse_from(args).unwrap().check_store(), Ok(()));
        }
        assert_eq!(
            Config::try_parse_from(["gco-console"])
                .unwrap()
                .check_store(),
            Ok(())
        );
    }

    #[test]
    fn a_session_lifetime_reads_with_its_unit_and_refuses_the_rest() {
        assert_eq!(parse_lifetime("8h"), Ok(Duration::from_secs(8 * 3600)));
        assert_eq!(parse_lifetime("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_lifetime("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_lifetime("90"), Ok(Duration::from_secs(90)));
        assert_eq!(
            parse_lifetime("-1h"),
            Err(r#""-1h" is not a duration such as 500ms, 3s, 30m or 8h"#.to_owned())
        );
        for text in ["0s", "169h", "8d"] {
            assert_eq!(
                parse_lifetime(text),
                Err(format!("{text:?} must be between 1s and 7days"))
            );
        }
        let huge = "9".repeat(40);
        assert!(parse_lifetime(&huge).is_err());
    }

    #[test]
    fn frameworks_name_known_ones_only() {
        let config = Config::try_parse_from(["gco-console", "--frameworks", "vllm,tgi"]).unwrap();
        assert_eq!(config.frameworks.to_string(), "vllm,tgi");
        let refused = Config::try_parse_from(["gco-console", "--frameworks", "vllm,triton"])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("unknown framework 'triton'; GCO knows vllm, sglang, tgi"),
            "{refused}"
        );
        assert!(Config::try_parse_from(["gco-console", "--frameworks", ""]).is_err());
    }
}
