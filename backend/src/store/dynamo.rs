//! The DynamoDB store: GCO's own table and item layout, written with
//! conditional expressions so no change is lost or applied twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConsumedCapacity,
    CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate,
    IndexStatus, KeySchemaElement, KeyType, Projection, ProjectionType, Put,
    ReturnConsumedCapacity, ReturnValue, ScalarAttributeType, TableStatus, TimeToLiveSpecification,
    TransactWriteItem, Update,
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
    BoxFuture, Expected, Scan, Store, StoreError, Stored, Unreadable, read_item, storable,
};
use crate::audit::{self, AuditFilter, AuditRead, PartRead, Position};

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

/// The history table's index for the audit view: partition `operation`,
/// sort `change_id` (ids begin with the change's time), so every
/// endpoint's changes are read newest first, one query per operation,
/// without a scan. Keyed by an attribute every entry already has, so
/// DynamoDB indexes the entries written before it too, and the sign-outs
/// (which have none) stay out of it. README, "The audit view", has the
/// figures.
pub const AUDIT_INDEX: &str = "by_operation_time";
/// What the index holds besides its keys and the table's: what the audit
/// view lists (never the contents).
pub const AUDIT_INDEX_ATTRIBUTES: [&str; 4] = ["at", "who", "request_id", "client_request_id"];

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
            self.add_audit_index(&history.name).await?;
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
        // The history table is made with the audit view's index at once.
        let (attrs, index) = if key.len() == 2 {
            audit_index_definition(attrs).map_err(|e| StoreError::Unavailable(e.to_string()))?
        } else {
            (attrs, None)
        };
        let result = self
            .client
            .create_table()
            .table_name(table)
            .set_attribute_definitions(Some(attrs))
            .set_key_schema(Some(keys))
            .set_global_secondary_indexes(index.map(|i| vec![i]))
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

    /// The audit view's index on the history table ([`AUDIT_INDEX`]),
    /// added to a table made before it, and waited for until active (
    /// DynamoDB fills it from the entries there).
    async fn add_audit_index(&self, table: &str) -> Result<(), StoreError> {
        let described = self
            .client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(failure)?;
        if described.table().and_then(audit_index_state).is_none() {
            let built = (|| {
                let attr = |name: &str| {
                    AttributeDefinition::builder()
                        .attribute_name(name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()
                };
                let index = CreateGlobalSecondaryIndexAction::builder()
                    .index_name(AUDIT_INDEX)
                    .set_key_schema(Some(audit_index_key()?))
                    .projection(audit_projection())
                    .build()?;
                Ok::<_, aws_sdk_dynamodb::error::BuildError>((
                    vec![attr("operation")?, attr("change_id")?],
                    GlobalSecondaryIndexUpdate::builder().create(index).build(),
                ))
            })();
            let (attrs, update) = built.map_err(|e| StoreError::Unavailable(e.to_string()))?;
            self.client
                .update_table()
                .table_name(table)
                .set_attribute_definitions(Some(attrs))
                .global_secondary_index_updates(update)
                .send()
                .await
                .map_err(failure)?;
        }
        // DynamoDB fills a new index from the table: minutes when large.
        self.wait_until(table, 3000, |t| audit_index_state(t) == Some(true))
            .await
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
        self.wait_until(table, 300, |t| {
            t.table_status() == Some(&TableStatus::Active)
        })
        .await
    }

    /// Asks DescribeTable every 100 ms, at most `tries` times, until
    /// `ready` holds of the table.
    async fn wait_until(
        &self,
        table: &str,
        tries: u32,
        ready: impl Fn(&aws_sdk_dynamodb::types::TableDescription) -> bool,
    ) -> Result<(), StoreError> {
        for _ in 0..tries {
            let out = self
                .client
                .describe_table()
                .table_name(table)
                .send()
                .await
                .map_err(failure)?;
            if out.table().is_some_and(&ready) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {table} was not ready within {} s",
            tries / 10
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
            Ok(out) => {
                history.missing.store(false, Ordering::SeqCst);
                if out.table().and_then(audit_index_state).is_none() {
                    tracing::warn!(
                        table = %history.name,
                        "the history table has no index {AUDIT_INDEX}: the audit view (/history) answers 503 until it does; --create-table adds it, or the CDK stack, or: aws dynamodb update-table --table-name {} --attribute-definitions AttributeName=operation,AttributeType=S AttributeName=change_id,AttributeType=S --global-secondary-index-updates '[{{\"Create\": {{\"IndexName\": \"{AUDIT_INDEX}\", \"KeySchema\": [{{\"AttributeName\": \"operation\", \"KeyType\": \"HASH\"}}, {{\"AttributeName\": \"change_id\", \"KeyType\": \"RANGE\"}}], \"Projection\": {{\"ProjectionType\": \"INCLUDE\", \"NonKeyAttributes\": [\"at\", \"who\", \"request_id\", \"client_request_id\"]}}}}}}]'",
                        history.name
                    );
                }
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
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(endpoint_name)");
            if !put_if(put).await? {
                return Err(StoreError::AlreadyExists);
            }
            Ok(Arc::new(Stored::of(DynamoStore::as_read(record)?)))
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

    /// A PutItem on the entry's id being new; when another console kept
    /// one first, that one, read back.
    fn keep_entry<'a>(
        &'a self,
        name: &'a str,
        entry: &'a HistoryEntry,
    ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>> {
        Box::pin(async move {
            let Some(history) = &self.history else {
                return Ok(entry.clone());
            };
            let put = self
                .client
                .put_item()
                .table_name(&history.name)
                .set_item(Some(entry_item(name, entry)))
                .condition_expression("attribute_not_exists(change_id)");
            if put_if(put).await? {
                return Ok(entry.clone());
            }
            // Another console kept it first: that one.
            let kept = self.query_history(name, Span::From(&entry.id), 1).await?;
            kept.into_iter().find(|k| k.id == entry.id).ok_or_else(|| {
                StoreError::Unavailable(format!(
                    "history entry {} of {name} was there, then gone",
                    entry.id
                ))
            })
        })
    }

    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
        Box::pin(self.query_history(name, span, limit))
    }

    fn audit<'a>(
        &'a self,
        filter: &'a AuditFilter,
        below: Option<&'a Position>,
        limit: usize,
    ) -> BoxFuture<'a, Result<AuditRead, StoreError>> {
        Box::pin(self.read_audit(filter, below, limit))
    }
}

