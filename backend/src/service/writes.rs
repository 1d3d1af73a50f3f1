//! Deploys, changes and reverts: each a read, the core's operation, and a
//! conditional write of the record in its stored form, retried on a fresh
//! read when another writer came first.

use std::sync::Arc;
use std::time::Duration;

use gco_api::{Role, operation};
use gco_spec::json::Value;
use gco_spec::ops::{Reverted, record_of_content, revert};
use gco_spec::record::CREATED_BY;
use gco_spec::time::{format_timestamp, next_timestamp};
use gco_spec::{Change, Diagnostic, OpError, Record, Report, apply, new_record};

use crate::clock::{pause, unix_micros};
use crate::store::history::{MAX_ENTRY_CONTENT_BYTES, content};
use crate::store::{Expected, Span, Storable, StoreError, Stored, storable};
use crate::version::if_match_holds;

use super::history::history_read;
use super::{Actor, Service, ServiceError, random_token};

/// Read-modify-write attempts before a change under heavy contention gives
/// up. Each lost race means another writer made progress, so 50 writers on
/// one record need at most 50 rounds; the margin absorbs backoff jitter and
/// GCO's monitors, whose status writes (every 15 s per region) cost a
/// change in flight a round too.
const MAX_ATTEMPTS: u32 = 256;

/// Upper bound of the random pause after a lost race.
const MAX_BACKOFF: Duration = Duration::from_millis(20);

impl Service {
    /// Deploys, as `by` (the record's `created_by`); answers the record as
    /// stored.
    pub async fn deploy(&self, request: Value, by: &Actor) -> Result<Arc<Stored>, ServiceError> {
        let check = self.plan(request);
        let Some(deployment) = check.deployment else {
            return Err(ServiceError::Invalid(check.report));
        };
        let name = deployment.endpoint_name.clone();
        let mut record = new_record(
            deployment,
            &format_timestamp(unix_micros()),
            &mut random_token,
        );
        record.extra.insert(CREATED_BY, by.identity.name.as_str());
        let write = self.storable(None, record)?;
        match self
            .store
            .create(&write, &by.author(operation::DEPLOY))
            .await
        {
            Ok(stored) => Ok(stored),
            Err(StoreError::AlreadyExists) => Err(ServiceError::AlreadyExists(name)),
            Err(e) => Err(ServiceError::from_write(e)),
        }
    }

