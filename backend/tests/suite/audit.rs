//! The audit view (issue 43): `GET /api/history` and its export on both
//! stores: every endpoint's changes newest first, each filter, paging,
//! exports, bad parameters refused by name, a viewer may read; and the
//! index by time: an embedded store written before it is indexed at open,
//! a DynamoDB history table made before it gets it from `--create-table`,
//! its entries included, and sign-outs never listed.

use std::sync::Arc;

use axum::http::StatusCode;
use gco_console::audit::{AuditFilter, Position};
use gco_console::store::{Author, EmbeddedStore, SignOuts, Storable, Store};
use gco_spec::json::Value;

use crate::common::{HISTORY_TABLE, Moto, TempDir};
use crate::history::Env;

/// Deploys, scales and stops three endpoints as three people; the changes
/// as (who, operation, endpoint), oldest first.
async fn make_changes(env: &Env) -> Vec<(String, String, String)> {
    let mut made = Vec::new();
    for (who, name) in [
        ("ada=operator", "chat-prod"),
        ("bob=operator", "chat-dev"),
        ("cy=admin", "embed"),
    ] {
        let body = format!(r#"{{"endpoint_name": "{name}", "image": "vllm/vllm-openai:v0.27.1"}}"#);
        let (r, _) = env
            .call(who, "POST", "/api/endpoints", Some(&body), None)
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        made.push((who, "deploy", name));
    }
    for (who, op, name, method, path, body) in [
        (
            "bob=operator",
            "scale",
            "chat-prod",
            "PUT",
            "replicas",
            Some(r#"{"replicas": 3}"#),
        ),
        ("ada=operator", "stop", "chat-dev", "POST", "stop", None),
        (
            "ada=operator",
            "scale",
            "embed",
            "PUT",
            "replicas",
            Some(r#"{"replicas": 2}"#),
        ),
    ] {
        let path = format!("/api/endpoints/{name}/{path}");
        let (r, _) = env.call(who, method, &path, body, None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        made.push((who, op, name));
    }
    made.into_iter()
        .rev()
        .map(|(who, op, name)| {
            let who = who.split('=').next().unwrap().to_owned();
            (who, op.to_owned(), name.to_owned())
        })
        .collect()
}

/// (who, operation, endpoint) of a page's items, and its `next`.
fn listed(page: &Value) -> (Vec<(String, String, String)>, Option<String>) {
    let Some(Value::List(items)) = page.as_object().and_then(|o| o.get("items")).cloned() else {
        panic!("no items: {page:?}");
    };
    let text = |v: &Value, k: &str| {
        v.as_object()
            .and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let items = items
        .iter()
        .map(|i| (text(i, "who"), text(i, "operation"), text(i, "endpoint")))
        .collect();
    let next = page
        .as_object()
        .and_then(|o| o.get("next"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    (items, next)
}

async fn page(
    env: &Env,
    who: &str,
    query: &str,
) -> (Vec<(String, String, String)>, Option<String>) {
    let (r, _) = env
        .call(who, "GET", &format!("/api/history{query}"), None, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
    listed(&r.body)
}

async fn audit_view(env: Env) {
    let made = make_changes(&env).await;
    // A viewer reads every change, newest first.
    let (all, next) = page(&env, "vic=viewer", "").await;
    assert_eq!(all, made);
    assert_eq!(next, None);
    let only = |f: &dyn Fn(&(String, String, String)) -> bool| -> Vec<_> {
        made.iter().filter(|c| f(c)).cloned().collect()
    };
    assert_eq!(page(&env, "", "?who=ada").await.0, only(&|c| c.0 == "ada"));
    assert_eq!(
        page(&env, "", "?operation=scale").await.0,
        only(&|c| c.1 == "scale")
    );
    assert_eq!(
        page(&env, "", "?endpoint=chat-dev").await.0,
        only(&|c| c.2 == "chat-dev")
    );
    assert_eq!(
        page(&env, "", "?q=CHAT").await.0,
        only(&|c| c.2.contains("chat"))
    );
    assert_eq!(
        page(&env, "", "?q=chat&operation=deploy&who=bob").await.0,
        only(&|c| c.2 == "chat-dev" && c.1 == "deploy")
    );
    assert_eq!(
        page(&env, "", "?endpoint=chat-prod&operation=scale")
            .await
            .0,
        only(&|c| c.2 == "chat-prod" && c.1 == "scale")
    );
    // Today holds them all; a range before it none.
    let (first, _) = {
        let (r, _) = env
            .call("", "GET", "/api/history?limit=1", None, None)
            .await;
        (r.str("items.0.at"), ())
    };
    let today = &first[..10];
    assert_eq!(
        page(&env, "", &format!("?from={today}&to={today}")).await.0,
        made
    );
    assert_eq!(page(&env, "", "?to=2020-01-01").await.0, Vec::new());
    assert_eq!(
        page(&env, "", "?from=2999-01-01T00:00:00%2B01:00").await.0,
        Vec::new()
    );
    // Pages of two, each continuing the last, make the whole list.
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(a) => format!("?limit=2&after={a}"),
            None => "?limit=2".to_owned(),
        };
        let (items, next) = page(&env, "", &query).await;
        assert!(items.len() <= 2);
        paged.extend(items);
        match next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(paged, made);
    // Each item names its entry in the endpoint's history.
    let (r, _) = env
        .call("", "GET", "/api/history?endpoint=embed&limit=1", None, None)
        .await;
    let id = r.str("items.0.id");
    let (h, _) = env
        .call("", "GET", "/api/endpoints/embed/history", None, None)
        .await;
    assert_eq!(h.str("items.0.id"), id);
    // The export: every change the filters admit.
    let (r, _) = env
        .call(
            "vic=viewer",
            "GET",
            "/api/history/export?format=jsonl&who=ada",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.headers.get("content-type").unwrap(),
        "application/x-ndjson"
    );
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(lines.len(), only(&|c| c.0 == "ada").len());
    assert!(
        lines.iter().all(|l| l.contains(r#""who":"ada""#)),
        "{}",
        r.text
    );
    let (r, _) = env
        .call("", "GET", "/api/history/export?format=csv", None, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers
            .get("content-disposition")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("gco-history.csv")
    );
    let rows: Vec<&str> = r.text.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        rows[0],
        "at,endpoint,operation,who,id,request_id,client_request_id"
    );
    assert_eq!(rows.len(), made.len() + 1);
    // Bad input: 400 at the parameter, in these words.
    let operations = gco_api::operation::RECORDED.join(", ");
    let long_who = format!("/api/history?who={}", "a".repeat(513));
    let long_endpoint = format!("/api/history?endpoint={}", "e".repeat(513));
    let cases: [(&str, &str, String); 11] = [
        (
            "/api/history?operation=sclae",
            "operation",
            format!("operation must be one of {operations}, got \"sclae\""),
        ),
        (
            "/api/history?from=yesterday",
            "from",
            "from must be a date (2026-12-01) or an RFC 3339 time (2026-12-01T08:00:00Z, or with an offset), got \"yesterday\"".into(),
        ),
        (
            "/api/history?to=2026-13-40",
            "to",
            "to must be a date (2026-12-01) or an RFC 3339 time (2026-12-01T08:00:00Z, or with an offset), got \"2026-13-40\"".into(),
        ),
        (
            "/api/history?from=2026-12-02&to=2026-12-01",
            "to",
            "to must not be before from".into(),
        ),
        (
            "/api/history?after=not-a-cursor",
            "after",
            "after must be the next of an earlier page of the history".into(),
        ),
        (
            "/api/history?limit=0",
            "limit",
            "limit must be an integer in [1, 500], got \"0\"".into(),
        ),
        (
            "/api/history?who=a&who=b",
            "who",
            "who is given more than once".into(),
        ),
        (
            &long_who,
            "who",
            "who must be at most 512 characters".into(),
        ),
        (
            &long_endpoint,
            "endpoint",
            "endpoint must be at most 512 characters".into(),
        ),
        (
            "/api/history/export?format=xml",
            "format",
            "format must be jsonl or csv, got \"xml\"".into(),
        ),
        (
            "/api/history/export",
            "format",
            "format is required: jsonl or csv".into(),
        ),
    ];
    for (query, at, message) in cases {
        let (r, _) = env.call("", "GET", query, None, None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.text);
        assert_eq!(r.first_error(), (at.to_owned(), message), "{query}");
    }
}

#[tokio::test]
async fn the_audit_view_embedded() {
    audit_view(Env::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_view_dynamodb() {
    audit_view(Env::moto().await).await;
}

fn author(who: &str) -> Author {
    Author::new(who, "deploy", None)
}

/// What the store's audit read lists, as (endpoint, who).
async fn audited(store: &dyn Store) -> Vec<(String, Option<String>)> {
    let read = store
        .audit(&AuditFilter::default(), None::<&Position>, 100)
        .await
        .unwrap();
    read.items
        .into_iter()
        .map(|e| (e.endpoint, e.who))
        .collect()
}

fn record(name: &str, at: &str) -> gco_spec::Record {
    let text = format!(
        r#"{{"endpoint_name": "{name}", "desired_state": "running", "target_regions": ["us-east-1"], "namespace": "gco-inference", "spec": {{"image": "x"}}, "created_at": "{at}", "updated_at": "{at}"}}"#
    );
    gco_spec::Record::from_value(&gco_spec::json::parse(&text).unwrap()).unwrap()
}

#[tokio::test]
async fn an_embedded_store_from_before_the_index_is_indexed_at_open() {
    let dir = TempDir::new("audit-index");
    {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        for (i, who) in ["ada", "bob"].iter().enumerate() {
            let at = format!("2026-12-0{}T10:00:00.000000+00:00", i + 1);
            store
                .create(&Storable::of(record(&format!("e{i}"), &at)), &author(who))
                .await
                .unwrap();
        }
    }
    // As an older console left it: entries, and no index.
    {
        let db = redb::Database::create(dir.path().join("endpoints.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        let index = redb::TableDefinition::<(&str, &str), &str>::new("history_by_time");
        txn.delete_table(index).unwrap();
        txn.commit().unwrap();
    }
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(
        audited(&store).await,
        [
            ("e1".into(), Some("bob".into())),
            ("e0".into(), Some("ada".into()))
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_table_from_before_the_index_gets_it_with_its_entries() {
    let moto = Moto::start();
    let client = moto.client();
    // The history table as consoles before the audit view made it: its key
    // only, holding an entry and a sign-out.
    let key = |name: &str, kind| {
        aws_sdk_dynamodb::types::KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
            .unwrap()
    };
    let attr = |name: &str| {
        aws_sdk_dynamodb::types::AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(aws_sdk_dynamodb::types::ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    client
        .create_table()
        .table_name(HISTORY_TABLE)
        .key_schema(key("endpoint_name", aws_sdk_dynamodb::types::KeyType::Hash))
        .key_schema(key("change_id", aws_sdk_dynamodb::types::KeyType::Range))
        .attribute_definitions(attr("endpoint_name"))
        .attribute_definitions(attr("change_id"))
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let s = |v: &str| aws_sdk_dynamodb::types::AttributeValue::S(v.to_owned());
    client
        .put_item()
        .table_name(HISTORY_TABLE)
        .item("endpoint_name", s("old"))
        .item("change_id", s("2026-11-01T10:00:00.000000Z.00000001"))
        .item("at", s("2026-11-01T10:00:00.000000+00:00"))
        .item("operation", s("deploy"))
        .item("who", s("ada"))
        .item("after", s(r#"{"endpoint_name": "old"}"#))
        .send()
        .await
        .unwrap();
    let store = Arc::new(moto.store().await);
    store.sign_out("digest", u64::MAX / 2).await.unwrap();
    store
        .create(
            &Storable::of(record("new", "2026-12-01T10:00:00.000000+00:00")),
            &author("bob"),
        )
        .await
        .unwrap();
    assert_eq!(
        audited(store.as_ref()).await,
        [
            ("new".into(), Some("bob".into())),
            ("old".into(), Some("ada".into()))
        ]
    );
}

/// The days of the ids (`2026-12-DD...`) the store's audit read lists for
/// `filter`, page by page.
async fn ids(store: &dyn Store, filter: AuditFilter, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut below: Option<Position> = None;
    loop {
        let read = store.audit(&filter, below.as_ref(), limit).await.unwrap();
        assert!(read.items.len() <= limit);
        out.extend(read.items.into_iter().map(|e| e.id[8..10].to_owned()));
        match read.next {
            Some(next) => below = Some(next),
            None => return out,
        }
    }
}

/// dynalite holds to DynamoDB's rules where moto does not (a filter may
/// name no key of what is queried): every filter, read through the index
/// and through an endpoint's own entries, on entries written as the
/// console writes them, a sign-out among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_filter_reads_on_dynalite() {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    let dynalite = crate::common::Dynalite::start();
    let store = gco_console::store::DynamoStore::connect(&gco_console::store::DynamoConfig {
        table: "gco-inference-endpoints".into(),
        region: "us-east-1".into(),
        endpoint: Some(dynalite.endpoint()),
        history_table: Some(HISTORY_TABLE.into()),
    })
    .await;
    store.create_table().await.unwrap();
    let client = dynalite.client().await;
    for (n, (name, op, who)) in [
        ("chat-prod", "deploy", "ada"),
        ("chat-dev", "deploy", "bob"),
        ("chat-prod", "scale", "bob"),
        ("embed", "stop", "ada"),
    ]
    .into_iter()
    .enumerate()
    {
        let day = format!("2026-12-0{}T10:00:00.000000", n + 1);
        client
            .put_item()
            .table_name(HISTORY_TABLE)
            .item("endpoint_name", A::S(name.into()))
            .item("change_id", A::S(format!("{day}Z.0000000{n}")))
            .item("at", A::S(format!("{day}+00:00")))
            .item("operation", A::S(op.into()))
            .item("who", A::S(who.into()))
            .item("after", A::S(format!(r#"{{"endpoint_name": "{name}"}}"#)))
            .send()
            .await
            .unwrap();
    }
    store.sign_out("digest", u64::MAX / 2).await.unwrap();
    let all = AuditFilter::default();
    let day = |d: &str, end| gco_console::audit::id_bound(d, end);
    for (filter, want) in [
        (all.clone(), vec!["04", "03", "02", "01"]),
        (
            AuditFilter {
                who: Some("bob".into()),
                ..all.clone()
            },
            vec!["03", "02"],
        ),
        (
            AuditFilter {
                search: Some("chat".into()),
                ..all.clone()
            },
            vec!["03", "02", "01"],
        ),
        (
            AuditFilter {
                endpoint: Some("chat-prod".into()),
                ..all.clone()
            },
            vec!["03", "01"],
        ),
        (
            AuditFilter {
                endpoint: Some("chat-prod".into()),
                search: Some("prod".into()),
                operation: Some("scale".into()),
                who: Some("bob".into()),
                ..all.clone()
            },
            vec!["03"],
        ),
        (
            AuditFilter {
                operation: Some("deploy".into()),
                ..all.clone()
            },
            vec!["02", "01"],
        ),
        (
            AuditFilter {
                from_id: day("2026-12-02", false),
                to_id: day("2026-12-03", true),
                ..all.clone()
            },
            vec!["03", "02"],
        ),
    ] {
        for limit in [1, 10] {
            assert_eq!(
                ids(&store, filter.clone(), limit).await,
                want,
                "{filter:?} by {limit}"
            );
        }
    }
    // In order, newest first, and the sign-out never.
    let read = store.audit(&all, None, 10).await.unwrap();
    let days: Vec<&str> = read.items.iter().map(|e| &e.id[8..10]).collect();
    assert_eq!(days, ["04", "03", "02", "01"]);
}
