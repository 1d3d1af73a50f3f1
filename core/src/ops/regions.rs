//! add_region / remove_region (GCO_FACTS_NEWEST section 1.1): the targets,
//! the append-only cleanup history and a fresh generation token for the
//! region on every add and every removal, so its monitor's status writes
//! from before the change are fenced off.

use crate::deploy::TokenSource;
use crate::json::{Object, Value};
use crate::names::is_region;
use crate::record::Record;

use super::OpError;

/// Appends `region` to the targets. A region already targeted is no change
/// (GCO writes nothing); one targeted before keeps its place in the history.
pub(super) fn add(next: &mut Record, region: &str, tokens: &mut impl TokenSource) {
    if next.target_regions.iter().any(|r| r == region) {
        return;
    }
    next.target_regions.push(region.to_owned());
    remember(next, region, tokens);
}

/// Drops `region` from the targets, the last one too (the endpoint then
/// serves nowhere until a region is added). A region that is no target is
/// no change.
pub(super) fn remove(next: &mut Record, region: &str, tokens: &mut impl TokenSource) {
    if !next.target_regions.iter().any(|r| r == region) {
        return;
    }
    next.target_regions.retain(|r| r != region);
    remember(next, region, tokens);
}

/// The region joins the cleanup history if missing and gets a fresh token.
/// A record without the history (older GCO) is left for the monitors to
/// migrate (see `Record::cleanup_regions`).
fn remember(next: &mut Record, region: &str, tokens: &mut impl TokenSource) {
    if let Some(cleanup) = &mut next.cleanup_regions
        && !cleanup.iter().any(|r| r == region)
    {
        cleanup.push(region.to_owned());
    }
    let Some(generations) = &mut next.region_generations else {
        return;
    };
    generations.insert(region, tokens.token());
    // As GCO's store merges them: the tokens of the history's regions, in
    // its order, a missing or empty one minted.
    if let Some(cleanup) = &next.cleanup_regions {
        let mut ordered = Object::new();
        for r in cleanup {
            let token = generations
                .get(r)
                .filter(|t| t.is_truthy())
                .cloned()
                .unwrap_or_else(|| Value::from(tokens.token()));
            ordered.insert(r, token);
        }
        *generations = ordered;
    }
}

/// The region argument of an add or a removal, checked before the read.
pub(super) fn region_name(region: &Value) -> Result<String, OpError> {
    match region.as_str() {
        Some(r) if is_region(r) => Ok(r.to_owned()),
        _ => Err(OpError::invalid(
            "region",
            format!(
                "region must be an AWS region such as 'us-east-1', got {}",
                region.repr()
            ),
        )),
    }
}
