//! What verifying a request's identity costs, per `--auth` mode, with what
//! each mode keeps ready (the ALB's key fetched once and cached):
//!
//! - `identity/token`: a bearer token among 10 named ones (SHA-256 of the
//!   token, then every digest compared in constant time);
//! - `identity/oidc_session`: the session cookie decrypted (AES-256-GCM)
//!   and read;
//! - `identity/alb`: the load balancer's header: JSON of both segments and
//!   one ES256 (P-256) signature check over the padded text.
//!
//! `--auth none` does no work. Run: `cargo bench -p gco-console --bench
//! identity`; BENCHMARKS.md quotes the figures.

use std::hint::black_box;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::IntoResponse;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use criterion::{Criterion, criterion_group, criterion_main};
use gco_console::auth::alb::AlbVerifier;
use gco_console::auth::session::{Session, SessionCookies};
use gco_console::auth::tokens::Tokens;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey, LineEnding};
use sha2::{Digest, Sha256};

const ARN: &str =
    "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/console/50dc6c495c0c9188";
const KID: &str = "3b8f6e2e-5b2b-4c9a-9a53-1f6c2a1d0e77";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn tokens() -> (Tokens, String) {
    let file: String = (0..10)
        .map(|i| {
            let digest: String = Sha256::digest(format!("token-{i}-0123456789").as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!(
                "[[token]]\nname = \"bot-{i}\"\nroles = [\"operator\"]\nsha256 = \"{digest}\"\n"
            )
        })
        .collect();
    (Tokens::parse(&file).unwrap(), "token-7-0123456789".into())
}

fn session_headers(cookies: &SessionCookies) -> HeaderMap {
    let session = Session::new(
        "ada@example.com".into(),
        vec!["ml-oncall".into(), "ml-platform".into()],
        now() + 3600,
    );
    let answer = cookies
        .put(cookies.private_jar(), &session, 3600)
        .into_response();
    let line: Vec<String> = answer
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| {
            let cookie = cookie::Cookie::parse_encoded(v.to_str().unwrap().to_owned()).unwrap();
            cookie.stripped().encoded().to_string()
        })
        .collect();
    let mut headers = HeaderMap::new();
    headers.insert(
        header::COOKIE,
        HeaderValue::from_str(&line.join("; ")).unwrap(),
    );
    headers
}

/// A signed header, and a verifier whose key server (a real one, on
/// loopback) has handed the key out once.
fn alb(runtime: &tokio::runtime::Runtime) -> (AlbVerifier, String) {
    let key = SigningKey::from_slice(&[7u8; 32]).unwrap();
    let pem = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .unwrap();
    let url = runtime.block_on(async {
        let app = axum::Router::new().route(
            &format!("/keys/{KID}"),
            axum::routing::get(move || {
                let pem = pem.clone();
                async move { pem }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/keys/", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    });
    let exp = now() + 3600;
    let head = serde_json::json!({"typ": "JWT", "kid": KID, "alg": "ES256",
        "iss": "https://idp.example.com", "client": "console", "signer": ARN, "exp": exp});
    let claims = serde_json::json!({"sub": "0f3c", "email": "ada@example.com",
        "groups": ["ml-oncall"], "exp": exp, "iss": "https://idp.example.com"});
    let signed = format!(
        "{}.{}",
        URL_SAFE.encode(head.to_string()),
        URL_SAFE.encode(claims.to_string())
    );
    let signature: Signature = key.sign(signed.as_bytes());
    let token = format!("{signed}.{}", URL_SAFE.encode(signature.to_bytes()));
    let verifier = AlbVerifier::new(ARN.into(), url, "groups".into());
    runtime
        .block_on(verifier.verify(&token, now()))
        .expect("the header verifies");
    (verifier, token)
}

fn identity(c: &mut Criterion) {
    let mut group = c.benchmark_group("identity");
    group.measurement_time(Duration::from_secs(3));

    let (tokens, token) = tokens();
    group.bench_function("token", |b| {
        b.iter(|| black_box(tokens.identify(black_box(&token))))
    });

    let cookies = SessionCookies::new(cookie::Key::generate(), true);
    let headers = session_headers(&cookies);
    let at = now();
    group.bench_function("oidc_session", |b| {
        b.iter(|| black_box(cookies.read(black_box(&headers), at)))
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (verifier, header) = alb(&runtime);
    group.bench_function("alb", |b| {
        b.iter(|| black_box(runtime.block_on(verifier.verify(black_box(&header), at))))
    });
    group.finish();
}

criterion_group!(benches, identity);
criterion_main!(benches);
