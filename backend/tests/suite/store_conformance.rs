//! One conformance suite, run against the embedded store and against a real
//! DynamoDB-compatible server (dynalite).

use crate::common;

use std::sync::Arc;

use crate::common::{Dynalite, Moto, TempDir, canonical};
use gco_api::HistoryEntry;
use gco_console::service::ServiceError;
use gco_console::store::listing::{Cursor, Filter, Listing, Page, select};
use gco_console::store::{
    Expected, MAX_ITEM_BYTES, Span, Storable, Store, StoreError, Stored, Unreadable, item_bytes,
};
use gco_spec::json::{Value, parse};
use gco_spec::{DeployContext, DesiredState, Record, new_record, plan_deploy};

/// A record as deploy makes it, with `extra_spec` (members of the spec,
/// after a comma) put in as another program may have written them: values
/// a deploy refuses, such as integers wider than a DynamoDB number,
/// included.
fn record(name: &str, extra_spec: &str) -> Record {
    let request = format!(
        r#"{{"endpoint_name": "{name}", "mooncake_mode": "both", "prefill_replicas": 2, "decode_replicas": 3,
            "mooncake_store": {{"global_segment_size": 8589934592}}, "labels": {{"team": "ml"}}}}"#
    );
    let regions = vec!["us-east-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&regions),
        ..DeployContext::default()
    };
    let check = plan_deploy(&parse(&request).unwrap(), &ctx);
    let d = check
        .deployment
        .unwrap_or_else(|| panic!("{:?}", check.report));
    let mut r = new_record(d, "2026-12-01T00:00:00.000001+00:00", &mut || {
        "ab".repeat(32)
    });
    let extra = parse(&format!(
        "{{{}}}",
        extra_spec.trim_start().trim_start_matches(',')
    ))
    .unwrap();
    for (key, value) in extra.as_object().unwrap().str_entries() {
        r.spec.insert(&key.to_string_lossy(), value.clone());
    }
    r
}

fn changed(r: &Record, updated_at: &str) -> Record {
    let mut next = r.clone();
    next.updated_at = updated_at.to_owned();
    next.desired_state = DesiredState::Running;
    next.target_regions.push("eu-west-1".into());
    next.spec.insert("replicas", Value::int(7));
    next
}

/// Every stored history entry of `name`, newest first.
async fn entries(store: &dyn Store, name: &str) -> Vec<HistoryEntry> {
    store.history(name, Span::Older(None), 1000).await.unwrap()
}

/// A record's content as an entry holds it: without what the monitors write.
fn content_of(stored: &Stored) -> String {
    let mut v = stored.record.to_value();
    let o = v.as_object_mut().unwrap();
    o.remove("region_status");
    o.remove("updated_at");
    canonical(&v)
}

/// With history recorded: `name` has `count` entries, the newest one
/// left what `now` holds, and each one's `before` is what the one before
/// it left (none wrote without its entry).
async fn assert_history(store: &dyn Store, name: &str, count: usize, now: &Stored) {
    if !store.records_history() {
        assert!(entries(store, name).await.is_empty());
        return;
    }
    let entries = entries(store, name).await;
    assert_eq!(entries.len(), count, "{name}: {entries:#?}");
    let newest = &entries[0];
    assert_eq!(canonical(newest.after.as_ref().unwrap()), content_of(now));
    assert_eq!(newest.at, now.record.updated_at);
    assert_eq!(
        (newest.who.as_deref(), newest.request_id.as_deref()),
        (Some("local"), Some("req-test"))
    );
    for pair in entries.windows(2) {
        let (newer, older) = (&pair[0], &pair[1]);
        assert!(newer.id > older.id, "ids sort by time: {entries:#?}");
        assert_eq!(
            newer.before.as_ref().map(canonical),
            older.after.as_ref().map(canonical)
        );
    }
    assert_eq!(
        entries.last().unwrap().before,
        None,
        "a create has no before"
    );
    // Oldest first from an id on, and below an id.
    let oldest = &entries[count - 1];
    let from = store
        .history(name, Span::From(&oldest.id), 2)
        .await
        .unwrap();
    let ids = |e: &[HistoryEntry]| e.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    let mut expected = ids(&entries);
    expected.reverse();
    expected.truncate(2);
    assert_eq!(ids(&from), expected);
    let below = store
        .history(name, Span::Older(Some(&newest.id)), 1000)
        .await
        .unwrap();
    assert_eq!(ids(&below), ids(&entries[1..]));
}