/// The audit index of a table: `None` when it has none, else whether it
/// is active (a server that gives no status has it active).
fn audit_index_state(t: &aws_sdk_dynamodb::types::TableDescription) -> Option<bool> {
    t.global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some(AUDIT_INDEX))
        .map(|i| i.index_status().is_none_or(|s| *s == IndexStatus::Active))
}

/// The audit index's projection: its keys, the table's, and
/// [`AUDIT_INDEX_ATTRIBUTES`].
fn audit_projection() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::Include)
        .set_non_key_attributes(Some(AUDIT_INDEX_ATTRIBUTES.map(str::to_owned).to_vec()))
        .build()
}

/// A new history table's attribute definitions with `operation`, and its
/// audit index.
fn audit_index_definition(
    mut attrs: Vec<AttributeDefinition>,
) -> Result<
    (Vec<AttributeDefinition>, Option<GlobalSecondaryIndex>),
    aws_sdk_dynamodb::error::BuildError,
> {
    attrs.push(
        AttributeDefinition::builder()
            .attribute_name("operation")
            .attribute_type(ScalarAttributeType::S)
            .build()?,
    );
    let index = GlobalSecondaryIndex::builder()
        .index_name(AUDIT_INDEX)
        .set_key_schema(Some(audit_index_key()?))
        .projection(audit_projection())
        .build()?;
    Ok((attrs, Some(index)))
}

/// The audit index's key: `operation`, then `change_id`.
fn audit_index_key() -> Result<Vec<KeySchemaElement>, aws_sdk_dynamodb::error::BuildError> {
    [("operation", KeyType::Hash), ("change_id", KeyType::Range)]
        .into_iter()
        .map(|(name, kind)| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
                .build()
        })
        .collect()
}

/// Where one part of an audit read looks: one endpoint's entries (the
/// table's own key), or one operation's (the audit index).
#[derive(Debug, Clone)]
enum AuditPart {
    Endpoint(String),
    Operation(String),
}

