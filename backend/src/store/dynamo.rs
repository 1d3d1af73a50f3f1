//! The DynamoDB store: GCO's own table and item layout, written with
//! conditional expressions so no change is lost or applied twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConsumedCapacity, KeySchemaElement, KeyType,
    Put, ReturnConsumedCapacity, ReturnValue, ScalarAttributeType, TableStatus,
    TimeToLiveSpecification, TransactWriteItem, Update,
};
use gco_api::HistoryEntry;
use gco_spec::json::Value;
use gco_spec::{DesiredState, Record};

use super::attr::{from_item, to_item};
use super::history::{self, Author, Span};
use super::shared_scan::SharedScan;
use super::sign_outs::{self, SignOuts};
use super::update_expression::{UpdateExpression, apply_edits, update_expression};
use super::{
    BoxFuture, Expected, Scan, Store, StoreError, Stored, Unreadable, maps_sorted, read_item,
    storable,
};

/// Where the tables are.
#[derive(Debug, Clone)]
pub struct DynamoConfig {
    pub table: String,
    /// The "global region" of the GCO deployment.
    pub region: String,
    /// A DynamoDB-compatible server (`http://127.0.0.1:8000`); `None` for AWS.
    pub endpoint: Option<String>,
    /// The history table (key `endpoint_name` + `change_id`); `None` records
    /// no history (`--history-table off`: a server without
    /// TransactWriteItems, such as dynalite).
    pub history_table: Option<String>,
}

impl DynamoConfig {
    /// The history table's default name: `{table}-history`.
    pub fn default_history_table(table: &str) -> String {
        format!("{table}-history")
    }
}

pub struct DynamoStore {
    client: Client,
    table: String,
    history: Option<HistoryTable>,
    /// Lists at the same time share a scan (see [`SharedScan`]).
    scans: SharedScan<Scan, StoreError>,
    /// Items at the last scan: how many segments the next one reads in.
    last_items: AtomicUsize,
}

/// The history table, and whether it was missing when last looked at.
struct HistoryTable {
    name: String,
    missing: AtomicBool,
}

/// Whether the history table is there, as DescribeTable says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryState {
    /// `--history-table off`.
    Off,
    Present(String),
    /// Changes are refused (503, naming it) until it exists.
    Missing(String),
}

/// A transaction's outcome for the record's item: its condition failed.
enum Cancelled {
    Condition,
    /// Another transaction held the item, or the entry's id was taken: the
    /// write may be tried again.
    Retry,
}

