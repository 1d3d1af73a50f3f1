//! update_image (GCO_FACTS_NEWEST section 2.5): the stripped image, per-region
//! image URIs dropped; with `with_proxy`, the PD proxy's image too.

use crate::json::Value;
use crate::mooncake::Mode;
use crate::record::Record;
use crate::spec::spec_mode;

use super::{OpError, mooncake_of, set_block};

pub(super) fn check_arguments(image: &Value, with_proxy: &Value) -> Result<(), OpError> {
    image_text(image)?;
    match with_proxy {
        Value::Null | Value::Bool(_) => Ok(()),
        other => Err(OpError::invalid(
            "with_proxy",
            format!("with_proxy must be a boolean, got {}", other.repr()),
        )),
    }
}

pub(super) fn update_image(
    next: &mut Record,
    image: &Value,
    with_proxy: &Value,
) -> Result<(), OpError> {
    let image = image_text(image)?;
    if with_proxy.is_true() {
        if !spec_mode(&next.spec).is_some_and(Mode::is_split) {
            return Err(OpError::invalid(
                "with_proxy",
                format!(
                    "Endpoint '{}' runs no PD proxy: only the 'disaggregated' and 'both' modes have one.",
                    next.endpoint_name
                ),
            ));
        }
        let mut block = mooncake_of(&next.spec);
        let mut proxy = block
            .get("proxy")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        proxy.insert("image", image.as_str());
        block.insert("proxy", proxy);
        next.spec.insert("image", image);
        set_block(next, block)?;
    } else {
        next.spec.insert("image", image);
    }
    next.spec.remove("region_image_uris");
    Ok(())
}

fn image_text(image: &Value) -> Result<String, OpError> {
    match image.as_str().map(str::trim) {
        // GCO's update-image takes any text; the monitor's pods could not
        // pull one that is no reference, so the console refuses it.
        Some(s) if !s.is_empty() && !crate::names::is_image_reference(s) => Err(OpError::invalid(
            "image",
            format!(
                "image {} is not an image reference ([registry/]repository[:tag][@digest]; the repository in lowercase letters, digits, '.', '_', '-' and '/'): GCO's monitor could not pull it",
                crate::pyrepr::repr_text(s)
            ),
        )),
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err(OpError::invalid(
            "image",
            "Image must be a non-empty string",
        )),
    }
}