impl DynamoStore {
    /// The audit view's read: one query per part, at once, merged
    /// ([`audit::merge`]). With an endpoint named, its own entries (the
    /// table's key); else each operation's in the index.
    async fn read_audit(
        &self,
        filter: &AuditFilter,
        below: Option<&Position>,
        limit: usize,
    ) -> Result<AuditRead, StoreError> {
        let Some(history) = &self.history else {
            return Ok(AuditRead::default());
        };
        let parts: Vec<AuditPart> = match &filter.endpoint {
            Some(name) => vec![AuditPart::Endpoint(name.clone())],
            None => filter
                .operations()
                .into_iter()
                .map(|op| AuditPart::Operation(op.to_owned()))
                .collect(),
        };
        let mut reads = tokio::task::JoinSet::new();
        for part in parts {
            let (client, history_table) = (self.client.clone(), history.name.clone());
            let (filter, below) = (filter.clone(), below.cloned());
            reads.spawn(audit_part(
                client,
                history_table,
                part,
                filter,
                below,
                limit,
            ));
        }
        let mut found = Vec::new();
        while let Some(read) = reads.join_next().await {
            found.push(read.map_err(|e| StoreError::Unavailable(e.to_string()))??);
        }
        Ok(audit::merge(found, limit))
    }
}

/// One part of an audit read: newest first below `below`, until more than
/// `limit` are admitted, the part ends, or [`audit::READ_BUDGET`] items
/// were looked at.
async fn audit_part(
    client: Client,
    history_table: String,
    part: AuditPart,
    filter: AuditFilter,
    below: Option<Position>,
    limit: usize,
) -> Result<PartRead, StoreError> {
    let (index, key, value) = match &part {
        AuditPart::Endpoint(name) => (None, "endpoint_name", name.clone()),
        AuditPart::Operation(op) => (Some(AUDIT_INDEX.to_owned()), "operation", op.clone()),
    };
    let mut names = HashMap::from([
        ("#p".to_owned(), key.to_owned()),
        ("#n".to_owned(), "endpoint_name".to_owned()),
        ("#c".to_owned(), "change_id".to_owned()),
        ("#o".to_owned(), "operation".to_owned()),
    ]);
    let mut values = HashMap::from([(":p".to_owned(), AttributeValue::S(value))]);
    // The sort key's range: both ends included, the exact bounds checked
    // on each item (`admits`, and below the cursor).
    let high = [below.as_ref().map(|b| b.id.clone()), filter.to_id.clone()]
        .into_iter()
        .flatten()
        .min();
    let mut condition = "#p = :p".to_owned();
    match (&filter.from_id, high) {
        (Some(low), Some(high)) => {
            condition.push_str(" AND #c BETWEEN :low AND :high");
            values.insert(":low".into(), AttributeValue::S(low.clone()));
            values.insert(":high".into(), AttributeValue::S(high));
        }
        (Some(low), None) => {
            condition.push_str(" AND #c >= :low");
            values.insert(":low".into(), AttributeValue::S(low.clone()));
        }
        (None, Some(high)) => {
            condition.push_str(" AND #c <= :high");
            values.insert(":high".into(), AttributeValue::S(high));
        }
        (None, None) => {}
    }
    // A filter may name no key of what is queried (the index's
    // `operation`, the table's `endpoint_name`), so the search over names
    // and the index's operation are checked here, on each item
    // (`admits`); reading costs the same either way.
    let mut filters = Vec::new();
    if let AuditPart::Endpoint(_) = &part {
        // Sign-outs share the table and have no operation.
        filters.push("attribute_exists(#o)".to_owned());
        if let Some(op) = &filter.operation {
            filters.push("#o = :op".into());
            values.insert(":op".into(), AttributeValue::S(op.clone()));
        }
    }
    if let Some(who) = &filter.who {
        filters.push("#w = :who".into());
        names.insert("#w".into(), "who".into());
        values.insert(":who".into(), AttributeValue::S(who.clone()));
    }
    let narrowed = filter.who.is_some()
        || filter.search.is_some()
        || (filter.operation.is_some() && index.is_none());
    let filters = (!filters.is_empty()).then(|| filters.join(" AND "));
    let projected = AUDIT_INDEX_ATTRIBUTES
        .iter()
        .enumerate()
        .map(|(i, attr)| {
            names.insert(format!("#a{i}"), (*attr).to_owned());
            format!("#a{i}")
        })
        .chain(["#n", "#c", "#o"].map(str::to_owned))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = PartRead::default();
    let mut looked = 0;
    let mut start: Option<HashMap<String, AttributeValue>> = None;
    loop {
        // Without a filter every item read is one of the page; with one,
        // read more at a time, up to the budget.
        let wanted = limit + 1 - out.matches.len();
        let wanted = if narrowed {
            (wanted * 4).max(100)
        } else {
            wanted
        };
        let page_limit = wanted.min(audit::READ_BUDGET - looked);
        let page = client
            .query()
            .table_name(&history_table)
            .set_index_name(index.clone())
            .key_condition_expression(&condition)
            .set_filter_expression(filters.clone())
            .projection_expression(&projected)
            .set_expression_attribute_names(Some(names.clone()))
            .set_expression_attribute_values(Some(values.clone()))
            .scan_index_forward(false)
            .limit(i32::try_from(page_limit).unwrap_or(i32::MAX))
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .set_exclusive_start_key(start.take())
            .send()
            .await;
        let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
        crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
        let page = match page {
            Ok(page) => page,
            Err(e) if index.is_some() && is_missing_index(&e) => {
                return Err(StoreError::NotSaved(format!(
                    "the history table '{history_table}' has no index {AUDIT_INDEX}, which the audit view reads: add it (--create-table does, or the CDK stack; README, \"The audit view\")"
                )));
            }
            Err(e) => return Err(failure(e)),
        };
        looked += usize::try_from(page.scanned_count()).unwrap_or(0);
        for item in page.items() {
            let Some(entry) = read_audit_item(item) else {
                continue;
            };
            let under = below.as_ref().is_none_or(|b| Position::of(&entry) < *b);
            if under && filter.admits(&entry) {
                out.matches.push(entry);
            }
        }
        let last = page.last_evaluated_key().filter(|k| !k.is_empty()).cloned();
        let Some(last) = last else {
            return Ok(out);
        };
        if out.matches.len() > limit || looked >= audit::READ_BUDGET {
            let text = |k: &str| last.get(k).and_then(|v| v.as_s().ok()).cloned();
            out.frontier = Some(Position {
                id: text("change_id").unwrap_or_default(),
                endpoint: text("endpoint_name").unwrap_or_default(),
            });
            return Ok(out);
        }
        start = Some(last);
    }
}