/// A failed call, as the service must report it: DynamoDB applies a write
/// whole or not at all, so a client error (4xx: no such table, access
/// denied, a request it refuses) or a request never sent wrote nothing; a
/// server error, a timeout or a lost connection leaves it unknown.
fn failure<E: std::error::Error + ProvideErrorMetadata + 'static>(
    e: SdkError<E, HttpResponse>,
) -> StoreError {
    let detail = sdk_error_text(&e);
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

/// A failed call in a line: DynamoDB's error code and message when it
/// answered (`ValidationException: TableName must be at least 3
/// characters long ...`), else the causes, each once (a refused connection,
/// a timeout). Never the SDK's debug dump of the error's structure, which
/// buries those words in two thousand characters.
pub fn sdk_error_text<E, R>(e: &SdkError<E, R>) -> String
where
    E: std::error::Error + ProvideErrorMetadata + 'static,
    R: std::fmt::Debug,
{
    if let SdkError::ServiceError(service) = e {
        let err = service.err();
        let code = err.code().unwrap_or("an error without a code");
        return match err.message() {
            Some(message) => format!("{code}: {message}"),
            None => code.to_owned(),
        };
    }
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        // Errors that repeat their cause's words in their own.
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// What a team does about a DynamoDB error at start-up, by its code
/// (`None`: DynamoDB did not answer).
pub fn what_to_do<E, R>(e: &SdkError<E, R>) -> &'static str
where
    E: ProvideErrorMetadata,
{
    let SdkError::ServiceError(service) = e else {
        return "check --dynamodb-endpoint (or --dynamodb-region) and the network path to DynamoDB; the console keeps trying";
    };
    match service.err().code().unwrap_or_default() {
        "ValidationException" => {
            "check the table names (--dynamodb-table, --history-table): 3 to 255 letters, digits, '_', '-' or '.'"
        }
        "AccessDeniedException" => {
            "give the console's role what deploy/iam-policy.json grants on this table (DescribeTable among them)"
        }
        "UnrecognizedClientException"
        | "InvalidSignatureException"
        | "ExpiredTokenException"
        | "MissingAuthenticationTokenException"
        | "IncompleteSignatureException" => {
            "check the AWS credentials the console runs with (AWS_PROFILE, the task or pod role) and --dynamodb-region"
        }
        "ThrottlingException"
        | "ProvisionedThroughputExceededException"
        | "RequestLimitExceeded" => "DynamoDB is throttling the account; the console retries",
        _ => "see DynamoDB's error reference for this code",
    }
}

/// [`failure`], with [`what_to_do`] after its words.
fn with_advice<E: std::error::Error + ProvideErrorMetadata + 'static>(
    e: SdkError<E, HttpResponse>,
) -> StoreError {
    let advice = what_to_do(&e);
    match failure(e) {
        StoreError::Rejected(text) => StoreError::Rejected(format!("{text}. What to do: {advice}")),
        StoreError::Unavailable(text) => {
            StoreError::Unavailable(format!("{text}. What to do: {advice}"))
        }
        other => other,
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
            history: cfg.history_table.as_ref().map(|name| HistoryTable {
                name: name.clone(),
                missing: AtomicBool::new(false),
            }),
            scans: SharedScan::default(),
            last_items: AtomicUsize::new(0),
        }
    }

    /// Creates the table (key `endpoint_name`, on-demand) unless it exists,
    /// and the history table (key `endpoint_name` + `change_id`) when
    /// history is recorded.
    pub async fn create_table(&self) -> Result<(), StoreError> {
        self.create_one(&self.table, &[("endpoint_name", KeyType::Hash)])
            .await?;
        if let Some(history) = &self.history {
            let key = [
                ("endpoint_name", KeyType::Hash),
                ("change_id", KeyType::Range),
            ];
            self.create_one(&history.name, &key).await?;
            history.missing.store(false, Ordering::SeqCst);
            self.expire_sign_outs(&history.name).await;
        }
        Ok(())
    }

    /// Creates `table` with string keys `key`, on-demand, unless it exists.
    async fn create_one(&self, table: &str, key: &[(&str, KeyType)]) -> Result<(), StoreError> {
        let built = key
            .iter()
            .map(|(name, kind)| {
                Ok::<_, aws_sdk_dynamodb::error::BuildError>((
                    AttributeDefinition::builder()
                        .attribute_name(*name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()?,
                    KeySchemaElement::builder()
                        .attribute_name(*name)
                        .key_type(kind.clone())
                        .build()?,
                ))
            })
            .collect::<Result<Vec<_>, _>>();
        let (attrs, keys): (Vec<_>, Vec<_>) = built
            .map_err(|e| StoreError::Unavailable(e.to_string()))?
            .into_iter()
            .unzip();
        let result = self
            .client
            .create_table()
            .table_name(table)
            .set_attribute_definitions(Some(attrs))
            .set_key_schema(Some(keys))
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
        self.wait_until_active(table).await
    }

    /// Turns on the history table's TTL on the sign-outs' expiry, so
    /// DynamoDB deletes them once their session is over (history entries
    /// have no such attribute). A server without TTL (dynalite) is told
    /// about in the log: reads leave expired sign-outs out anyway.
    async fn expire_sign_outs(&self, table: &str) {
        let spec = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(sign_outs::DYNAMODB_TTL_ATTRIBUTE)
            .build();
        let result = match spec {
            Ok(spec) => self
                .client
                .update_time_to_live()
                .table_name(table)
                .time_to_live_specification(spec)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| sdk_error_text(&e)),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = result {
            // Already on is no failure.
            if !e.contains("already enabled") {
                tracing::warn!(table, error = %e, "could not turn on the TTL of sign-outs");
            }
        }
    }

    /// Whether sign-outs can be kept ([`SignOuts`]): in the history table,
    /// so not with `--history-table off`.
    pub fn keeps_sign_outs(&self) -> bool {
        self.history.is_some()
    }

    /// A new table takes writes only once it is ACTIVE.
    async fn wait_until_active(&self, table: &str) -> Result<(), StoreError> {
        for _ in 0..300 {
            let out = self
                .client
                .describe_table()
                .table_name(table)
                .send()
                .await
                .map_err(failure)?;
            if out.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {table} did not become active within 30 s"
        )))
    }

    /// Whether the endpoints table is there (DescribeTable), for the
    /// console to say at start-up.
    pub async fn table_exists(&self) -> Result<bool, StoreError> {
        let out = self
            .client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await;
        crate::metrics::dynamodb_call("DescribeTable", out.is_ok(), 0.0, 0.0);
        match out {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(with_advice(e)),
        }
    }

    /// Whether the history table is there (DescribeTable): the console
    /// says so at start-up, and refuses changes while it is missing.
    pub async fn history_state(&self) -> Result<HistoryState, StoreError> {
        let Some(history) = &self.history else {
            return Ok(HistoryState::Off);
        };
        let out = self
            .client
            .describe_table()
            .table_name(&history.name)
            .send()
            .await;
        crate::metrics::dynamodb_call("DescribeTable", out.is_ok(), 0.0, 0.0);
        match out {
            Ok(_) => {
                history.missing.store(false, Ordering::SeqCst);
                Ok(HistoryState::Present(history.name.clone()))
            }
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                history.missing.store(true, Ordering::SeqCst);
                Ok(HistoryState::Missing(history.name.clone()))
            }
            Err(e) => Err(with_advice(e)),
        }
    }

    /// Before a change: refused while the history table is missing (looked
    /// at again each time, so changes resume once it is created).
    async fn history_ready(&self) -> Result<(), StoreError> {
        let Some(history) = &self.history else {
            return Ok(());
        };
        if !history.missing.load(Ordering::SeqCst) {
            return Ok(());
        }
        match self.history_state().await? {
            HistoryState::Missing(name) => Err(missing_history(&name)),
            _ => Ok(()),
        }
    }
}

