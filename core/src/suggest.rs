//! "Did you mean" suggestions for misspelt names.

/// The known name closest to `input`, when it is close enough to be a typo:
/// at most one edit for short names, two for longer ones.
pub fn did_you_mean<'a>(input: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = if input.chars().count() <= 4 { 1 } else { 2 };
    known
        .iter()
        .map(|k| (edit_distance(&input.to_ascii_lowercase(), k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over chars, with one row of memory.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let known = ["prefill", "decode", "mode"];
        assert_eq!(did_you_mean("prefil", &known), Some("prefill"));
        assert_eq!(did_you_mean("Decode", &known), Some("decode"));
        assert_eq!(did_you_mean("mdoe", &known), None);
        assert_eq!(did_you_mean("nodes", &known), Some("mode"));
        assert_eq!(did_you_mean("zzzzzz", &known), None);
    }
}
