//! `--auth alb`: an AWS Application Load Balancer signs users in with OIDC
//! and sends their claims as `x-amzn-oidc-data`, a JWT it signs with ES256.
//!
//! The ALB pads each segment with `=` and signs the padded text, so the
//! signature is checked over `header.payload` exactly as received (standard
//! JWT libraries strip or refuse the padding, and reject these tokens). The
//! key named by `kid` comes from the region's public-key endpoint
//! ([`super::alb_keys`]).

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::Deserialize;

use super::alb_keys::AlbKeys;
use super::roles::groups_of;

/// The header the ALB adds.
pub const HEADER: &str = "x-amzn-oidc-data";

/// Base64url, padded or not, as the ALB may send either.
const SEGMENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a header is refused: logged (never the token), and the request
/// answered 401.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlbRefusal {
    Missing,
    Malformed(&'static str),
    Algorithm(String),
    ForeignSigner(String),
    Expired {
        exp: u64,
        now: u64,
    },
    /// The key for `kid` could not be fetched or read.
    Key {
        kid: String,
        reason: String,
    },
    BadSignature,
}

impl std::fmt::Display for AlbRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlbRefusal::Missing => write!(f, "no {HEADER} header"),
            AlbRefusal::Malformed(what) => write!(f, "{HEADER} is not an ALB token: {what}"),
            AlbRefusal::Algorithm(alg) => write!(f, "algorithm {alg:?}, not ES256"),
            AlbRefusal::ForeignSigner(signer) => {
                write!(f, "signed by {signer:?}, not this console's load balancer")
            }
            AlbRefusal::Expired { exp, now } => write!(f, "expired at {exp} (now {now})"),
            AlbRefusal::Key { kid, reason } => write!(f, "key {kid:?}: {reason}"),
            AlbRefusal::BadSignature => f.write_str("the signature does not verify"),
        }
    }
}

/// The user an ALB token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlbUser {
    /// [`crate::auth::identity::user_name`].
    pub name: String,
    pub groups: Vec<String>,
}

#[derive(Deserialize)]
struct TokenHeader {
    alg: String,
    kid: String,
    signer: String,
    exp: u64,
    /// The identity provider's issuer.
    #[serde(default)]
    iss: Option<String>,
}

pub struct AlbVerifier {
    signer: String,
    groups_claim: String,
    keys: AlbKeys,
}

/// The public-key endpoint of the ALB named by `arn`, in its region and
/// partition: `https://public-keys.auth.elb.<region>.amazonaws.com/`.
pub fn default_keys_url(arn: &str) -> Result<String, String> {
    let parts: Vec<&str> = arn.split(':').collect();
    match parts.as_slice() {
        [
            "arn",
            partition,
            "elasticloadbalancing",
            region,
            _account,
            resource,
        ] if resource.starts_with("loadbalancer/app/") && !region.is_empty() => {
            let domain = match *partition {
                "aws-cn" => "amazonaws.com.cn",
                _ => "amazonaws.com",
            };
            Ok(format!("https://public-keys.auth.elb.{region}.{domain}/"))
        }
        _ => Err(format!(
            "--alb-arn: {arn:?} is not an Application Load Balancer's ARN \
             (arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/app/<name>/<id>)"
        )),
    }
}