/// The reason a change is refused while the history table is missing.
fn missing_history(name: &str) -> StoreError {
    StoreError::NotSaved(format!(
        "the history table '{name}' does not exist, and every change is recorded there: create it (--create-table creates it) or run the console with --history-table off"
    ))
}

impl Store for DynamoStore {
    fn create<'a>(
        &'a self,
        record: &'a Record,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            if self.history.is_some() {
                return self.create_recorded(record, by).await;
            }
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
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let update = update_expression(&expected, record);
            if self.history.is_some() {
                return self.update_recorded(record, expected, update, by).await;
            }
            let (condition, names, values) = conditioned(&expected, &update);
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

    fn records_history(&self) -> bool {
        self.history.is_some()
    }

    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
        Box::pin(self.query_history(name, span, limit))
    }
}

/// The condition every update carries (the record as read: same version,
/// same lifecycle, not deleted unless deleting), with the expression's
/// names and values and the condition's own.
fn conditioned(
    expected: &Expected<'_>,
    update: &UpdateExpression,
) -> (
    String,
    HashMap<String, String>,
    HashMap<String, AttributeValue>,
) {
    let (names, mut values) = (update.names.clone(), update.values.clone());
    let read = expected.read;
    // A record read without `updated_at` (an older writer's) is read as
    // "": the condition admits either.
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
        values.insert(
            ":deleted".into(),
            AttributeValue::S(DesiredState::Deleted.as_str().into()),
        );
    }
    (condition, names, values)
}

/// How many times a transaction that another one got in the way of (or
/// whose entry id was taken) is tried before the change is reported as
/// lost to another writer.
const TRANSACTION_ATTEMPTS: usize = 5;

