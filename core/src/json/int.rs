//! Integers of any size, as Python keeps them.

use std::cmp::Ordering;
use std::fmt;

/// An integer of any size. Values that fit an `i64` are `Small`; the rest keep
/// their canonical decimal text (`-` then digits, no leading zeros), which is
/// all the rules need: they compare against small bounds and print the value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Int {
    Small(i64),
    /// Canonical decimal text of a value outside the `i64` range.
    Big(Box<str>),
}

impl Int {
    /// Reads an optional `-` followed by ASCII digits (leading zeros allowed,
    /// as Python's `int()` allows them). `None` for anything else.
    #[inline]
    pub fn from_decimal(text: &str) -> Option<Int> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        // Every integer a spec holds is small: below 20 digits the magnitude
        // cannot overflow a u64, so each digit is checked and added in one
        // step, without overflow checks.
        if !digits.is_empty() && digits.len() < 20 {
            let magnitude = digits
                .bytes()
                .try_fold(0u64, |m, b| Some(m * 10 + decimal_digit(b)?))?;
            if let Some(v) = small(negative, magnitude) {
                return Some(Int::Small(v));
            }
        }
        Self::from_long_decimal(negative, digits)
    }

    /// [`Self::from_decimal`] for any length.
    #[cold]
    fn from_long_decimal(negative: bool, digits: &str) -> Option<Int> {
        if digits.is_empty() {
            return None;
        }
        // The magnitude while it fits a u64 (leading zeros add nothing).
        let mut magnitude = Some(0u64);
        for b in digits.bytes() {
            let d = decimal_digit(b)?;
            magnitude = magnitude.and_then(|m| m.checked_mul(10)?.checked_add(d));
        }
        if let Some(v) = magnitude.and_then(|m| small(negative, m)) {
            return Some(Int::Small(v));
        }
        let digits = digits.trim_start_matches('0');
        Some(Int::Big(
            if negative {
                format!("-{digits}")
            } else {
                digits.to_owned()
            }
            .into_boxed_str(),
        ))
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Int::Small(0))
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Int::Small(v) => *v < 0,
            Int::Big(t) => t.starts_with('-'),
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Int::Small(v) => Some(*v),
            Int::Big(_) => None,
        }
    }

    /// Compares with an `i64`. A `Big` lies outside the `i64` range, so its
    /// sign decides.
    pub fn cmp_i64(&self, other: i64) -> Ordering {
        match self {
            Int::Small(v) => v.cmp(&other),
            Int::Big(t) if t.starts_with('-') => Ordering::Less,
            Int::Big(_) => Ordering::Greater,
        }
    }

    /// `low <= self <= high`.
    pub fn in_range(&self, low: i64, high: i64) -> bool {
        self.cmp_i64(low) != Ordering::Less && self.cmp_i64(high) != Ordering::Greater
    }
}

/// The value of an ASCII digit.
#[inline(always)]
fn decimal_digit(b: u8) -> Option<u64> {
    Some(u64::from(b.wrapping_sub(b'0'))).filter(|&d| d <= 9)
}

/// `-magnitude` or `magnitude`, if an i64.
#[inline(always)]
fn small(negative: bool, magnitude: u64) -> Option<i64> {
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Int) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Int {
    fn cmp(&self, other: &Int) -> Ordering {
        match (self, other) {
            (Int::Small(a), Int::Small(b)) => a.cmp(b),
            (Int::Small(a), big) => big.cmp_i64(*a).reverse(),
            (big, Int::Small(b)) => big.cmp_i64(*b),
            (Int::Big(a), Int::Big(b)) => match (a.starts_with('-'), b.starts_with('-')) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                // Canonical text: a longer magnitude is larger.
                (false, false) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
                (true, true) => b.len().cmp(&a.len()).then_with(|| b.cmp(a)),
            },
        }
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Small(v) => write!(f, "{v}"),
            Int::Big(t) => f.write_str(t),
        }
    }
}

impl From<i64> for Int {
    fn from(v: i64) -> Int {
        Int::Small(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_canonicalises() {
        assert_eq!(Int::from_decimal("-0"), Some(Int::Small(0)));
        assert_eq!(Int::from_decimal("007"), Some(Int::Small(7)));
        assert_eq!(
            Int::from_decimal("9223372036854775807"),
            Some(Int::Small(i64::MAX))
        );
        assert_eq!(
            Int::from_decimal("-9223372036854775808"),
            Some(Int::Small(i64::MIN))
        );
        assert_eq!(
            Int::from_decimal("9223372036854775808")
                .unwrap()
                .to_string(),
            "9223372036854775808"
        );
        assert_eq!(
            Int::from_decimal("-000123456789012345678901")
                .unwrap()
                .to_string(),
            "-123456789012345678901"
        );
        assert_eq!(Int::from_decimal(""), None);
        assert_eq!(Int::from_decimal("-"), None);
        assert_eq!(Int::from_decimal("1.0"), None);
        assert_eq!(Int::from_decimal("+1"), None);
        assert_eq!(
            Int::from_decimal("999999999999999999"),
            Some(Int::Small(999_999_999_999_999_999))
        );
        assert_eq!(
            Int::from_decimal("-999999999999999999"),
            Some(Int::Small(-999_999_999_999_999_999))
        );
        assert_eq!(
            Int::from_decimal("0000000000000000000000001"),
            Some(Int::Small(1))
        );
        assert_eq!(
            Int::from_decimal("9999999999999999999")
                .unwrap()
                .to_string(),
            "9999999999999999999"
        );
        assert_eq!(
            Int::from_decimal("-9223372036854775809")
                .unwrap()
                .to_string(),
            "-9223372036854775809"
        );
        assert_eq!(
            Int::from_decimal("18446744073709551616")
                .unwrap()
                .to_string(),
            "18446744073709551616"
        );
    }

    #[test]
    fn orders_any_sizes() {
        let v = |t: &str| Int::from_decimal(t).unwrap();
        let mut xs = [
            v("-100000000000000000000"),
            v("5"),
            v("-99999999999999999999"),
            v("100000000000000000001"),
            v("100000000000000000000"),
            v("-3"),
        ];
        xs.sort();
        let s: Vec<String> = xs.iter().map(|i| i.to_string()).collect();
        assert_eq!(
            s,
            [
                "-100000000000000000000",
                "-99999999999999999999",
                "-3",
                "5",
                "100000000000000000000",
                "100000000000000000001"
            ]
        );
    }

    #[test]
    fn compares_big_values_by_sign() {
        let big = Int::from_decimal("100000000000000000000").unwrap();
        assert!(big.cmp_i64(i64::MAX).is_gt());
        assert!(!big.in_range(0, i64::MAX));
        let neg = Int::from_decimal("-100000000000000000000").unwrap();
        assert!(neg.cmp_i64(i64::MIN).is_lt());
        assert!(neg.is_negative());
    }
}
