//! What a learner's test suite may not do, read from its text before it earns anything: reach
//! outside the code under test (files, the environment, the process, the network), or carry a
//! copy of the code under test to compare against.
//!
//! A suite that reads `retry.rs`, its folder or its environment can tell the shipped code from a
//! mutant without testing any behaviour; one that holds a copy of the code passes exactly when
//! the code equals itself. Neither teaches what the chapter grades, so both are refused with the
//! place that does it.

use std::collections::HashSet;

use crate::curriculum::shown_answers::{RUN_TOKENS, Token, tokens};
use crate::lang::words::{Key, tf};

/// Names that reach outside the code under test wherever they appear as code: the modules and
/// types that read files, the environment, the process or the network, and the macros that read
/// files or the environment at compile time.
const OUTSIDE: &[&str] = &[
    "fs",
    "env",
    "process",
    "net",
    "os",
    "File",
    "OpenOptions",
    "Command",
    "TcpStream",
    "UdpSocket",
    "temp_dir",
    "current_exe",
    "current_dir",
    "read_to_string",
    "read_dir",
    "include",
    "include_str",
    "include_bytes",
    "option_env",
];

/// Macros whose name alone is an ordinary word: refused only when called.
const OUTSIDE_MACROS: &[&str] = &["file"];

/// The share of the code under test's tokens that a suite may repeat, in runs of
/// [`COPY_RUN_TOKENS`], before it counts as a copy: a test names functions, types and a few
/// literals, never half the file.
const COPIED_SHARE: f64 = 0.4;

/// A run of this many tokens of the same shape (every word alike, punctuation as it is) counts
/// towards a copy: twice the page rule's run, since a suite calls the same functions.
const COPY_RUN_TOKENS: usize = 2 * RUN_TOKENS;

/// Why the suite's files are refused, or `None`. `files` are the suite's Rust files (relative
/// path, text), the code under test left out; `under_test` is the code under test's text.
pub fn refusal(files: &[(String, String)], under_test: &[(String, String)]) -> Option<String> {
    let mut suite = Vec::new();
    for (file, text) in files {
        let file_tokens = tokens(text);
        if let Some((line, name)) = reaches_outside(&file_tokens) {
            return Some(tf(Key::SuiteReachesOutside, &[file, &line, &name]));
        }
        suite.extend(file_tokens);
    }
    let suite = shapes(&suite);
    let runs: HashSet<&[String]> = suite.windows(COPY_RUN_TOKENS).collect();
    for (file, text) in under_test {
        let share = copied_share(&shapes(&tokens(text)), &runs);
        if share >= COPIED_SHARE {
            let percent = format!("{:.0}", share * 100.0);
            return Some(tf(Key::SuiteHoldsCopy, &[file, &percent]));
        }
    }
    None
}

/// The line and name of the first token of code (not of a string) that reaches outside.
fn reaches_outside(tokens: &[Token]) -> Option<(usize, &str)> {
    let code: Vec<&Token> = tokens.iter().filter(|t| !t.in_string).collect();
    code.iter().enumerate().find_map(|(i, token)| {
        let name = token.text.as_str();
        let called = code.get(i + 1).is_some_and(|next| next.text == "!");
        let path_attribute = name == "path"
            && i > 0
            && code[i - 1].text == "["
            && code.get(i + 1).is_some_and(|next| next.text == "=");
        (OUTSIDE.contains(&name) || (called && OUTSIDE_MACROS.contains(&name)) || path_attribute)
            .then_some((token.line, name))
    })
}

/// Tokens by shape: every word alike, punctuation as it is, so renaming changes nothing.
fn shapes(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .map(|t| {
            if t.text
                .chars()
                .all(crate::curriculum::shown_answers::is_ident)
            {
                "w".to_owned()
            } else {
                t.text.clone()
            }
        })
        .collect()
}

