//! Reading and printing floats as Python does, without Rust's float
//! parsing and formatting in the wasm build.
//!
//! Natively these are `str::parse` and `{:e}`: correctly rounded, and the
//! shortest digits that round-trip, as CPython's `float()` and `repr()`.
//! In the wasm builds (`js-builtins` feature on `wasm32`: the package and
//! the console) the same answers come from the JS engine (`parseFloat`,
//! `Number.prototype.toExponential()` with no argument: shortest round-trip
//! digits, the closest when several are shortest), which saves them Rust's
//! tables and code for both.

/// The float of a JSON number's text (`-`? digits, optional fraction and
/// exponent), correctly rounded as `float()`: `1e400` is `inf`, `-0.0` keeps
/// its sign, subnormals are exact.
#[cfg(not(all(target_arch = "wasm32", feature = "js-builtins")))]
pub(crate) fn parse_float(text: &str) -> f64 {
    text.parse().unwrap_or(f64::NAN)
}

#[cfg(all(target_arch = "wasm32", feature = "js-builtins"))]
pub(crate) fn parse_float(text: &str) -> f64 {
    js_sys::parse_float(text)
}

/// The shortest decimal digits that read back as `|f|` (finite), without
/// a point, and the decimal exponent of the first digit: `1234.5` gives
/// `("12345", 3)`, `0.0` gives `("0", 0)`, as `format!("{:e}")` splits them.
pub(crate) fn shortest_digits(f: f64) -> (String, i32) {
    let sci = scientific(f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    // `d` or `d.ddd`.
    let mut digits = mantissa.to_owned();
    if digits.len() > 1 {
        digits.remove(1);
    }
    // `-5`, `5` (Rust) or `+5` (JS).
    let e = exp
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0, |e, d| e * 10 + i32::from(d - b'0'));
    (digits, if exp.starts_with('-') { -e } else { e })
}

/// `d.ddde<exp>` (Rust) or `d.ddde±<exp>` (JS); both read by `shortest_digits`.
#[cfg(not(all(target_arch = "wasm32", feature = "js-builtins")))]
fn scientific(f: f64) -> String {
    format!("{f:e}")
}

#[cfg(all(target_arch = "wasm32", feature = "js-builtins"))]
fn scientific(f: f64) -> String {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// `Number.prototype.toExponential.call(f)`: no fraction digits
        /// given, so as many as it takes to round-trip and no more.
        #[wasm_bindgen(js_namespace = ["Number", "prototype", "toExponential"], js_name = call)]
        fn to_exponential(f: f64) -> String;
    }
    to_exponential(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_python_float() {
        assert_eq!(parse_float("1E2"), 100.0);
        assert_eq!(parse_float("1e400"), f64::INFINITY);
        assert_eq!(parse_float("-1e400"), f64::NEG_INFINITY);
        let neg_zero = parse_float("-0.0");
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
        assert_eq!(parse_float("5e-324").to_bits(), 1);
        assert_eq!(parse_float("2e-324"), 0.0);
        assert_eq!(parse_float("1.7976931348623157e308"), f64::MAX);
        assert_eq!(parse_float("1.7976931348623159e308"), f64::INFINITY);
        // Correct rounding: halfway cases go to even, long inputs are exact.
        assert_eq!(parse_float("9007199254740993"), 9007199254740992.0);
        assert_eq!(
            parse_float("9007199254740993.000000000000000000001"),
            9007199254740994.0
        );
        assert_eq!(parse_float("0.1"), 0.1);
        assert_eq!(
            parse_float("2.2250738585072011e-308").to_bits(),
            0x000F_FFFF_FFFF_FFFF
        );
    }

    #[test]
    fn shortest_round_trip_digits() {
        for (f, digits, exp) in [
            (0.0, "0", 0),
            (-0.0, "0", 0),
            (1.0, "1", 0),
            (100.0, "1", 2),
            (1234.5, "12345", 3),
            (0.1, "1", -1),
            (1e21, "1", 21),
            (1e-5, "1", -5),
            (1e23, "1", 23),
            (123456789012345678.0, "12345678901234568", 17),
            (5e-324, "5", -324),
            (f64::MAX, "17976931348623157", 308),
            (-12.5, "125", 1),
        ] {
            assert_eq!(shortest_digits(f), (digits.to_owned(), exp), "{f:e}");
        }
    }
}
