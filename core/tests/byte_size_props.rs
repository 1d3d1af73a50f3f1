//! Properties of byte-size authoring and the human byte-size parser.

use gco_spec::{ByteSizeArg, author_byte_size, format_byte_size, json::Int, parse_byte_size};
use proptest::prelude::*;

proptest! {
    #[test]
    fn integers_author_to_their_decimal_text(n in 0i64..=i64::MAX) {
        prop_assert_eq!(author_byte_size(ByteSizeArg::Int(Int::Small(n))), Ok(n.to_string()));
    }

    #[test]
    fn negative_integers_are_out_of_range(n in i64::MIN..0) {
        let e = author_byte_size(ByteSizeArg::Int(Int::Small(n))).unwrap_err();
        prop_assert_eq!(e.to_string(), format!("byte-size value out of range [0, 9223372036854775807]: {n}"));
    }

    #[test]
    fn digit_strings_author_like_python_int(digits in "[0-9]{1,30}", pad_left in "[ \t\n\x0b\x0c\r\x1c-\x1f]{0,3}", pad_right in "[ \u{85}\u{a0}\u{3000}]{0,3}") {
        let text = format!("{pad_left}{digits}{pad_right}");
        let value: u128 = digits.parse().unwrap();
        let result = author_byte_size(ByteSizeArg::Str(text.as_str().into()));
        if value <= i64::MAX as u128 {
            prop_assert_eq!(result, Ok(value.to_string()));
        } else {
            let suffix = format!(": {}", value);
            prop_assert!(result.unwrap_err().to_string().ends_with(&suffix));
        }
    }

    #[test]
    fn anything_with_a_non_digit_is_refused(text in "[0-9]{0,5}[^0-9 \t\n\x0b\x0c\r\x1c-\x1f\u{85}\u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}][0-9]{0,5}") {
        let e = author_byte_size(ByteSizeArg::Str(text.as_str().into())).unwrap_err();
        prop_assert!(e.to_string().starts_with("byte-size value must be a base-10 integer string"));
    }

    #[test]
    fn formatted_sizes_parse_back(n in 0u64..=i64::MAX as u64) {
        let text = format_byte_size(&n.to_string()).unwrap();
        prop_assert_eq!(parse_byte_size(&text), Ok(n.to_string()));
    }

    #[test]
    fn units_multiply(n in 0u64..1_000_000, unit in prop::sample::select(vec![("KiB", 1024u128), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1000), ("GB", 1_000_000_000)]), space in prop::bool::ANY) {
        let sep = if space { " " } else { "" };
        let text = format!("{n}{sep}{}", unit.0);
        prop_assert_eq!(parse_byte_size(&text), Ok((n as u128 * unit.1).to_string()));
    }

    #[test]
    fn the_parser_never_panics(text in "\\PC{0,40}") {
        let _ = parse_byte_size(&text);
    }
}
