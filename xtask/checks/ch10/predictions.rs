//! The "predict, then run" record: `predictions.toml` must be filled in.

use exercise::PREDICTIONS;

/// Every key the file must hold.
const KEYS: [&str; 7] = [
    "calls_no_backoff",
    "calls_exponential",
    "calls_full_jitter",
    "calls_equal_jitter",
    "calls_decorrelated",
    "fewest_calls",
    "fastest",
];

/// The `key = value` lines, comments dropped and quotes removed.
fn entries(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| {
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            (key.trim().to_owned(), value.trim().to_owned())
        })
        .collect()
}

#[test]
fn filled_in() {
    let entries = entries(PREDICTIONS);
    let absent: Vec<&str> = KEYS
        .into_iter()
        .filter(|key| !entries.iter().any(|(k, _)| k == key))
        .collect();
    assert!(
        absent.is_empty(),
        "src/predictions.toml has no line for {}; put the file back as it came (`key = \"\"` for \
         each) and fill in every value",
        absent.join(", "),
    );
    let empty: Vec<&str> = entries
        .iter()
        .filter(|(_, value)| value.is_empty())
        .map(|(key, _)| key.as_str())
        .collect();
    assert!(
        empty.is_empty(),
        "src/predictions.toml is not filled in: {} of its {} values are empty ({}). Write down \
         your predictions before you run the lab; any answer counts, a wrong one teaches most",
        empty.len(),
        entries.len(),
        empty.join(", "),
    );
}
