//! The DynamoDB store: GCO's own table and item layout, written with
//! conditional expressions so no change is lost or applied twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::error::{DisplayErrorContext, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConsumedCapacity, KeySchemaElement, KeyType,
    ReturnConsumedCapacity, ReturnValue, ScalarAttributeType, TableStatus,
};
use gco_spec::Record;

use super::attr::{from_item, to_item};
use super::shared_scan::SharedScan;
use super::update_expression::update_expression;
use super::{
    BoxFuture, Expected, Scan, Store, StoreError, Stored, Unreadable, read_item, storable,
};

/// Where the table is.
#[derive(Debug, Clone)]
pub struct DynamoConfig {
    pub table: String,
    /// The "global region" of the GCO deployment.
    pub region: String,
    /// A DynamoDB-compatible server (`http://127.0.0.1:8000`); `None` for AWS.
    pub endpoint: Option<String>,
}

pub struct DynamoStore {
    client: Client,
    table: String,
    /// Lists at the same time share a scan (see [`SharedScan`]).
    scans: SharedScan<Scan, StoreError>,
    /// Items at the last scan: how many segments the next one reads in.
    last_items: AtomicUsize,
}

/// A failed call, as the service must report it: DynamoDB applies a write
/// whole or not at all, so a client error (4xx: no such table, access
/// denied, a request it refuses) or a request never sent wrote nothing; a
/// server error, a timeout or a lost connection leaves it unknown.
fn failure<E: std::error::Error + 'static>(e: SdkError<E, HttpResponse>) -> StoreError {
    let detail = DisplayErrorContext(&e).to_string();
    let nothing_written = match &e {
        SdkError::ConstructionFailure(_) => true,
        SdkError::ServiceError(service) => service.raw().status().is_client_error(),
        _ => false,
    };
    if nothing_written {
        StoreError::Rejected(detail)
    } else {
        StoreError::Unavailable(detail)
    }
}

/// Every store call answers within [`OPERATION_TIMEOUT`]: a request waits
/// for at most one call (a change's read fails before its write is tried), so
/// a client gets its 503 within seconds when the table is unreachable or
/// hangs, instead of holding a connection (and a browser spinner) open. One
/// DynamoDB item operation or scan page takes milliseconds; the margins are
/// for slow networks.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(4);

fn timeouts() -> aws_config::timeout::TimeoutConfig {
    aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(1))
        .operation_attempt_timeout(Duration::from_secs(2))
        .operation_timeout(OPERATION_TIMEOUT)
        .build()
}

/// Three attempts with short backoff: enough for a dropped connection or a
/// throttled burst, not so long that a dead server keeps clients waiting
/// (the SDK's default backoff starts at 1 s and grows to 20 s).
fn retries() -> aws_config::retry::RetryConfig {
    aws_config::retry::RetryConfig::standard()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_millis(50))
        .with_max_backoff(Duration::from_millis(500))
}

impl DynamoStore {
    pub async fn connect(cfg: &DynamoConfig) -> DynamoStore {
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .region(Region::new(cfg.region.clone()))
            .timeout_config(timeouts())
            .retry_config(retries());
        if let Some(endpoint) = &cfg.endpoint {
            loader = loader.endpoint_url(endpoint);
            // Local servers accept any key; don't make users invent one.
            if std::env::var_os("AWS_ACCESS_KEY_ID").is_none()
                && std::env::var_os("AWS_PROFILE").is_none()
            {
                loader = loader.credentials_provider(Credentials::new(
                    "local",
                    "local",
                    None,
                    None,
                    "gco-console",
                ));
            }
        }
        let sdk = loader.load().await;
        DynamoStore {
            client: Client::new(&sdk),
            table: cfg.table.clone(),
            scans: SharedScan::default(),
            last_items: AtomicUsize::new(0),
        }
    }

