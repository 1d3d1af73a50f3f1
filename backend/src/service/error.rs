//! What the service answers when it cannot do what was asked.

use gco_spec::{OpError, Report};

use crate::auth::identity::Refusal;
use crate::store::{StoreError, Unreadable};

/// Why the service did not do what was asked; the API turns each into
/// its answer.
#[derive(Debug)]
pub enum ServiceError {
    NotFound(String),
    /// The request or the spec it makes is invalid (every diagnostic).
    Invalid(Report),
    AlreadyExists(String),
    /// The core refused the change.
    Refused(OpError),
    /// `If-Match` named a version whose content (what a change depends
    /// on) is no longer current.
    Stale,
    /// Contention outlasted every retry of the change `operation` (GCO's
    /// `<op>`: "scaled", "updated", ...), or a region's addition or removal
    /// lost its conditional write to another change, as GCO's raise.
    Busy {
        endpoint: String,
        operation: &'static str,
    },
    /// The store failed before anything was written (its error, for the
    /// log).
    Unavailable(StoreError),
    /// A write was sent but the store did not confirm it (it failed or
    /// stopped answering), so it may or may not have landed (its error, for
    /// the log).
    Unconfirmed(StoreError),
    /// A stored item is no record this service reads.
    Corrupt(Unreadable),
    /// The store wrote nothing, for the reason given (the history table
    /// missing or throttled), which names what failed.
    NotSaved(String),
    /// The history could not be read, for the reason given.
    HistoryUnavailable(String),
    /// The console records no history (`--history-table off`).
    HistoryOff,
    /// The endpoint has no history entry of this id.
    NoSuchEntry {
        endpoint: String,
        id: String,
    },
    /// The identity lacks the role the change needs (here: which depends
    /// on the endpoint's state, as a revert's does).
    Forbidden(Refusal),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> ServiceError {
        match e {
            StoreError::Corrupt(unreadable) => ServiceError::Corrupt(unreadable),
            StoreError::NotSaved(reason) => ServiceError::NotSaved(reason),
            // Creates and updates answer the others themselves; a read
            // never does.
            other => ServiceError::Unavailable(other),
        }
    }
}

impl ServiceError {
    /// A failed write: a store that stopped answering may still have applied
    /// it, so the client must not be told that nothing changed.
    pub(super) fn from_write(e: StoreError) -> ServiceError {
        match e {
            StoreError::Unavailable(_) => ServiceError::Unconfirmed(e),
            other => ServiceError::from(other),
        }
    }
}