impl DynamoStore {
    /// A create with its history entry: one TransactWriteItems, the record's
    /// put conditioned on its absence, the entry's on its id being new.
    async fn create_recorded(
        &self,
        record: &Record,
        by: &Author,
    ) -> Result<Arc<Stored>, StoreError> {
        self.history_ready().await?;
        let answer = DynamoStore::as_read(record)?;
        let item = to_item(storable(record).as_object().expect("a record is an object"));
        let after = history::content(&answer.to_value());
        for _ in 0..TRANSACTION_ATTEMPTS {
            let entry = history::entry(by, &record.updated_at, None, Some(after.clone()));
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(item.clone()))
                .condition_expression("attribute_not_exists(endpoint_name)")
                .build()
                .map_err(|e| StoreError::Rejected(e.to_string()))?;
            let put = TransactWriteItem::builder().put(put).build();
            match self.transact(put, &record.endpoint_name, &entry).await {
                Ok(()) => return Ok(Arc::new(Stored::of(answer))),
                Err(Ok(Cancelled::Condition)) => return Err(StoreError::AlreadyExists),
                Err(Ok(Cancelled::Retry)) => tokio::time::sleep(transaction_pause()).await,
                Err(Err(e)) => return Err(e),
            }
        }
        Err(StoreError::NotSaved(
            "other changes of the endpoint kept getting in the way; try again".into(),
        ))
    }

    /// An update with its history entry: one TransactWriteItems, the
    /// record's update carrying the condition a plain update has. It
    /// returns no item: the answer is the record read with the update's
    /// edits made, as a read of it returns it (the condition held, so
    /// nothing else changed the item in between).
    async fn update_recorded(
        &self,
        record: &Record,
        expected: Expected<'_>,
        update: UpdateExpression,
        by: &Author,
    ) -> Result<Arc<Stored>, StoreError> {
        self.history_ready().await?;
        let (condition, names, values) = conditioned(&expected, &update);
        let before = expected.read.to_value();
        let mut item = before.as_object().cloned().unwrap_or_default();
        apply_edits(&mut item, &update.edits);
        let answer = read_item(&record.endpoint_name, &maps_sorted(&Value::Object(item)))
            .map_err(StoreError::Corrupt)?;
        let (before, after) = (
            history::content(&before),
            history::content(&answer.to_value()),
        );
        for _ in 0..TRANSACTION_ATTEMPTS {
            let entry = history::entry(
                by,
                &record.updated_at,
                Some(before.clone()),
                Some(after.clone()),
            );
            let change = Update::builder()
                .table_name(&self.table)
                .key(
                    "endpoint_name",
                    AttributeValue::S(record.endpoint_name.clone()),
                )
                .update_expression(&update.text)
                .condition_expression(&condition)
                .set_expression_attribute_names(Some(names.clone()))
                .set_expression_attribute_values(Some(values.clone()))
                .build()
                .map_err(|e| StoreError::Rejected(e.to_string()))?;
            let change = TransactWriteItem::builder().update(change).build();
            match self.transact(change, &record.endpoint_name, &entry).await {
                Ok(()) => return Ok(Arc::new(Stored::of(answer))),
                // Another writer came first: the service reads again.
                Err(Ok(Cancelled::Condition)) => return Err(StoreError::ConditionFailed),
                Err(Ok(Cancelled::Retry)) => tokio::time::sleep(transaction_pause()).await,
                Err(Err(e)) => return Err(e),
            }
        }
        Err(StoreError::ConditionFailed)
    }

    /// The record's write and the entry's put, as one transaction.
    /// `Err(Ok(_))`: cancelled by the record's condition, or worth another
    /// try; `Err(Err(_))`: failed, with what the service reports.
    async fn transact(
        &self,
        record_write: TransactWriteItem,
        name: &str,
        entry: &HistoryEntry,
    ) -> Result<(), Result<Cancelled, StoreError>> {
        let history = self.history.as_ref().expect("history is recorded");
        let put = Put::builder()
            .table_name(&history.name)
            .set_item(Some(entry_item(name, entry)))
            .condition_expression("attribute_not_exists(change_id)")
            .build()
            .map_err(|e| Err(StoreError::Rejected(e.to_string())))?;
        let result = self
            .client
            .transact_write_items()
            .transact_items(record_write)
            .transact_items(TransactWriteItem::builder().put(put).build())
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await;
        let units: f64 = result.as_ref().map_or(0.0, |o| {
            o.consumed_capacity()
                .iter()
                .map(|c| c.capacity_units().unwrap_or(0.0))
                .sum()
        });
        crate::metrics::dynamodb_call("TransactWriteItems", result.is_ok(), 0.0, units);
        let e = match result {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        let detail = sdk_error_text(&e);
        match e.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                let codes: Vec<&str> = cancelled
                    .cancellation_reasons()
                    .iter()
                    .map(|r| r.code().unwrap_or("None"))
                    .collect();
                let code = |i: usize| codes.get(i).copied().unwrap_or("None");
                let throttled =
                    |c: &str| matches!(c, "ThrottlingError" | "ProvisionedThroughputExceeded");
                Err(match (code(0), code(1)) {
                    ("ConditionalCheckFailed", _) => Ok(Cancelled::Condition),
                    (_, "ConditionalCheckFailed") => Ok(Cancelled::Retry),
                    (a, b) if a == "TransactionConflict" || b == "TransactionConflict" => {
                        Ok(Cancelled::Retry)
                    }
                    (_, b) if throttled(b) => Err(StoreError::NotSaved(format!(
                        "the history table '{}' is throttled ({b}), so the change and its entry were not written; try again shortly",
                        history.name
                    ))),
                    (a, _) if throttled(a) => Err(StoreError::NotSaved(format!(
                        "the endpoints table '{}' is throttled ({a}), so the change and its entry were not written; try again shortly",
                        self.table
                    ))),
                    _ => Err(StoreError::Rejected(detail)),
                })
            }
            Some(
                TransactWriteItemsError::ThrottlingException(_)
                | TransactWriteItemsError::ProvisionedThroughputExceededException(_)
                | TransactWriteItemsError::RequestLimitExceeded(_),
            ) => {
                tracing::warn!(%detail, "TransactWriteItems throttled");
                Err(Err(StoreError::NotSaved(format!(
                    "DynamoDB throttled the write of the change and its history entry (tables '{}' and '{}'), so neither was written; try again shortly",
                    self.table, history.name
                ))))
            }
            Some(TransactWriteItemsError::ResourceNotFoundException(_)) => {
                // Which table? The history table is the one that comes and goes.
                match self.history_state().await {
                    Ok(HistoryState::Missing(name)) => Err(Err(missing_history(&name))),
                    _ => Err(Err(StoreError::Rejected(detail))),
                }
            }
            _ => Err(Err(failure(e))),
        }
    }

    /// The entries of `name` in `span`, at most `limit`, page by page (a
    /// page holds at most 1 MB, fewer entries than asked for when they are
    /// large).
    async fn query_history(
        &self,
        name: &str,
        span: Span<'_>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let Some(history) = &self.history else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut start: Option<HashMap<String, AttributeValue>> = None;
        while out.len() < limit {
            let mut request = self
                .client
                .query()
                .table_name(&history.name)
                .consistent_read(true)
                .expression_attribute_values(":name", AttributeValue::S(name.to_owned()))
                .limit(i32::try_from(limit - out.len()).unwrap_or(i32::MAX))
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .set_exclusive_start_key(start.take());
            request = match span {
                Span::Older(None) => request
                    .key_condition_expression("endpoint_name = :name")
                    .scan_index_forward(false),
                Span::Older(Some(before)) => request
                    .key_condition_expression("endpoint_name = :name AND change_id < :id")
                    .expression_attribute_values(":id", AttributeValue::S(before.to_owned()))
                    .scan_index_forward(false),
                Span::From(from) => request
                    .key_condition_expression("endpoint_name = :name AND change_id >= :id")
                    .expression_attribute_values(":id", AttributeValue::S(from.to_owned()))
                    .scan_index_forward(true),
            };
            let page = request.send().await;
            let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
            crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
            let page = match page {
                Ok(page) => page,
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_resource_not_found_exception()) =>
                {
                    history.missing.store(true, Ordering::SeqCst);
                    return Err(StoreError::NotSaved(format!(
                        "the history table '{}' does not exist",
                        history.name
                    )));
                }
                Err(e) => return Err(failure(e)),
            };
            for item in page.items() {
                out.push(read_entry(item).ok_or_else(|| {
                    StoreError::Unavailable(format!(
                        "an item of the history table {} is no entry: {item:?}",
                        history.name
                    ))
                })?);
            }
            match page.last_evaluated_key() {
                Some(key) if !key.is_empty() => start = Some(key.clone()),
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// A short random pause before a transaction is tried again.
fn transaction_pause() -> Duration {
    let mut b = [0u8; 1];
    let _ = getrandom::fill(&mut b);
    Duration::from_millis(1 + u64::from(b[0] % 20))
}

/// An entry as the history table keeps it: the content as JSON text (a
/// record's own maps, exactly, whatever their keys), the rest as strings.
fn entry_item(name: &str, entry: &HistoryEntry) -> HashMap<String, AttributeValue> {
    let mut item = HashMap::from([
        (
            "endpoint_name".to_owned(),
            AttributeValue::S(name.to_owned()),
        ),
        ("change_id".to_owned(), AttributeValue::S(entry.id.clone())),
        ("at".to_owned(), AttributeValue::S(entry.at.clone())),
        (
            "operation".to_owned(),
            AttributeValue::S(entry.operation.clone()),
        ),
    ]);
    let mut text = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            item.insert(key.to_owned(), AttributeValue::S(value));
        }
    };
    text("who", entry.who.clone());
    text("request_id", entry.request_id.clone());
    text("client_request_id", entry.client_request_id.clone());
    text("before", entry.before.as_ref().map(Value::to_json));
    text("after", entry.after.as_ref().map(Value::to_json));
    item
}

