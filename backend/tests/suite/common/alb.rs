//! The AWS load balancer's side of `--auth alb`: its signing key, a server
//! handing out the public key as the region's endpoint does (PEM at
//! `<prefix><kid>`), and headers signed as the ALB signs them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey, LineEnding};

/// The ALB's signing key, and a server handing out its public key as the
/// region's endpoint does (PEM at `<prefix><kid>`), counting fetches (of
/// any `kid`).
pub struct KeyServer {
    pub key: SigningKey,
    pub kid: &'static str,
    pub url: String,
    pub fetches: Arc<AtomicUsize>,
}

impl KeyServer {
    pub async fn start() -> KeyServer {
        let key = SigningKey::from_slice(&[7u8; 32]).unwrap();
        let pem = key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        let kid = "3b8f6e2e-5b2b-4c9a-9a53-1f6c2a1d0e77";
        let fetches = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&fetches);
        // Every fetch is counted, of a key it has or not (404).
        let app = axum::Router::new().route(
            "/keys/{kid}",
            axum::routing::get(
                move |axum::extract::Path(asked): axum::extract::Path<String>| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let answer = if asked == kid {
                        Ok(pem.clone())
                    } else {
                        Err(axum::http::StatusCode::NOT_FOUND)
                    };
                    async move { answer }
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/keys/", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        KeyServer {
            key,
            kid,
            url,
            fetches,
        }
    }
}

pub const ARN: &str =
    "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/console/50dc6c495c0c9188";

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A header as the ALB makes it: each segment padded, the signature over
/// the padded text.
pub fn alb_token(key: &SigningKey, header: serde_json::Value, claims: serde_json::Value) -> String {
    let header = URL_SAFE.encode(header.to_string());
    let payload = URL_SAFE.encode(claims.to_string());
    let signed = format!("{header}.{payload}");
    let signature: Signature = key.sign(signed.as_bytes());
    format!("{signed}.{}", URL_SAFE.encode(signature.to_bytes()))
}

pub fn alb_header(kid: &str, signer: &str, exp: u64) -> serde_json::Value {
    serde_json::json!({
        "typ": "JWT", "kid": kid, "alg": "ES256", "iss": "https://idp.example.com",
        "client": "console", "signer": signer, "exp": exp
    })
}

pub fn claims(exp: u64) -> serde_json::Value {
    serde_json::json!({
        "sub": "0f3c", "email": "ada@example.com", "email_verified": true, "groups": ["ml-oncall"],
        "exp": exp, "iss": "https://idp.example.com"
    })
}

impl KeyServer {
    /// [`KeyServer::start`] on a runtime of its own, for tests without one.
    pub fn start_on_own_thread() -> KeyServer {
        super::on_own_thread(KeyServer::start)
    }
}
