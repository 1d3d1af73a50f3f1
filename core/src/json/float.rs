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

/// `repr(float)`: the shortest digits that round-trip, in positional notation
/// for exponents -4 to 15 (`0.0001`, `2.0`) and scientific outside (`1e-05`,
/// `1e+16`), as CPython's `float_repr_style = 'short'`.
pub fn float_repr(f: f64) -> String {
    let mut out = String::new();
    if f.is_nan() {
        out.push_str("nan");
        return out;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    if f.is_infinite() {
        out.push_str("inf");
        return out;
    }
    // The same shortest round-trip digits as CPython's repr.
    let (digits, exp) = shortest_digits(f);
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        // Positional, with zeros where the digits do not reach.
        let point = exp + 1;
        if point <= 0 {
            out.push_str("0.");
            for _ in point..0 {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let whole = point.min(n) as usize;
            out.push_str(&digits[..whole]);
            for _ in n..point {
                out.push('0');
            }
            out.push('.');
            out.push_str(if point < n { &digits[whole..] } else { "0" });
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(if exp < 0 { "e-" } else { "e+" });
        if exp.abs() < 10 {
            out.push('0');
        }
        out.push_str(&exp.unsigned_abs().to_string());
    }
    out
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

    #[test]
    fn floats_as_python_prints_them() {
        for (f, s) in [
            (2.0, "2.0"),
            (1e21, "1e+21"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.5e-7, "1.5e-07"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-12.5, "-12.5"),
            (0.30000000000000004, "0.30000000000000004"),
            (123.456, "123.456"),
            (0.001, "0.001"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1e22, "1e+22"),
            (-2.5e-300, "-2.5e-300"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(float_repr(f), s, "{f:e}");
        }
    }
}