/// The share of `original` (tokens by shape) that lies in runs of [`COPY_RUN_TOKENS`] found among
/// the suite's `runs`.
fn copied_share(original: &[String], runs: &HashSet<&[String]>) -> f64 {
    let mut covered = vec![false; original.len()];
    for (start, window) in original.windows(COPY_RUN_TOKENS).enumerate() {
        if runs.contains(window) {
            covered[start..start + COPY_RUN_TOKENS].fill(true);
        }
    }
    let copied = covered.iter().filter(|&&c| c).count();
    copied as f64 / original.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn files(text: &str) -> Vec<(String, String)> {
        vec![("src/suite.rs".to_owned(), text.to_owned())]
    }

    const UNDER_TEST: &str = "
        pub fn ceiling(retry: u32, base: u64, cap: u64) -> u64 {
            let doubled = base.saturating_mul(1u64 << retry.min(63));
            if doubled > cap { cap } else { doubled }
        }
        pub fn attempts(results: &[bool], limit: usize) -> usize {
            let mut made = 0;
            for ok in results.iter().take(limit) {
                made += 1;
                if *ok { break; }
            }
            made
        }
    ";

    fn under_test() -> Vec<(String, String)> {
        vec![("src/retry.rs".to_owned(), UNDER_TEST.to_owned())]
    }

    #[test]
    fn a_suite_that_only_calls_the_code_passes() {
        let suite = "
            use super::retry::*;
            // Reads no file: std::fs is named only in this comment.
            #[test]
            fn doubles_until_the_cap() {
                let note = \"a string may say env or fs\";
                assert_eq!(ceiling(3, 10, 1000), 80, \"{note}\");
                assert_eq!(attempts(&[false, true], 5), 2);
            }
        ";
        assert_eq!(refusal(&files(suite), &under_test()), None);
    }

    #[test]
    fn reading_the_source_the_environment_or_a_file_is_refused() {
        for (line, name) in [
            ("let text = include_str!(\"retry.rs\");", "include_str"),
            ("let mark = std::env::var(\"WORKBOOK_SANDBOX\");", "env"),
            ("use std::{fs as disk};", "fs"),
            ("let here = file!();", "file"),
            ("let pid = std::process::id();", "process"),
            ("#[path = \"/elsewhere/retry.rs\"] mod oracle;", "path"),
        ] {
            let suite = format!("#[test]\nfn t() {{\n    {line}\n}}\n");
            let refused = refusal(&files(&suite), &under_test()).unwrap_or_default();
            assert!(
                refused.starts_with(&format!("src/suite.rs:3 uses `{name}`")),
                "{line}: {refused}"
            );
        }
    }

    #[test]
    fn a_name_that_is_only_a_word_of_the_learners_is_kept() {
        let suite = "fn file(path: u32) -> u32 { path }\n#[test]\nfn t() { let file = file(1); }";
        assert_eq!(refusal(&files(suite), &under_test()), None);
    }

    #[test]
    fn the_reference_suite_is_far_from_a_copy() {
        // The grader reads only the files the learner wrote or changed: here the suite.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
        let retry = read("exercises/ch14-testing-retry-code/src/retry.rs");
        let suite = read("solutions/ch14-testing-retry-code/src/suite.rs");
        let suite_shapes = shapes(&tokens(&suite));
        let runs: HashSet<&[String]> = suite_shapes.windows(COPY_RUN_TOKENS).collect();
        let share = copied_share(&shapes(&tokens(&retry)), &runs);
        assert!(share < COPIED_SHARE / 4.0, "{share}");
        assert_eq!(
            refusal(
                &[("src/suite.rs".to_owned(), suite)],
                &[("src/retry.rs".to_owned(), retry)]
            ),
            None
        );
    }

    #[test]
    fn a_copy_of_the_code_under_test_is_refused_even_renamed() {
        let renamed = UNDER_TEST
            .replace("ceiling", "oracle_ceiling")
            .replace("attempts", "oracle_attempts")
            .replace("doubled", "d");
        let suite = format!("mod oracle {{ {renamed} }}\n#[test]\nfn same() {{}}");
        let refused = refusal(&files(&suite), &under_test()).unwrap_or_default();
        assert!(
            refused.starts_with("your tests hold a copy of src/retry.rs"),
            "{refused}"
        );
    }
}
