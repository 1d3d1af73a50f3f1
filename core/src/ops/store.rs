//! configure_store (GCO_FACTS_NEWEST section 2.4): the new
//! `spec.mooncake.store` block, which replaces the old one, its byte sizes
//! authored as the reference writes them.

use crate::bytesize::{ByteSizeArg, author_byte_size};
use crate::json::Value;
use crate::limits::MOONCAKE_STORE_BYTE_SIZE_FIELDS;
use crate::record::Record;

use super::{OpError, mooncake_of, set_block};

pub(super) fn check_arguments(store: &Value) -> Result<(), OpError> {
    match store {
        Value::Object(_) => Ok(()),
        other => Err(OpError::invalid(
            "store",
            format!("store settings must be a mapping, got {}", other.repr()),
        )),
    }
}

pub(super) fn configure_store(next: &mut Record, store: &Value) -> Result<(), OpError> {
    let mut settings = store.as_object().cloned().unwrap_or_default();
    for field in MOONCAKE_STORE_BYTE_SIZE_FIELDS {
        if let Some(v) = settings.get(field) {
            let authored = author_byte_size(ByteSizeArg::from(v)).map_err(|e| {
                OpError::invalid(
                    format!("mooncake.store.{field}"),
                    format!("mooncake.store.{field}: {e}"),
                )
            })?;
            settings.insert(field, authored);
        }
    }
    let mut block = mooncake_of(&next.spec);
    block.insert("store", settings);
    set_block(next, block)
}
