//! Command-line flags, each with an environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

use crate::auth::{Access, AllowedHosts};

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
    pub refresh_interval: std::time::Duration,

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

    /// File holding the bearer token every change must present.
    #[arg(long, env = "GCO_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,

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

/// `3s`, `500ms`, `1m`, or plain seconds.
fn parse_interval(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 3s or 500ms"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("{text:?}: the unit must be ms, s or m")),
    };
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(format!("{text:?} must be between 0s and 60m"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

impl Config {
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

    /// Checks what clap cannot: regions, the token file, the bind address.
    pub fn check(&self) -> Result<Access, String> {
        for region in &self.regions {
            if !gco_spec::names::is_region(region) {
                return Err(format!(
                    "--regions: {region:?} is not an AWS region such as us-east-1"
                ));
            }
        }
        let token = match &self.auth_token_file {
            None => None,
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--auth-token-file {}: {e}", path.display()))?;
                let token = text.trim().to_owned();
                if token.len() < 16 {
                    return Err(format!(
                        "--auth-token-file {}: the token must have at least 16 characters",
                        path.display()
                    ));
                }
                Some(token)
            }
        };
        if token.is_none() && !self.addr.ip().is_loopback() {
            return Err(format!(
                "refusing to listen on {} without --auth-token-file: anyone who can reach it could change endpoints",
                self.addr
            ));
        }
        let names = self
            .allowed_hosts
            .iter()
            .map(|name| AllowedHosts::entry(name))
            .collect::<Result<_, _>>()?;
        Ok(Access::for_listener(self.addr, token, names))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::{Config, parse_interval};

    #[test]
    fn an_interval_reads_with_its_unit_and_refuses_the_rest() {
        assert_eq!(parse_interval("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_interval("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("0s"), Ok(Duration::ZERO));
        assert_eq!(
            parse_interval("3h"),
            Err(r#""3h": the unit must be ms, s or m"#.to_owned())
        );
        assert_eq!(
            parse_interval("-1s"),
            Err(r#""-1s" is not a duration such as 3s or 500ms"#.to_owned())
        );
        assert_eq!(
            parse_interval("fast"),
            Err(r#""fast" is not a duration such as 3s or 500ms"#.to_owned())
        );
        assert_eq!(
            parse_interval("61m"),
            Err(r#""61m" must be between 0s and 60m"#.to_owned())
        );
        assert_eq!(
            parse_interval(&"9".repeat(400)),
            Err(format!(
                r#""{}" must be between 0s and 60m"#,
                "9".repeat(400)
            ))
        );
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