async fn conformance(store: Arc<dyn Store>) {
    // Create, read back the same record.
    let r = record(
        "alpha",
        r#", "env": {"Z_LAST": "z", "A_FIRST": "a"}, "autoscaling": {"target": 0.5, "widest": 99999999999999999999999999999999999999,
            "wider": -100000000000000000000000000000000000000}"#,
    );
    let created = store
        .create(&Storable::of(r.clone()), &common::author())
        .await
        .unwrap();
    let back = store.get("alpha").await.unwrap().expect("created record");
    let mut expected = r.to_value();
    // Floats are stored as strings, as GCO stores them, and so are integers
    // wider than a DynamoDB number's 38 digits.
    expected
        .as_object_mut()
        .unwrap()
        .get_mut("spec")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert(
            "autoscaling",
            parse(
                r#"{"target": "0.5", "widest": 99999999999999999999999999999999999999,
                    "wider": "-100000000000000000000000000000000000000"}"#,
            )
            .unwrap(),
        );
    assert_eq!(canonical(&back.to_value()), canonical(&expected));
    // What a write answers is what a read returns, byte for byte: map keys
    // in the order this store gives them back.
    assert_eq!(created, store.get_stored("alpha").await.unwrap().unwrap());
    assert_history(&*store, "alpha", 1, &created).await;
    let store_block = back
        .spec
        .get("mooncake")
        .unwrap()
        .as_object()
        .unwrap()
        .get("store")
        .unwrap();
    assert_eq!(
        store_block.as_object().unwrap().get("global_segment_size"),
        Some(&Value::str("8589934592"))
    );

    // A second create with the same name changes nothing.
    let mut dup = record("alpha", "");
    dup.namespace = "other".into();
    assert_eq!(
        store
            .create(&Storable::of(dup.clone()), &common::author())
            .await,
        Err(StoreError::AlreadyExists)
    );
    assert_eq!(
        store.get("alpha").await.unwrap().unwrap().namespace,
        "gco-inference"
    );
    assert_eq!(store.get("missing").await.unwrap(), None);

    // A conditional update writes the mutable attributes only.
    let mut next = changed(&back, "2026-12-01T00:00:01.000000+00:00");
    next.region_status
        .insert("us-east-1", parse(r#"{"state": "bogus"}"#).unwrap());
    next.namespace = "ignored".into();
    let written = store
        .update(
            &Storable::of(next.clone()),
            Expected::of(&back, false),
            &common::author(),
        )
        .await
        .unwrap();
    assert_eq!(written, store.get_stored("alpha").await.unwrap().unwrap());
    assert_history(&*store, "alpha", 2, &written).await;
    let after = store.get("alpha").await.unwrap().unwrap();
    assert_eq!(after.desired_state, DesiredState::Running);
    assert_eq!(after.target_regions, ["us-east-1", "eu-west-1"]);
    assert_eq!(after.spec.get("replicas"), Some(&Value::int(7)));
    assert_eq!(after.updated_at, "2026-12-01T00:00:01.000000+00:00");
    assert!(
        after.region_status.is_empty(),
        "region_status belongs to the monitors"
    );
    assert_eq!(after.namespace, "gco-inference");

    // Stale version, wrong lifecycle, missing record: refused, nothing written.
    let stale = changed(&back, "2026-12-01T00:00:02.000000+00:00");
    assert_eq!(
        store
            .update(
                &Storable::of(stale.clone()),
                Expected::of(&back, false),
                &common::author()
            )
            .await,
        Err(StoreError::ConditionFailed)
    );
    let mut other_life = after.clone();
    other_life.lifecycle_id = Some("cd".repeat(32));
    assert_eq!(
        store
            .update(
                &Storable::of(changed(&after, "2026-12-01T00:00:03.000000+00:00")),
                Expected::of(&other_life, false),
                &common::author(),
            )
            .await,
        Err(StoreError::ConditionFailed)
    );
    let ghost = record("ghost", "");
    assert_eq!(
        store
            .update(
                &Storable::of(ghost.clone()),
                Expected::of(&ghost, false),
                &common::author()
            )
            .await,
        Err(StoreError::ConditionFailed)
    );
    assert_eq!(store.get("ghost").await.unwrap(), None);
    assert_eq!(
        canonical(&store.get("alpha").await.unwrap().unwrap().to_value()),
        canonical(&after.to_value())
    );
    // A refused write made no entry.
    assert_history(&*store, "alpha", 2, &written).await;
    assert!(entries(&*store, "ghost").await.is_empty());

    // Deleted records take only a delete.
    let mut deleted = after.clone();
    deleted.desired_state = DesiredState::Deleted;
    deleted.updated_at = "2026-12-01T00:00:04.000000+00:00".into();
    let written = store
        .update(
            &Storable::of(deleted.clone()),
            Expected::of(&after, true),
            &common::author(),
        )
        .await
        .unwrap();
    assert_history(&*store, "alpha", 3, &written).await;
    let mut revived = deleted.clone();
    revived.desired_state = DesiredState::Running;
    revived.updated_at = "2026-12-01T00:00:05.000000+00:00".into();
    assert_eq!(
        store
            .update(
                &Storable::of(revived.clone()),
                Expected::of(&deleted, false),
                &common::author()
            )
            .await,
        Err(StoreError::ConditionFailed)
    );

    // Lists see every record.
    for i in 0..25 {
        let mut bulk = record(&format!("bulk-{i:02}"), "");
        // Some share a time (then the name orders them), some do not.
        bulk.created_at = format!("2026-12-01T00:00:0{}.000001+00:00", i % 4);
        store
            .create(&Storable::of(bulk.clone()), &common::author())
            .await
            .unwrap();
    }
    let listed = store.list().await.unwrap().records;
    let mut names: Vec<String> = listed
        .iter()
        .map(|s| s.record.endpoint_name.clone())
        .collect();
    names.sort();
    assert_eq!(names.len(), 26);
    assert_eq!(names[0], "alpha");
    assert_eq!(names[25], "bulk-24");
    // Each listed record, and its JSON, is what a read of it answers (the
    // list sends that JSON on as it is).
    for listed in &listed {
        let read = store
            .get_stored(&listed.record.endpoint_name)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((&listed.record, &listed.json), (&read.record, &read.json));
        assert_eq!(parse(&listed.json).unwrap(), listed.record.to_value());
    }

    // Each page, of each filter, from each place, is the one `select`
    // picks from the whole list (which is how a store without an index
    // answers): a store's index gives the same pages.
    let filters = [
        Filter::default(),
        Filter {
            state: Some(DesiredState::Deleted),
            region: None,
        },
        Filter {
            state: None,
            region: Some("eu-west-1"),
        },
    ];
    let every = select(listed.clone(), &Filter::default(), &Page::default());
    let places = std::iter::once(None).chain(
        every
            .records
            .iter()
            .step_by(3)
            .map(|s| Some(Cursor::of(&s.record))),
    );
    for (filter, after) in filters
        .iter()
        .flat_map(|f| places.clone().map(move |a| (f, a)))
    {
        for limit in [None, Some(1), Some(4), Some(26)] {
            let page = Page {
                after: after.clone(),
                limit,
            };
            let paged = store.list_page(filter, &page).await.unwrap();
            let picked = select(listed.clone(), filter, &page);
            let names = |l: &Listing| -> Vec<String> {
                l.records
                    .iter()
                    .map(|s| s.record.endpoint_name.clone())
                    .collect()
            };
            assert_eq!(names(&paged), names(&picked), "{filter:?} {page:?}");
            assert_eq!(paged.next, picked.next, "{filter:?} {page:?}");
        }
    }
}

async fn fifty_parallel_region_adds(store: Arc<dyn Store>) {
    let service = Arc::new(common::service(Arc::clone(&store)));
    let request =
        parse(r#"{"endpoint_name": "busy", "image": "img:1", "target_regions": ["us-east-1"]}"#)
            .unwrap();
    service.deploy(request, &common::actor()).await.unwrap();
    let regions: Vec<String> = ["us", "eu", "ap", "sa", "ca"]
        .iter()
        .flat_map(|area| (1..=10).map(move |n| format!("{area}-test-{n}")))
        .collect();
    // Every other one with `If-Match: *`, which any version matches. An add
    // that loses its conditional write to another add is GCO's conflict
    // (nothing written); the user retries it after reading status.
    let tasks: Vec<_> = regions
        .iter()
        .enumerate()
        .map(|(i, region)| {
            let service = Arc::clone(&service);
            let change = gco_spec::Change::AddRegion {
                region: Value::str(region),
            };
            let if_match = (i % 2 == 0).then_some("*");
            tokio::spawn(async move {
                service
                    .change("busy", change, if_match, &common::actor())
                    .await
                    .map(|_| ())
            })
        })
        .collect();
    let mut retry = Vec::new();
    for (t, region) in tasks.into_iter().zip(&regions) {
        match t.await.unwrap() {
            Ok(()) => {}
            Err(ServiceError::Busy {
                endpoint,
                operation,
            }) => {
                assert_eq!(
                    (endpoint.as_str(), operation),
                    ("busy", "added to a Region")
                );
                retry.push(region.clone());
            }
            Err(e) => panic!("{region}: {e:?}"),
        }
    }
    for region in retry {
        let change = gco_spec::Change::AddRegion {
            region: Value::str(&region),
        };
        service
            .change("busy", change, None, &common::actor())
            .await
            .expect("a retry alone lands");
    }
    let stored = service.get_stored("busy").await.unwrap();
    let record = &stored.record;
    assert_eq!(record.target_regions.len(), 51);
    // The deploy and each add: one entry each, none for a lost write.
    if store.records_history() {
        let entries = entries(&*store, "busy").await;
        assert_eq!(entries.len(), 51);
        assert_eq!(entries.last().unwrap().operation, "deploy");
        assert!(entries[..50].iter().all(|e| e.operation == "add-region"));
    }
    for region in &regions {
        assert!(record.target_regions.contains(region), "{region} lost");
        assert!(record.cleanup_regions.as_ref().unwrap().contains(region));
        assert!(
            record
                .region_generations
                .as_ref()
                .unwrap()
                .get(region)
                .is_some()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_store_conforms() {
    let dir = TempDir::new("conformance");
    conformance(common::embedded(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamodb_store_conforms() {
    let dynalite = Dynalite::start();
    conformance(Arc::new(dynalite.store().await)).await;
}

/// DynamoDB with history: moto's server, which has TransactWriteItems.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamodb_store_with_history_conforms() {
    let moto = Moto::start();
    conformance(Arc::new(moto.store().await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_store_without_history_conforms() {
    let dir = TempDir::new("conformance-off");
    let store = gco_console::store::EmbeddedStore::open_with(dir.path(), false).unwrap();
    conformance(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamodb_with_history_parallel_region_adds_conflict_or_land() {
    let moto = Moto::start();
    fifty_parallel_region_adds(Arc::new(moto.store().await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_parallel_region_adds_conflict_or_land() {
    let dir = TempDir::new("parallel");
    fifty_parallel_region_adds(common::embedded(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamodb_parallel_region_adds_conflict_or_land() {
    let dynalite = Dynalite::start();
    fifty_parallel_region_adds(Arc::new(dynalite.store().await)).await;
}

/// The size the service refuses beyond is the table's own count: a record
/// of exactly the limit is kept by dynalite, one a byte larger is refused.
/// Numbers of every shape count as dynalite counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_item_limit_is_counted_as_the_table_counts_it() {
    let dynalite = Dynalite::start();
    let store = dynalite.store().await;
    let numbers = r#", "autoscaling": {"enabled": false, "n": [0, 1, -1, 7, 10, 12, -12, 100, 120,
        1200, -1200, 101, 1010, 99999999999, -123456789012345678901234567890,
        10000000000000000000000000000000000000, 123456789012345678901234567890123456789012]}"#;
    let padded = |name: &str, pad: usize| {
        let mut r = record(name, numbers);
        r.labels.insert("pad", Value::from("p".repeat(pad)));
        r
    };
    let base = item_bytes(&padded("sized-a", 0));
    let exact = padded("sized-a", MAX_ITEM_BYTES - base);
    assert_eq!(item_bytes(&exact), MAX_ITEM_BYTES);
    store
        .create(&Storable::of(exact.clone()), &common::author())
        .await
        .expect("an item of exactly the limit is kept");
    let over = padded("sized-b", MAX_ITEM_BYTES - base + 1);
    match store
        .create(&Storable::of(over.clone()), &common::author())
        .await
    {
        Err(StoreError::Rejected(e)) => assert!(e.contains("Item size"), "{e}"),
        other => panic!("an item a byte over the limit: {other:?}"),
    }
    assert_eq!(store.get("sized-b").await.unwrap(), None);
}

#[tokio::test]
async fn embedded_store_survives_reopen() {
    let dir = TempDir::new("reopen");
    let r = record("keep", "");
    {
        let store = common::embedded(&dir);
        store
            .create(&Storable::of(r.clone()), &common::author())
            .await
            .unwrap();
    }
    let store = common::embedded(&dir);
    assert_eq!(store.get("keep").await.unwrap(), Some(r.clone()));
    let listed = store.list().await.unwrap().records;
    assert_eq!(
        listed.len(),
        1,
        "the list after a restart holds the stored record"
    );
    assert_eq!(listed[0].record, r);
}

/// Items another writer put in the table that are no record this service
/// reads (`bad` and `odd`, beside the record `good`): lists name them, on
/// the first page, instead of failing whole or passing them over; a read
/// of one is refused. `expected` is what the store says of each.
async fn lists_report_unreadable_items(store: Arc<dyn Store>, expected: &[Unreadable]) {
    assert!(store.get("good").await.unwrap().is_some());
    let scan = store.list().await.unwrap();
    let names: Vec<&str> = scan
        .records
        .iter()
        .map(|s| s.record.endpoint_name.as_str())
        .collect();
    assert_eq!(names, ["good"]);
    let mut unreadable = scan.unreadable.clone();
    unreadable.sort_by(|a, b| a.endpoint_name.cmp(&b.endpoint_name));
    assert_eq!(unreadable, expected);
    let filter = Filter {
        state: Some(DesiredState::Running),
        region: None,
    };
    let first = Page {
        after: None,
        limit: Some(1),
    };
    let listing = store.list_page(&filter, &first).await.unwrap();
    assert!(listing.records.is_empty(), "good is deploying");
    assert_eq!(
        listing.unreadable.len(),
        expected.len(),
        "whatever the filter"
    );
    let after = Page {
        after: Some(Cursor::at("2030-01-01T00:00:00+00:00", "a")),
        limit: Some(1),
    };
    let listing = store.list_page(&Filter::default(), &after).await.unwrap();
    assert_eq!(listing.records.len(), 1);
    assert!(
        listing.unreadable.is_empty(),
        "reported once, on the first page"
    );
    for u in expected {
        let name = &u.endpoint_name;
        assert!(
            matches!(store.get(name).await, Err(StoreError::Corrupt(_))),
            "{name}"
        );
    }
}

fn unreadable(name: &str, path: &str, message: &str) -> Unreadable {
    Unreadable {
        endpoint_name: name.into(),
        path: path.into(),
        message: message.into(),
    }
}

#[tokio::test]
async fn embedded_list_reports_items_it_cannot_read() {
    let dir = TempDir::new("corrupt");
    let good = record("good", "");
    common::embedded(&dir)
        .create(&Storable::of(good.clone()), &common::author())
        .await
        .unwrap();
    {
        // Another program wrote what this one cannot read.
        let mut odd = good.to_value();
        odd.as_object_mut()
            .unwrap()
            .insert("desired_state", Value::str("paused"));
        odd.as_object_mut()
            .unwrap()
            .insert("endpoint_name", Value::str("odd"));
        let table = redb::TableDefinition::<&str, &str>::new("endpoints");
        let db = redb::Database::create(dir.path().join("endpoints.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        let mut t = txn.open_table(table).unwrap();
        t.insert("bad", "{not json").unwrap();
        t.insert("odd", odd.to_json().as_str()).unwrap();
        drop(t);
        txn.commit().unwrap();
    }
    let store = common::embedded(&dir);
    let bad = store.list().await.unwrap().unreadable[0].message.clone();
    assert!(bad.starts_with("the stored text is not JSON: "), "{bad}");
    lists_report_unreadable_items(
        store,
        &[
            unreadable("bad", "", &bad),
            unreadable("odd", "desired_state", ODD_STATE),
        ],
    )
    .await;
}

/// Writes `item` as another program would, past the store.
async fn put_raw(
    client: &aws_sdk_dynamodb::Client,
    item: impl IntoIterator<Item = (&str, aws_sdk_dynamodb::types::AttributeValue)>,
) {
    client
        .put_item()
        .table_name("gco-inference-endpoints")
        .set_item(Some(
            item.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        ))
        .send()
        .await
        .unwrap();
}

/// What the record reader says of a state it does not know.
const ODD_STATE: &str = "unknown state 'paused'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_list_reports_items_it_cannot_read() {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    let dynalite = Dynalite::start();
    let store = dynalite.store().await;
    store
        .create(&Storable::of(record("good", "")), &common::author())
        .await
        .unwrap();
    // Another writer's items: a state this service does not know, and
    // regions that are no list.
    let client = dynalite.client().await;
    for item in [
        vec![
            ("endpoint_name", A::S("odd".into())),
            ("desired_state", A::S("paused".into())),
            ("target_regions", A::L(vec![])),
            ("namespace", A::S("gco-inference".into())),
            ("spec", A::M(Default::default())),
            ("created_at", A::S("2026-12-01T00:00:00+00:00".into())),
            ("updated_at", A::S("2026-12-01T00:00:00+00:00".into())),
        ],
        vec![
            ("endpoint_name", A::S("bad".into())),
            ("target_regions", A::S("us-east-1".into())),
        ],
        vec![
            ("endpoint_name", A::S("blob".into())),
            (
                "spec",
                A::M([("key".to_owned(), A::B(vec![0, 1].into()))].into()),
            ),
        ],
    ] {
        put_raw(&client, item).await;
    }
    lists_report_unreadable_items(
        Arc::new(store),
        &[
            unreadable("bad", "target_regions", "must be a list of strings"),
            unreadable(
                "blob",
                "spec.key",
                "a binary value, which GCO does not write and the console could not keep",
            ),
            unreadable("odd", "desired_state", ODD_STATE),
        ],
    )
    .await;
}

/// An item an older GCO (or another tool) wrote: no `updated_at`,
/// `lifecycle_id`, `cleanup_regions` or `region_generations`, and numbers in
/// forms the console reads but would not write the same. A change writes
/// what it changes and nothing else: the monitors still see a record to
/// migrate, and the other writer's values stay as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_changes_write_only_what_they_change() {
    let dynalite = Dynalite::start();
    changes_write_only_what_they_change(dynalite.store().await, dynalite.client().await).await;
}

/// With the history: the update goes in a transaction, which returns no
/// item, and the answer (made from the record read and the update's edits)
/// is still the next read, the other writer's N still a number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_with_history_changes_write_only_what_they_change() {
    let moto = Moto::start();
    changes_write_only_what_they_change(moto.store().await, moto.client()).await;
}

async fn changes_write_only_what_they_change(
    store: gco_console::store::DynamoStore,
    client: aws_sdk_dynamodb::Client,
) {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    let spec = A::M(
        [
            ("image".to_owned(), A::S("nginx".into())),
            ("replicas".to_owned(), A::N("2.5".into())),
            ("ports".to_owned(), A::Ns(vec!["80".into(), "8.5".into()])),
        ]
        .into(),
    );
    let item = [
        ("endpoint_name", A::S("legacy".into())),
        ("desired_state", A::S("running".into())),
        ("target_regions", A::L(vec![A::S("us-east-1".into())])),
        ("namespace", A::S("gco-inference".into())),
        ("spec", spec.clone()),
        (
            "created_at",
            A::S("2026-01-01T00:00:00.000000+00:00".into()),
        ),
    ];
    let stored = || async {
        client
            .get_item()
            .table_name("gco-inference-endpoints")
            .key("endpoint_name", A::S("legacy".into()))
            .send()
            .await
            .unwrap()
            .item
            .unwrap()
    };
    put_raw(&client, item).await;
    let read = store.get("legacy").await.unwrap().unwrap();
    assert_eq!(read.updated_at, "");
    let mut stopped = read.clone();
    stopped.desired_state = DesiredState::Stopped;
    stopped.updated_at = "2026-12-01T00:00:00.000001+00:00".into();
    stopped.target_regions.push("eu-west-1".into());
    let written = store
        .update(
            &Storable::of(stopped.clone()),
            Expected::of(&read, false),
            &common::author(),
        )
        .await
        .expect("an item without updated_at can be changed");
    let after = stored().await;
    assert_eq!(after["desired_state"], A::S("stopped".into()));
    assert_eq!(after["spec"], spec, "an unchanged spec is not rewritten");
    // The answer is the next read, the number stored as N still a number.
    assert_eq!(written, store.get_stored("legacy").await.unwrap().unwrap());
    assert_eq!(
        written.record.spec.get("replicas"),
        Some(&Value::Float(2.5))
    );

    // A change inside the spec writes the values it changed, at their
    // paths, as GCO's CLI does: the N and NS beside them stay as stored.
    let stopped_read = written.record.clone();
    let mut renamed = stopped_read.clone();
    renamed.spec.insert("image", Value::str("nginx:2"));
    renamed.updated_at = "2026-12-01T00:00:00.000002+00:00".into();
    let written = store
        .update(
            &Storable::of(renamed.clone()),
            Expected::of(&stopped_read, false),
            &common::author(),
        )
        .await
        .unwrap();
    let A::M(after_spec) = &stored().await["spec"] else {
        panic!("spec is a map")
    };
    let A::M(before_spec) = &spec else {
        unreachable!()
    };
    assert_eq!(after_spec["image"], A::S("nginx:2".into()));
    assert_eq!(after_spec["replicas"], before_spec["replicas"]);
    assert_eq!(after_spec["ports"], before_spec["ports"]);
    assert_eq!(written, store.get_stored("legacy").await.unwrap().unwrap());
    for absent in ["lifecycle_id", "cleanup_regions", "region_generations"] {
        assert!(
            !after.contains_key(absent),
            "{absent} was written: {after:?}"
        );
    }
    // The item has an updated_at now: a change made to the old read loses.
    assert_eq!(
        store
            .update(
                &Storable::of(stopped.clone()),
                Expected::of(&read, false),
                &common::author()
            )
            .await,
        Err(StoreError::ConditionFailed)
    );
}

/// A call DynamoDB answers with a client error (here: no such table) wrote
/// nothing, and is reported so: not as a write that may have landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_refusals_are_told_from_unknown_outcomes() {
    use gco_console::service::ServiceError;
    use gco_console::store::{DynamoConfig, DynamoStore};
    let dynalite = Dynalite::start();
    let missing = DynamoStore::connect(&DynamoConfig {
        table: "no-such-table".into(),
        region: "us-east-1".into(),
        endpoint: Some(dynalite.endpoint()),
        history_table: None,
    })
    .await;
    let refused = missing
        .create(&Storable::of(record("web", "")), &common::author())
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Rejected(e)) if e.contains("ResourceNotFoundException")),
        "{refused:?}"
    );
    let service = common::service(Arc::new(missing));
    let request = parse(r#"{"endpoint_name": "web", "image": "img:1"}"#).unwrap();
    assert!(matches!(
        service.deploy(request, &common::actor()).await,
        Err(ServiceError::Unavailable(_))
    ));
    // A server that is gone may have applied a write before it went.
    let store = dynalite.store().await;
    drop(dynalite);
    assert!(matches!(
        store
            .create(&Storable::of(record("web", "")), &common::author())
            .await,
        Err(StoreError::Unavailable(_))
    ));
}