/// Checks `--alb-arn`: an Application Load Balancer's ARN, or the one
/// pattern it takes, `arn:<partition>:elasticloadbalancing:<region>:<account>:loadbalancer/app/<name>/*`
/// (any ALB of that exact name in that account and region: the ARN a load
/// balancer controller will give the ALB it creates is not known before).
pub fn check_arn(arn: &str) -> Result<(), String> {
    let refused = |why: &str| {
        Err(format!(
            "--alb-arn: {arn:?} is not an Application Load Balancer's ARN \
             (arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/app/<name>/<id>, or <id> `*` \
             for any ALB of that name in that account and region): {why}"
        ))
    };
    let parts: Vec<&str> = arn.split(':').collect();
    let [
        "arn",
        partition,
        "elasticloadbalancing",
        region,
        account,
        resource,
    ] = parts.as_slice()
    else {
        return refused("not six fields, or not elasticloadbalancing");
    };
    if !matches!(*partition, "aws" | "aws-cn" | "aws-us-gov") {
        return refused("unknown partition");
    }
    if region.is_empty()
        || !region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return refused("the region must be named");
    }
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return refused("the account must be its 12 digits");
    }
    let fields: Vec<&str> = resource
        .strip_prefix("loadbalancer/")
        .map_or_else(Vec::new, |rest| rest.split('/').collect());
    let ["app", name, id] = fields.as_slice() else {
        return refused("not loadbalancer/app/<name>/<id>");
    };
    // ALB names: 1 to 32 letters, digits and hyphens, no hyphen at an end.
    let name_ok = (1..=32).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !name_ok {
        return refused("the name must be the ALB's whole name");
    }
    if *id != "*" && (id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit())) {
        return refused("the id must be the ALB's hex id, or `*` alone");
    }
    Ok(())
}

/// Whether `signer` (a token's) is the ALB `expected` names: equal, or for
/// `.../app/<name>/*` any id after exactly that name. `expected` has passed
/// [`check_arn`], so its only `*` is the whole id.
pub fn signer_admits(expected: &str, signer: &str) -> bool {
    match expected.strip_suffix('*') {
        Some(prefix) => signer
            .strip_prefix(prefix)
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())),
        None => signer == expected,
    }
}

impl AlbVerifier {
    pub fn new(signer: String, keys_url: String, groups_claim: String) -> AlbVerifier {
        AlbVerifier {
            signer,
            groups_claim,
            keys: AlbKeys::new(keys_url),
        }
    }

    /// The load balancer whose tokens are accepted.
    pub fn signer(&self) -> &str {
        &self.signer
    }

    /// The user a header names, when the header is this ALB's, signed, and
    /// not expired at `now` (seconds since the epoch).
    pub async fn verify(&self, token: &str, now: u64) -> Result<AlbUser, AlbRefusal> {
        let mut segments = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(AlbRefusal::Malformed("not three segments"));
        };
        let head: TokenHeader = decode_json(header).ok_or(AlbRefusal::Malformed("header"))?;
        if head.alg != "ES256" {
            return Err(AlbRefusal::Algorithm(head.alg));
        }
        // Another ALB of the same region signs with the same keys.
        if !signer_admits(&self.signer, &head.signer) {
            return Err(AlbRefusal::ForeignSigner(head.signer));
        }
        if head.exp <= now {
            return Err(AlbRefusal::Expired { exp: head.exp, now });
        }
        let signature = SEGMENT
            .decode(signature)
            .ok()
            .and_then(|bytes| Signature::from_slice(&bytes).ok())
            .ok_or(AlbRefusal::Malformed("signature"))?;
        let key = self.key(&head.kid).await?;
        // Over the text as received, padding included.
        let signed = &token[..header.len() + 1 + payload.len()];
        key.verify(signed.as_bytes(), &signature)
            .map_err(|_| AlbRefusal::BadSignature)?;
        let claims: serde_json::Map<String, serde_json::Value> =
            decode_json(payload).ok_or(AlbRefusal::Malformed("payload"))?;
        if let Some(exp) = claims.get("exp").and_then(serde_json::Value::as_u64)
            && exp <= now
        {
            return Err(AlbRefusal::Expired { exp, now });
        }
        let name = crate::auth::identity::user_name(&claims, head.iss.as_deref())
            .ok_or(AlbRefusal::Malformed("no sub or iss claim"))?;
        Ok(AlbUser {
            name,
            groups: groups_of(claims.get(&self.groups_claim)),
        })
    }

    /// The key named `kid` ([`AlbKeys`]: kept once fetched, and fetched
    /// within bounds).
    async fn key(&self, kid: &str) -> Result<VerifyingKey, AlbRefusal> {
        let refused = |reason: String| AlbRefusal::Key {
            kid: kid.to_owned(),
            reason,
        };
        // The kid becomes part of a URL: ALB kids are UUIDs.
        if kid.is_empty()
            || kid.len() > 128
            || !kid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(refused("not a key id".into()));
        }
        self.keys.get(kid).await.map_err(refused)
    }
}