    /// Applies a change with optimistic concurrency: each attempt reads,
    /// applies the core's operation and writes on the condition that the
    /// record is still as read, retrying on a fresh read when another write
    /// came first.
    ///
    /// With `if_match`, a record whose content (what the change depends on,
    /// see [`crate::version`]) is not the named version is
    /// [`ServiceError::Stale`] and nothing is written. A monitor's status
    /// write in between moves `updated_at`, so the write that follows it
    /// fails its condition and is tried again on a fresh read: the status is
    /// never written over, and the change still lands while its content
    /// stays as the client saw it.
    pub async fn change(
        &self,
        name: &str,
        change: Change,
        if_match: Option<&str>,
        by: &Actor,
    ) -> Result<Arc<Stored>, ServiceError> {
        let kind = change.kind();
        let author = by.author(kind.as_str());
        change.check_arguments().map_err(ServiceError::Refused)?;
        // GCO's add_region and remove_region raise when their conditional
        // write loses (GCO_FACTS_NEWEST section 3.2): a membership change
        // computed on regions that another change has since moved is not
        // made on the new ones. A lost race with a status write is retried.
        let membership = matches!(
            change,
            Change::AddRegion { .. } | Change::RemoveRegion { .. }
        );
        let mut computed_on: Option<String> = None;
        for _ in 0..MAX_ATTEMPTS {
            let stored = self.get_stored(name).await?;
            if if_match.is_some_and(|tags| !if_match_holds(tags, stored.etag())) {
                return Err(ServiceError::Stale);
            }
            if let Some(tag) = &computed_on
                && !if_match_holds(tag, stored.etag())
            {
                return Err(ServiceError::Busy {
                    endpoint: name.to_owned(),
                    operation: kind.operation(),
                });
            }
            if membership {
                computed_on = Some(stored.etag().to_owned());
            }
            let current = &stored.record;
            let now = next_timestamp(unix_micros(), &current.updated_at);
            let mut next =
                apply(current, &change, &now, &mut random_token).map_err(ServiceError::Refused)?;
            // A change that changes nothing (a region removed that was no
            // target, a stopped endpoint stopped) is not written: the
            // version others hold stays current.
            let now = std::mem::replace(&mut next.updated_at, current.updated_at.clone());
            if next == *current {
                return Ok(stored);
            }
            next.updated_at = now;
            let write = self.storable(Some(current), next)?;
            match self
                .store
                .update(
                    &write,
                    Expected::of(current, matches!(change, Change::Delete { .. })),
                    &author,
                )
                .await
            {
                Ok(written) => return Ok(written),
                // Another write came first: a change (the next read tells,
                // and with `If-Match` answers Stale) or a monitor's status.
                Err(StoreError::ConditionFailed) => pause(Duration::ZERO, MAX_BACKOFF).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy {
            endpoint: name.to_owned(),
            operation: kind.operation(),
        })
    }

    /// `record` in its stored form, made once for the write (the checks,
    /// the item, its history entry): refused when no DynamoDB item could
    /// hold it, or, while history is recorded, its change's entry (the
    /// record before, `before`, and after).
    fn storable(&self, before: Option<&Record>, record: Record) -> Result<Storable, ServiceError> {
        let write = Storable::of(record);
        if let Some(oversized) = write.oversized() {
            let mut report = Report::default();
            report.push(Diagnostic::error(
                oversized.part.clone(),
                oversized.message(),
            ));
            return Err(ServiceError::Invalid(report));
        }
        if !self.store.records_history() {
            return Ok(write);
        }
        let size = |item: &Value| content(item).to_json().len();
        let bytes = before.map_or(0, |r| size(&storable(r))) + size(write.value());
        if bytes <= MAX_ENTRY_CONTENT_BYTES {
            return Ok(write);
        }
        let mut report = Report::default();
        report.push(Diagnostic::error(
            "",
            format!(
                "the change's history entry would hold {bytes} bytes of the record (before and after it); a DynamoDB item holds at most {}: a record this large cannot be changed while changes are recorded (--history-table off records none)",
                crate::store::MAX_ITEM_BYTES
            ),
        ));
        Err(ServiceError::Invalid(report))
    }

    /// Puts the endpoint back as history entry `to` left it (see
    /// [`gco_spec::ops::revert`]), with `If-Match` as any change. A gone
    /// (purged) endpoint is deployed again from it, which needs the admin
    /// role; otherwise the operator role. Answers the record and whether it
    /// was created.
    pub async fn revert(
        &self,
        name: &str,
        to: &str,
        if_match: Option<&str>,
        by: &Actor,
    ) -> Result<(Arc<Stored>, bool), ServiceError> {
        if !self.store.records_history() {
            return Err(ServiceError::HistoryOff);
        }
        let Some(after) = self.entry_after(name, to).await? else {
            return Err(ServiceError::Refused(OpError {
                kind: gco_spec::OpErrorKind::Invalid,
                path: "to".into(),
                message: format!("Entry '{to}' left no endpoint '{name}' to put back"),
            }));
        };
        let target = record_of_content(&after).map_err(ServiceError::Refused)?;
        let author = by.author(operation::REVERT);
        for _ in 0..MAX_ATTEMPTS {
            let current = self.store.get_stored(name).await?;
            let since = match &current {
                None => {
                    by.require(
                        Role::Admin,
                        "deploying a deleted endpoint again from its history",
                    )?;
                    if if_match.is_some() {
                        return Err(ServiceError::Stale);
                    }
                    // After the newest entry, whatever the clock says.
                    let newest = self
                        .store
                        .history(name, Span::Older(None), 1)
                        .await
                        .map_err(history_read)?;
                    newest.first().map(|e| e.at.clone()).unwrap_or_default()
                }
                // The operator role the route needs is checked before.
                Some(stored) => {
                    if if_match.is_some_and(|tags| !if_match_holds(tags, stored.etag())) {
                        return Err(ServiceError::Stale);
                    }
                    stored.record.updated_at.clone()
                }
            };
            let now = next_timestamp(unix_micros(), &since);
            let read = current.as_ref().map(|s| &s.record);
            let reverted =
                revert(read, &target, &now, &mut random_token).map_err(ServiceError::Refused)?;
            let written = match (reverted, &current) {
                (Reverted::Created(mut record), _) => {
                    record.extra.insert(CREATED_BY, by.identity.name.as_str());
                    let write = self.storable(None, record)?;
                    match self.store.create(&write, &author).await {
                        Ok(stored) => return Ok((stored, true)),
                        // Deployed meanwhile: read it again.
                        Err(StoreError::AlreadyExists) => continue,
                        Err(e) => Err(e),
                    }
                }
                (Reverted::Updated(mut next), Some(stored)) => {
                    let now =
                        std::mem::replace(&mut next.updated_at, stored.record.updated_at.clone());
                    if next == stored.record {
                        return Ok((Arc::clone(stored), false));
                    }
                    next.updated_at = now;
                    let write = self.storable(Some(&stored.record), next)?;
                    self.store
                        .update(&write, Expected::of(&stored.record, false), &author)
                        .await
                }
                (Reverted::Updated(_), None) => unreachable!("an update of no record"),
            };
            match written {
                Ok(stored) => return Ok((stored, false)),
                Err(StoreError::ConditionFailed) => pause(Duration::ZERO, MAX_BACKOFF).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy {
            endpoint: name.to_owned(),
            operation: gco_spec::ops::revert::OPERATION,
        })
    }
}