    /// Creates the table (key `endpoint_name`, on-demand) unless it exists.
    pub async fn create_table(&self) -> Result<(), StoreError> {
        let built = (|| {
            Ok::<_, aws_sdk_dynamodb::error::BuildError>((
                AttributeDefinition::builder()
                    .attribute_name("endpoint_name")
                    .attribute_type(ScalarAttributeType::S)
                    .build()?,
                KeySchemaElement::builder()
                    .attribute_name("endpoint_name")
                    .key_type(KeyType::Hash)
                    .build()?,
            ))
        })();
        let (attr, key) = built.map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let result = self
            .client
            .create_table()
            .table_name(&self.table)
            .attribute_definitions(attr)
            .key_schema(key)
            .billing_mode(BillingMode::PayPerRequest)
            .send()
            .await;
        match result {
            Ok(_) => {}
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_in_use_exception()) => {}
            Err(e) => return Err(failure(e)),
        }
        self.wait_until_active().await
    }

    /// A new table takes writes only once it is ACTIVE.
    async fn wait_until_active(&self) -> Result<(), StoreError> {
        for _ in 0..300 {
            let out = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(failure)?;
            if out.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {} did not become active within 30 s",
            self.table
        )))
    }
}

impl Store for DynamoStore {
    fn create<'a>(&'a self, record: &'a Record) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let item = to_item(storable(record).as_object().expect("a record is an object"));
            let result = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(endpoint_name)")
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await;
            let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
            crate::metrics::dynamodb_call("PutItem", result.is_ok(), 0.0, capacity(units));
            match result {
                Ok(_) => Ok(Arc::new(Stored::of(DynamoStore::as_read(record)?))),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
                {
                    Err(StoreError::AlreadyExists)
                }
                Err(e) => Err(failure(e)),
            }
        })
    }

    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move {
            let out = self
                .client
                .get_item()
                .table_name(&self.table)
                .key("endpoint_name", AttributeValue::S(name.to_owned()))
                .consistent_read(true)
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await;
            let units = out.as_ref().ok().and_then(|o| o.consumed_capacity());
            crate::metrics::dynamodb_call("GetItem", out.is_ok(), capacity(units), 0.0);
            let out = out.map_err(failure)?;
            out.item()
                .map(|item| read_attributes(name, item).map_err(StoreError::Corrupt))
                .transpose()
        })
    }

    fn update<'a>(
        &'a self,
        record: &'a Record,
        expected: Expected<'a>,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let update = update_expression(&expected, record);
            let (names, mut values) = (update.names, update.values);
            let read = expected.read;
            // A record read without `updated_at` (an older writer's) is
            // read as "": the condition admits either.
            let mut condition = if read.updated_at.is_empty() {
                "attribute_exists(endpoint_name) AND (attribute_not_exists(updated_at) OR updated_at = :expected_at)"
            } else {
                "attribute_exists(endpoint_name) AND updated_at = :expected_at"
            }
            .to_owned();
            values.insert(
                ":expected_at".into(),
                AttributeValue::S(read.updated_at.clone()),
            );
            match &read.lifecycle_id {
                Some(id) => {
                    condition.push_str(" AND lifecycle_id = :lifecycle");
                    values.insert(":lifecycle".into(), AttributeValue::S(id.clone()));
                }
                None => condition.push_str(" AND attribute_not_exists(lifecycle_id)"),
            }
            if !expected.allow_deleted {
                condition.push_str(" AND desired_state <> :deleted");
                values.insert(":deleted".into(), AttributeValue::S("deleted".into()));
            }
            let result = self
                .client
                .update_item()
                .table_name(&self.table)
                .key(
                    "endpoint_name",
                    AttributeValue::S(record.endpoint_name.clone()),
                )
                .update_expression(update.text)
                .condition_expression(condition)
                .set_expression_attribute_names(Some(names))
                .set_expression_attribute_values(Some(values))
                // The item as written: untouched values as the next read
                // gives them, not as this service would have written them.
                .return_values(ReturnValue::AllNew)
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await;
            let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
            crate::metrics::dynamodb_call("UpdateItem", result.is_ok(), 0.0, capacity(units));
            match result {
                Ok(out) => {
                    let item = out.attributes.unwrap_or_default();
                    let record = read_attributes(&record.endpoint_name, &item)
                        .map_err(StoreError::Corrupt)?;
                    Ok(Arc::new(Stored::of(record)))
                }
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
                {
                    Err(StoreError::ConditionFailed)
                }
                Err(e) => Err(failure(e)),
            }
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>> {
        Box::pin(self.scans.run(|| self.scan()))
    }
}

