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
    BoxFuture, Expected, Scan, Storable, Store, StoreError, Stored, Unreadable, read_item,
};
use crate::audit::{self, AuditFilter, AuditRead, PartRead, Position};

mod audit_query;
mod history_items;
mod records;
mod sign_out_items;
mod tables;

use history_items::*;
use records::*;
use tables::*;

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
}

impl Store for DynamoStore {
    fn create<'a>(
        &'a self,
        write: &'a Storable,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            if self.history.is_some() {
                return self.create_recorded(write, by).await;
            }
            let item = to_item(write.item());
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(endpoint_name)");
            if !put_if(put).await? {
                return Err(StoreError::AlreadyExists);
            }
            Ok(Arc::new(Stored::of(DynamoStore::as_read(write)?)))
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
        write: &'a Storable,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let record = write.record();
            let update = update_expression(&expected, write);
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