/// An entry read back from [`entry_item`]'s item.
fn read_entry(item: &HashMap<String, AttributeValue>) -> Option<HistoryEntry> {
    let text = |key: &str| item.get(key).and_then(|v| v.as_s().ok()).cloned();
    let content = |key: &str| -> Option<Option<Value>> {
        match text(key) {
            None => Some(None),
            Some(json) => gco_spec::json::parse(&json).ok().map(Some),
        }
    };
    Some(HistoryEntry {
        id: text("change_id")?,
        at: text("at")?,
        since: None,
        who: text("who"),
        operation: text("operation")?,
        request_id: text("request_id"),
        client_request_id: text("client_request_id"),
        before: content("before")?,
        after: content("after")?,
    })
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

/// Sign-outs as items of the history table, in their own partition
/// ([`sign_outs::DYNAMODB_PARTITION`]), keyed by the session's digest.
impl SignOuts for DynamoStore {
    fn sign_out<'a>(
        &'a self,
        digest: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let history = self.history.as_ref().ok_or_else(no_sign_outs)?;
            let result = self
                .client
                .put_item()
                .table_name(&history.name)
                .item(
                    "endpoint_name",
                    AttributeValue::S(sign_outs::DYNAMODB_PARTITION.to_owned()),
                )
                .item("change_id", AttributeValue::S(digest.to_owned()))
                .item(
                    sign_outs::DYNAMODB_TTL_ATTRIBUTE,
                    AttributeValue::N(until.to_string()),
                )
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await;
            let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
            crate::metrics::dynamodb_call("PutItem", result.is_ok(), 0.0, capacity(units));
            result.map(|_| ()).map_err(failure)
        })
    }

    fn signed_out(&self, now: u64) -> BoxFuture<'_, Result<Vec<(String, u64)>, StoreError>> {
        Box::pin(async move {
            let history = self.history.as_ref().ok_or_else(no_sign_outs)?;
            let mut out = Vec::new();
            let mut start: Option<HashMap<String, AttributeValue>> = None;
            loop {
                let page = self
                    .client
                    .query()
                    .table_name(&history.name)
                    .consistent_read(true)
                    .key_condition_expression("endpoint_name = :partition")
                    .expression_attribute_values(
                        ":partition",
                        AttributeValue::S(sign_outs::DYNAMODB_PARTITION.to_owned()),
                    )
                    .projection_expression("change_id, #until")
                    .expression_attribute_names("#until", sign_outs::DYNAMODB_TTL_ATTRIBUTE)
                    .return_consumed_capacity(ReturnConsumedCapacity::Total)
                    .set_exclusive_start_key(start.take())
                    .send()
                    .await;
                let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
                crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
                let page = page.map_err(failure)?;
                for item in page.items() {
                    let until = item
                        .get(sign_outs::DYNAMODB_TTL_ATTRIBUTE)
                        .and_then(|v| v.as_n().ok())
                        .and_then(|n| n.parse::<u64>().ok());
                    let digest = item.get("change_id").and_then(|v| v.as_s().ok());
                    // TTL deletes within days of the expiry, not at it.
                    if let (Some(digest), Some(until)) = (digest, until)
                        && until > now
                    {
                        out.push((digest.clone(), until));
                    }
                }
                match page.last_evaluated_key() {
                    Some(key) if !key.is_empty() => start = Some(key.clone()),
                    _ => return Ok(out),
                }
            }
        })
    }
}

fn no_sign_outs() -> StoreError {
    StoreError::Rejected(
        "sign-outs are kept in the history table, and there is none (--history-table off)".into(),
    )
}
