//! Arbitrary text as a share link's fragment and as the JSON it inflates
//! to (inflating is the browser's): no panic, a clear refusal or an object,
//! and compressed bytes survive the link's encoding.
#![no_main]

use gco_spec::json::Value;
use gco_spec::share::{self, LinkError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = share::compressed_of_link(text);
        let _ = share::compressed_of_link(&format!("{}{text}", share::PREFIX));
        match share::state_of_json(text) {
            Ok(state) => assert!(matches!(state, Value::Object(_))),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    match share::link_of_compressed(data) {
        Ok(link) => assert_eq!(share::compressed_of_link(&link).as_deref(), Ok(data)),
        Err(e) => assert!(matches!(e, LinkError::TooLong { .. })),
    }
});
