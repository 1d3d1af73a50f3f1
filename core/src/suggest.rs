//! "Did you mean" suggestions for misspelt names.

/// The known name closest to `input`, when it is close enough to be a typo:
/// at most one edit for short names, two for longer ones; else a known name
/// that starts with it (`prefill` -> `prefill_replicas`).
pub fn did_you_mean<'a>(input: &str, known: &[&'a str]) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    let limit = if input.chars().count() <= 4 { 1 } else { 2 };
    let close = known
        .iter()
        .map(|k| (edit_distance(&input, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k);
    close.or_else(|| {
        let stem = input.get(..input.len().saturating_sub(1)).unwrap_or("");
        (stem.len() >= 4)
            .then(|| {
                known
                    .iter()
                    .filter(|k| k.starts_with(stem))
                    .min_by_key(|k| k.len())
                    .copied()
            })
            .flatten()
    })
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
        assert_eq!(
            did_you_mean("prefil", &["prefill_replicas", "decode_replicas"]),
            Some("prefill_replicas")
        );
    }
}
