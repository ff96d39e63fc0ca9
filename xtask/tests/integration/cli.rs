//! The command line behaves like a good command-line tool, through the real binary: a reader
//! that goes away ends a command quietly, and a chapter can be named the ways a learner names it.

use std::path::Path;
use std::process::{Output, Stdio};

use crate::common::{Scratch, xtask};

/// `cargo xtask <args>` in the repository, with its progress kept in `state` and its stdout
/// given to `stdout`.
fn xtask_to(args: &[&str], state: &Path, stdout: Stdio) -> Output {
    xtask()
        .args(args)
        .env("WORKBOOK_STATE_DIR", state)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the xtask binary runs")
}

/// `cargo xtask <args>` with the language variables set as `vars` says (the others removed).
fn xtask_in(args: &[&str], state: &Path, vars: &[(&str, &str)]) -> String {
    let mut command = xtask();
    command
        .args(args)
        .env("WORKBOOK_STATE_DIR", state)
        .stdin(Stdio::null());
    for name in ["WORKBOOK_LANG", "LC_ALL", "LC_MESSAGES", "LANG"] {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    let output = command.output().expect("the xtask binary runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_grader_speaks_japanese_to_a_japanese_learner() {
    let state = Scratch::new("cli-ja");
    // The untouched exercise fails: the report, its next steps and its book links in Japanese.
    let report = xtask_in(&["check", "ch01"], &state, &[("WORKBOOK_LANG", "ja")]);
    for words in [
        "得点 0/",
        "ここから始めましょう:",
        "チェック",
        "公開テスト",
        "本書 §1.",
    ] {
        assert!(report.contains(words), "{words}: {report}");
    }
    assert!(
        report.contains("book/build/ja/ch01-strong-medicine.html#"),
        "a link to the Japanese page: {report}"
    );
    assert!(!report.contains("Start here"), "{report}");
    // A locale beginning with `ja` chooses Japanese; `--lang` wins over everything.
    let hint = xtask_in(
        &["hint", "ch01", "--again"],
        &state,
        &[("LANG", "ja_JP.UTF-8")],
    );
    assert!(hint.contains("ch01 のヒント 1/"), "{hint}");
    let hint = xtask_in(
        &["--lang", "en", "hint", "ch01", "--again"],
        &state,
        &[("WORKBOOK_LANG", "ja")],
    );
    assert!(hint.contains("Hint 1 of"), "{hint}");
    let hint = xtask_in(&["hint", "ch01", "--again", "--lang", "ja"], &state, &[]);
    assert!(hint.contains("ch01 のヒント 1/"), "{hint}");
}

#[test]
fn a_reader_that_goes_away_ends_every_command_quietly() {
    let state = Scratch::new("cli-pipe");
    for args in [
        &["hint", "ch01"][..],
        &["hint", "ch01", "--again"],
        &["list"],
        &["solution", "ch08", "--force"],
        &["reset", "--help"],
    ] {
        // The reader is gone before the command writes anything, as with `| true`.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = xtask_to(args, &state, writer.into());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?} says nothing of the closed pipe");
    }
}

#[test]
fn a_chapter_is_named_by_id_number_folder_or_slug() {
    let state = Scratch::new("cli-names");
    for name in ["ch08", "8", "08", "ch08-full-jitter", "full-jitter"] {
        let output = xtask_to(&["hint", name, "--again"], &state, Stdio::piped());
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{name}: {stdout}");
        assert!(stdout.contains("Hint 1 of 4 for ch08"), "{name}: {stdout}");
    }
    let graded = xtask_to(
        &[
            "check",
            "ch08-full-jitter",
            "--solution",
            "--format",
            "json",
        ],
        &state,
        Stdio::piped(),
    );
    let report: serde_json::Value = serde_json::from_slice(&graded.stdout).unwrap();
    assert_eq!(report["chapter"], "ch08", "the folder name grades ch08");
    assert_eq!(report["passed"], true);
}

#[test]
fn a_mistyped_chapter_gets_the_nearest_with_its_title() {
    let state = Scratch::new("cli-typo");
    for typo in ["full-jiter", "ch08-full-jiter"] {
        let output = xtask_to(&["check", typo], &state, Stdio::piped());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "there is no chapter `{typo}`; did you mean ch08 · Full jitter"
            )),
            "{stderr}"
        );
    }
    let output = xtask_to(&["hint", "banana"], &state, Stdio::piped());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ch22 · Retry design inside a saga"),
        "nothing near: every chapter with its title\n{stderr}"
    );
}
