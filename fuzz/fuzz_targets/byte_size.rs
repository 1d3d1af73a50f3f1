//! Arbitrary text through the byte-size parser (`4GiB`, `4 GB`, ...) and the
//! reference's `author_byte_size`: no panic, and what parses formats back to
//! text that parses to the same canonical size.
#![no_main]

use std::borrow::Cow;

use gco_spec::bytesize::{ByteSizeArg, author_byte_size, format_byte_size, parse_byte_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(canonical) = parse_byte_size(text) {
        let human = format_byte_size(&canonical).expect("a parsed size formats");
        assert_eq!(parse_byte_size(&human).as_deref(), Ok(canonical.as_str()), "{text:?} -> {canonical} -> {human:?}");
        assert_eq!(author_byte_size(ByteSizeArg::Str(Cow::Borrowed(&canonical))).as_deref(), Ok(canonical.as_str()));
    }
    if let Ok(authored) = author_byte_size(ByteSizeArg::Str(Cow::Borrowed(text))) {
        assert_eq!(parse_byte_size(&authored).as_deref(), Ok(authored.as_str()), "{text:?} authored as {authored}");
    }
});
