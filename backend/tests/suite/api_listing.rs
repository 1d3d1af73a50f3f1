//! Listing endpoints through the whole HTTP application on the embedded
//! store: order, filters, pages, and stored items that are no record.

use axum::http::StatusCode;

use crate::common::TempDir;
use crate::common::app::{Api, Names, Reply};
use gco_console::auth::Access;
use gco_spec::json::Value;

/// `pd` (split, in the deployed regions), then `web` (plain, in ap-south-1).
async fn two_endpoints() -> Api {
    let api = Api::new();
    api.deploy_split("pd").await;
    api.post(
        "/api/endpoints",
        r#"{"endpoint_name": "web", "image": "x", "target_regions": ["ap-south-1"]}"#,
    )
    .await;
    api
}

#[tokio::test]
async fn lists_are_newest_first_and_filter_by_region_and_state() {
    let api = two_endpoints().await;
    let names = |r: &Reply| r.get("endpoints").as_list_names();
    assert_eq!(
        names(&api.get("/api/endpoints").await),
        ["web", "pd"],
        "newest first"
    );
    assert_eq!(
        names(&api.get("/api/endpoints?region=ap-south-1").await),
        ["web"]
    );
    assert_eq!(
        names(&api.get("/api/endpoints?desired_state=running").await),
        Vec::<String>::new()
    );
    let r = api.get("/api/endpoints?desired_state=bogus").await;
    assert_eq!(
        (r.status, r.str("errors.0.path").as_str()),
        (StatusCode::BAD_REQUEST, "desired_state")
    );
    let r = api
        .get("/api/endpoints?desired_state=bogus&desired_state=running")
        .await;
    assert_eq!(
        (r.status, r.str("errors.0.message").as_str()),
        (
            StatusCode::BAD_REQUEST,
            "desired_state is given more than once"
        )
    );

    // Other parameters are ignored, repeated or not.
    let r = api.get("/api/endpoints?foo=1&foo=2&=&&=").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn lists_page_on_with_next_until_it_is_null() {
    let api = two_endpoints().await;
    let names = |r: &Reply| r.get("endpoints").as_list_names();
    // Pages: `next` leads on until it is null; without a limit there is none.
    assert_eq!(api.get("/api/endpoints").await.get("next"), Value::Null);
    let first = api.get("/api/endpoints?limit=1").await;
    assert_eq!(names(&first), ["web"]);
    let next = first.str("next");
    let query = format!("/api/endpoints?limit=1&after={}", next.replace('+', "%2B"));
    let second = api.get(&query).await;
    assert_eq!(
        (second.status, names(&second)),
        (StatusCode::OK, vec!["pd".to_owned()])
    );
    // Pasted unencoded, its `+` reads as a space: the same page.
    let pasted = api
        .get(&format!("/api/endpoints?limit=1&after={next}"))
        .await;
    assert_eq!(pasted.body, second.body);
    assert_eq!(second.get("next"), Value::Null, "pd is the last record");
    assert_eq!(
        names(&api.get("/api/endpoints?limit=1000").await),
        ["web", "pd"]
    );
    for (query, path, message) in [
        (
            "limit=0",
            "limit",
            r#"limit must be an integer in [1, 1000], got "0""#,
        ),
        (
            "limit=1001",
            "limit",
            r#"limit must be an integer in [1, 1000], got "1001""#,
        ),
        (
            "limit=ten",
            "limit",
            r#"limit must be an integer in [1, 1000], got "ten""#,
        ),
        (
            "after=web",
            "after",
            "after must be the next of an earlier page",
        ),
    ] {
        let r = api.get(&format!("/api/endpoints?{query}")).await;
        assert_eq!(
            (r.status, r.first_error()),
            (
                StatusCode::BAD_REQUEST,
                (path.to_owned(), message.to_owned())
            ),
            "{query}"
        );
    }
}

/// An item another program stored that is no record (a state this service
/// does not know): lists name it rather than fail or pass it over, and a
/// read of it is refused.
#[tokio::test]
async fn lists_name_stored_items_that_are_no_record() {
    let dir = TempDir::new("api-unreadable");
    {
        let table = redb::TableDefinition::<&str, &str>::new("endpoints");
        let db = redb::Database::create(dir.path().join("endpoints.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(table)
            .unwrap()
            .insert(
                "odd",
                r#"{"endpoint_name": "odd", "desired_state": "paused"}"#,
            )
            .unwrap();
        txn.commit().unwrap();
    }
    let api = Api::over(dir, Access::loopback(None));
    api.deploy_split("pd").await;
    let odd = r#"[{"endpoint_name": "odd", "path": "desired_state", "message": "unknown state 'paused'"}]"#;
    let r = api.get("/api/endpoints").await;
    assert_eq!(
        (
            r.get("endpoints").as_list_names(),
            r.get("unreadable").to_json()
        ),
        (vec!["pd".to_owned()], odd.to_owned())
    );
    let r = api
        .get("/api/endpoints?limit=1&desired_state=running")
        .await;
    assert_eq!(
        (
            r.get("endpoints").as_list_names(),
            r.get("unreadable").to_json()
        ),
        (vec![], odd.to_owned())
    );
    let r = api.get("/api/endpoints/odd").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the stored endpoint 'odd' could not be read"
        )
    );
    assert_eq!(
        r.first_error(),
        ("desired_state".into(), r#"unknown state 'paused'"#.into())
    );
    let r = api.send("POST", "/api/endpoints/odd/stop", None, &[]).await;
    assert_eq!(
        (r.status, r.first_error().0.as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, "desired_state")
    );
    let r = api.get("/api/endpoints/pd").await;
    assert_eq!(r.status, StatusCode::OK);
}
