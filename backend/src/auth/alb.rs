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
    /// [`crate::identity::user_name`].
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
        if head.signer != self.signer {
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
        let name = crate::identity::user_name(&claims, head.iss.as_deref())
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
}