impl DynamoStore {
    /// `record` as a read of the item it puts returns it: [`storable`], with
    /// the keys of every map sorted, as [`from_item`] gives them. The
    /// attributes come back in the record's own order (`read_item`).
    fn as_read(record: &Record) -> Result<Record, StoreError> {
        let mut out = gco_spec::json::Object::new();
        if let gco_spec::Value::Object(attributes) = storable(record) {
            for (name, attribute) in attributes.str_entries() {
                out.insert(&name.to_string_lossy(), maps_sorted(attribute));
            }
        }
        read_item(&record.endpoint_name, &gco_spec::Value::Object(out)).map_err(StoreError::Corrupt)
    }

    /// Every item, in as many parallel segments as the table's size at the
    /// last scan calls for, each page by page, strongly consistent (a list
    /// sees every write acknowledged before it was asked for).
    async fn scan(&self) -> Result<Scan, StoreError> {
        let items = self.last_items.load(Ordering::Relaxed);
        let segments = (items / ITEMS_PER_SEGMENT + 1).min(MAX_SEGMENTS) as i32;
        let mut reads = tokio::task::JoinSet::new();
        for segment in 0..segments {
            let (client, table) = (self.client.clone(), self.table.clone());
            reads.spawn(scan_segment(client, table, segment, segments));
        }
        let mut out = Scan::default();
        while let Some(read) = reads.join_next().await {
            let part = read.map_err(|e| StoreError::Unavailable(e.to_string()))??;
            out.records.extend(part.records);
            out.unreadable.extend(part.unreadable);
        }
        self.last_items
            .store(out.records.len() + out.unreadable.len(), Ordering::Relaxed);
        Ok(out)
    }
}

/// A parallel scan's segments: one per this many items, at most
/// [`MAX_SEGMENTS`] (a scan page is at most 1 MB, about 500 records).
const ITEMS_PER_SEGMENT: usize = 2_000;
const MAX_SEGMENTS: usize = 8;

/// One segment of a scan, page by page.
async fn scan_segment(
    client: Client,
    table: String,
    segment: i32,
    segments: i32,
) -> Result<Scan, StoreError> {
    let mut out = Scan::default();
    let mut start: Option<HashMap<String, AttributeValue>> = None;
    loop {
        let mut request = client
            .scan()
            .table_name(&table)
            .consistent_read(true)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .set_exclusive_start_key(start.take());
        if segments > 1 {
            request = request.segment(segment).total_segments(segments);
        }
        let page = request.send().await;
        let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
        crate::metrics::dynamodb_call("Scan", page.is_ok(), capacity(units), 0.0);
        let page = page.map_err(failure)?;
        for item in page.items() {
            let name = item
                .get("endpoint_name")
                .and_then(|n| n.as_s().ok())
                .map_or("", String::as_str);
            match read_attributes(name, item) {
                Ok(record) => out.records.push(Arc::new(Stored::of(record))),
                Err(unreadable) => out.unreadable.push(unreadable),
            }
        }
        match page.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => return Ok(out),
        }
    }
}

/// The capacity units a call consumed, as the table said (0 when not).
fn capacity(consumed: Option<&ConsumedCapacity>) -> f64 {
    consumed.and_then(|c| c.capacity_units()).unwrap_or(0.0)
}

/// The record an item holds, or why it holds none.
fn read_attributes(
    name: &str,
    item: &HashMap<String, AttributeValue>,
) -> Result<Record, Unreadable> {
    let object = from_item(item).map_err(|binary| {
        Unreadable::new(
            name,
            &binary.path,
            "a binary value, which GCO does not write and the console could not keep",
        )
    })?;
    read_item(name, &gco_spec::Value::Object(object))
}

/// `value` with the keys of every map in it sorted, as [`from_item`] reads
/// them back.
fn maps_sorted(value: &gco_spec::Value) -> gco_spec::Value {
    use gco_spec::Value;
    match value {
        Value::List(items) => Value::List(items.iter().map(maps_sorted).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(String, &Value)> = map
                .str_entries()
                .map(|(k, v)| (k.to_string_lossy(), v))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = gco_spec::json::Object::new();
            for (k, v) in entries {
                out.insert(&k, maps_sorted(v));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}