fn decode_json<T: serde::de::DeserializeOwned>(segment: &str) -> Option<T> {
    serde_json::from_slice(&SEGMENT.decode(segment).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_endpoint_follows_the_arn() {
        assert_eq!(
            default_keys_url(
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/50dc6c495c0c9188"
            ),
            Ok("https://public-keys.auth.elb.eu-west-1.amazonaws.com/".into())
        );
        assert_eq!(
            default_keys_url(
                "arn:aws-cn:elasticloadbalancing:cn-north-1:123456789012:loadbalancer/app/c/1"
            ),
            Ok("https://public-keys.auth.elb.cn-north-1.amazonaws.com.cn/".into())
        );
        assert!(
            default_keys_url("arn:aws:elasticloadbalancing:eu-west-1:1:loadbalancer/net/x/1")
                .is_err()
        );
        assert!(default_keys_url("console").is_err());
    }

    const ARN: &str = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/50dc6c495c0c9188";
    const NAMED: &str =
        "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/*";

    #[test]
    fn an_arn_or_the_one_pattern_is_taken_and_nothing_else() {
        assert_eq!(check_arn(ARN), Ok(()));
        assert_eq!(check_arn(NAMED), Ok(()));
        assert_eq!(
            check_arn(
                "arn:aws-us-gov:elasticloadbalancing:us-gov-west-1:123456789012:loadbalancer/app/k8s-gco-console/*"
            ),
            Ok(())
        );
        for (arn, why) in [
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/*",
                "not loadbalancer/app/<name>/<id>",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/*/*",
                "whole name",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/con*/*",
                "whole name",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/50dc*",
                "hex id, or `*` alone",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:*:loadbalancer/app/console/*",
                "12 digits",
            ),
            (
                "arn:aws:elasticloadbalancing:*:123456789012:loadbalancer/app/console/*",
                "region must be named",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/console/*",
                "not loadbalancer/app",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/*/x",
                "not loadbalancer/app",
            ),
            (
                "arn:*:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/console/*",
                "unknown partition",
            ),
            (
                "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/-console/*",
                "whole name",
            ),
            ("console", "not six fields"),
        ] {
            let refused = check_arn(arn).unwrap_err();
            assert!(
                refused.starts_with(&format!(
                    "--alb-arn: {arn:?} is not an Application Load Balancer's ARN"
                )),
                "{refused}"
            );
            assert!(refused.contains(why), "{arn}: {refused}");
        }
    }

    #[test]
    fn the_pattern_admits_that_name_in_that_account_and_region_only() {
        assert!(signer_admits(ARN, ARN));
        assert!(!signer_admits(ARN, &ARN.replace("50dc", "60dc")));
        assert!(signer_admits(NAMED, ARN));
        assert!(signer_admits(
            NAMED,
            &ARN.replace("50dc6c495c0c9188", "0123456789abcdef")
        ));
        for other in [
            // Another name, one that starts with it, or its prefix.
            ARN.replace("app/console/", "app/console-2/"),
            ARN.replace("app/console/", "app/consol/"),
            ARN.replace("app/console/", "app/other/"),
            // Another account or region.
            ARN.replace("123456789012", "210987654321"),
            ARN.replace("eu-west-1", "eu-west-2"),
            // No id, or more after it.
            NAMED.trim_end_matches('*').to_owned(),
            format!("{ARN}/x"),
        ] {
            assert!(!signer_admits(NAMED, &other), "{other}");
        }
    }
}