/// Whether a query failed because the index it names is not there.
fn is_missing_index<E: std::error::Error + 'static>(e: &SdkError<E, HttpResponse>) -> bool {
    let text = DisplayErrorContext(e).to_string();
    text.contains("index") && (text.contains("ValidationException") || text.contains("not have"))
}

/// An audit index item (or a table item, projected alike) as the audit
/// view lists it.
fn read_audit_item(item: &HashMap<String, AttributeValue>) -> Option<gco_api::AuditEntry> {
    let text = |key: &str| item.get(key).and_then(|v| v.as_s().ok()).cloned();
    Some(gco_api::AuditEntry {
        endpoint: text("endpoint_name")?,
        id: text("change_id")?,
        at: text("at").unwrap_or_default(),
        who: text("who"),
        operation: text("operation")?,
        request_id: text("request_id"),
        client_request_id: text("client_request_id"),
    })
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
                Err(Ok(Cancelled::Retry)) => transaction_pause().await,
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
        let answer = read_item(
            &record.endpoint_name,
            &Value::Object(item).with_sorted_keys(),
        )
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
                Err(Ok(Cancelled::Retry)) => transaction_pause().await,
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
async fn transaction_pause() {
    crate::clock::pause(Duration::from_millis(1), Duration::from_millis(20)).await;
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
    text("since", entry.since.clone());
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
        since: text("since"),
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
                out.insert(&name.to_string_lossy(), attribute.with_sorted_keys());
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
/// Sends a PutItem made with a condition, counted: `Ok(true)` when it
/// wrote, `Ok(false)` when its condition did not hold.
async fn put_if(put: PutItemFluentBuilder) -> Result<bool, StoreError> {
    let result = put
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await;
    let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
    crate::metrics::dynamodb_call("PutItem", result.is_ok(), 0.0, capacity(units));
    match result {
        Ok(_) => Ok(true),
        Err(e)
            if e.as_service_error()
                .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
        {
            Ok(false)
        }
        Err(e) => Err(failure(e)),
    }
}

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
