//! Tests of the grader itself, through the real binary: hostile learner code, compile errors,
//! and the first table a new learner sees.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{Scratch, fixture, json, result, root, xtask, xtask_with_state};

/// Linux only: the hostile fixture escapes its process group with `setsid -f`, a Linux command.
#[test]
#[cfg(target_os = "linux")]
fn hostile_code_fails_only_its_own_checks_and_leaves_no_process() {
    let state = Scratch::new("grader-hostile");
    let pid_file = state.join("sleeper.pid");
    let session_pid_file = state.join("session-sleeper.pid");
    let output = xtask()
        .args(["check", "ch08", "--format", "json", "--path"])
        .arg(fixture("hostile"))
        .arg("--checks-dir")
        .arg(fixture("hostile-checks"))
        .env("WORKBOOK_STATE_DIR", &state)
        .env("HOSTILE_PID_FILE", &pid_file)
        .env("HOSTILE_SESSION_PID_FILE", &session_pid_file)
        .output()
        .unwrap();
    let report = json(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failing grade exits with 1"
    );
    assert_eq!(report["schema"], "retry-workbook/check-report/v1");
    assert_eq!(
        result(&report, "cases.loops_forever")["status"],
        "timed_out"
    );
    assert_eq!(
        result(&report, "cases.sleeps_an_hour")["status"],
        "timed_out"
    );
    let panicked = result(&report, "cases.panics");
    assert_eq!(panicked["status"], "failed");
    assert_eq!(panicked["in_graded_code"], true);
    assert!(panicked["message"].as_str().unwrap().contains("gave up"));
    assert_eq!(result(&report, "cases.aborts")["status"], "crashed");
    assert_eq!(
        result(&report, "cases.floods_output")["status"],
        "output_flood"
    );
    let overflow = result(&report, "cases.overflows_stack");
    assert!(
        overflow["reason"]
            .as_str()
            .unwrap()
            .contains("stack overflowed"),
        "{overflow}"
    );
    let huge = result(&report, "cases.allocates_huge");
    assert!(
        huge["reason"].as_str().unwrap().contains("out of memory"),
        "{huge}"
    );
    let exited = result(&report, "cases.exits_early");
    assert!(
        exited["reason"].as_str().unwrap().contains("code 3"),
        "{exited}"
    );
    assert_eq!(result(&report, "cases.forks_a_sleeper")["status"], "passed");
    assert_eq!(
        result(&report, "cases.escapes_the_group")["status"],
        "passed"
    );
    // Its printed `ok` is not taken for the check's verdict.
    let forged = result(&report, "cases.forges_a_verdict");
    assert_eq!(forged["status"], "failed", "{forged}");
    assert_eq!(result(&report, "cases.passes")["status"], "passed");
    assert_eq!(report["score"], 3);
    assert_eq!(report["max_score"], 12);

    for (file, what) in [
        (&pid_file, "the sleeper the check forked"),
        (
            &session_pid_file,
            "the sleeper the check started with setsid -f",
        ),
    ] {
        let pid: u32 = std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            crate::common::process_is_gone(pid),
            "{what} (pid {pid}) is still running"
        );
    }
}

#[test]
fn compile_errors_show_the_learners_file_first() {
    let state = Scratch::new("grader-broken");
    let broken = fixture("broken");
    let output = xtask_with_state(
        &[
            "check",
            "ch08",
            "--path",
            broken.to_str().unwrap(),
            "--checks-dir",
            fixture("hostile-checks").to_str().unwrap(),
        ],
        &state,
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let find = |what: &str| {
        text.find(what)
            .unwrap_or_else(|| panic!("{what} is not shown:\n{text}"))
    };
    let first_error = find("error[");
    let learner_file = find("--> xtask/tests/fixtures/broken/src/lib.rs:4");
    let checks_file = find("--> xtask/tests/fixtures/hostile-checks/");
    assert!(
        first_error < learner_file && learner_file < checks_file,
        "{text}"
    );
    assert_eq!(text.matches("Start here").count(), 1, "said once:\n{text}");
    assert!(
        !text.contains('\x1b'),
        "no colour with NO_COLOR, however the checks were compiled:\n{text}"
    );
    assert!(
        first_lines(&text, 10).contains("Start here"),
        "said first:\n{text}"
    );
    assert!(
        text.contains("it does not compile, so no check could run"),
        "{text}"
    );
    assert!(
        text.contains(
            "Start here: fix the first error, at xtask/tests/fixtures/broken/src/lib.rs:4"
        ),
        "{text}"
    );
    assert!(
        !text.contains("target/workbook"),
        "the grader's plumbing leaks into the message:\n{text}"
    );
}

/// The first `count` lines of `text`.
fn first_lines(text: &str, count: usize) -> String {
    text.lines().take(count).collect::<Vec<_>>().join("\n")
}

/// `cargo xtask check <chapter>` on the untouched exercise, with its progress in a fresh
/// folder named after `name`: its output, after checking that it failed.
fn untouched(chapter: &str, name: &str) -> (Output, Scratch) {
    let state = Scratch::new(&format!("grader-{name}"));
    let output = xtask_with_state(&["check", chapter], &state);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    (output, state)
}

#[test]
fn an_untouched_chapter_puts_the_score_and_where_to_start_first_and_fits_a_screen() {
    let (output, state) = untouched("ch22", "brief");
    let text = String::from_utf8_lossy(&output.stdout);
    let lines = text.lines().count();
    assert!(lines <= 40, "{lines} lines:\n{text}");
    let top = first_lines(&text, 10);
    assert!(top.contains("Score 0/"), "{text}");
    assert!(
        top.contains("Start here: exercises/ch22-saga-retries/src/lib.rs:"),
        "{text}"
    );
    assert_eq!(
        text.matches("still a todo!()").count(),
        3 + 1,
        "the first three failed checks and the first failed visible test in full:\n{text}"
    );
    assert!(
        text.contains("add --verbose to see every row in full"),
        "{text}"
    );
    assert!(!text.contains("1 steps"), "{text}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains('\x1b'),
        "no escape codes outside a terminal: {stderr:?}"
    );

    let verbose = xtask_with_state(&["check", "ch22", "--verbose"], &state);
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(first_lines(&text, 10).contains("Start here"), "{text}");
    let rows = text
        .lines()
        .filter(|line| line.starts_with("  ✗  "))
        .count();
    assert_eq!(
        rows,
        35 + 4,
        "every check and visible test has its row:\n{text}"
    );
    assert!(!text.contains("--verbose"), "{text}");
}

#[test]
fn a_failed_assertion_of_a_visible_test_reads_as_the_tests() {
    let state = Scratch::new("grader-visible-assertion");
    let copy = solution_copy("visible-assertion");
    std::fs::create_dir_all(copy.join("tests")).unwrap();
    std::fs::write(
        copy.join("tests/visible.rs"),
        "#[test]\nfn three_is_expected() {\n    assert_eq!(1 + 1, 3, \"the test expects three\");\n}\n",
    )
    .unwrap();
    let output = xtask_with_state(&["check", "ch08", "--path", copy.to_str().unwrap()], &state);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("the test's assertion at ")
            && text.contains("tests/visible.rs:3:5 failed: the test expects three"),
        "{text}"
    );
    assert!(!text.contains("your code panicked"), "{text}");
}

#[test]
fn a_plain_line_says_what_runs_when_stderr_is_not_a_terminal() {
    // The hostile checks take more than three seconds: the run together waits out a hung check,
    // then each hung check runs alone under its limit.
    let state = Scratch::new("grader-plain-status");
    let output = xtask()
        .args(["check", "ch08", "--path"])
        .arg(fixture("hostile"))
        .arg("--checks-dir")
        .arg(fixture("hostile-checks"))
        // Plain because stderr is a pipe, not because colour is turned off.
        .env_remove("NO_COLOR")
        .env("WORKBOOK_STATE_DIR", &state)
        .env("HOSTILE_PID_FILE", state.join("sleeper.pid"))
        .env(
            "HOSTILE_SESSION_PID_FILE",
            state.join("session-sleeper.pid"),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with("Running ") && line.contains(" s")),
        "{stderr}"
    );
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    assert!(!stderr.contains('\r'), "{stderr:?}");
}

#[test]
fn the_untouched_exercise_fails_with_a_table_that_says_where_to_start() {
    let (output, state) = untouched("ch08", "start");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("✗  jitter.not_deterministic"), "{text}");
    assert!(text.contains("still a todo!()"), "{text}");
    assert!(text.contains("→ book §8.3"), "{text}");
    assert!(text.contains("Score 0/"), "{text}");
    assert!(
        text.contains("Start here: exercises/ch08-full-jitter/src/lib.rs:"),
        "{text}"
    );
    assert!(text.contains("cargo xtask hint ch08"), "{text}");
    let progress = std::fs::read_to_string(state.join("progress.json")).unwrap();
    assert!(
        progress.contains("\"ch08\""),
        "the attempt is recorded: {progress}"
    );
}

#[test]
fn the_solution_passes_and_the_json_report_is_complete() {
    let state = Scratch::new("grader-solution");
    let output = xtask_with_state(&["check", "ch08", "--solution", "--format", "json"], &state);
    assert_eq!(output.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["passed"], true);
    assert_eq!(report["score"], report["max_score"]);
    for row in report["results"].as_array().unwrap() {
        assert_eq!(row["status"], "passed", "{row}");
    }
    assert!(
        !state.join("progress.json").exists(),
        "grading the solution records no progress"
    );
}

#[test]
fn a_manifest_error_names_the_chapter() {
    let state = Scratch::new("grader-unknown");
    let output = xtask_with_state(&["check", "ch99"], &state);
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(text.contains("there is no chapter `ch99`"), "{text}");
}

#[test]
fn a_mistyped_command_gets_the_one_it_resembles_and_the_cargo_xtask_usage() {
    let state = Scratch::new("grader-mistyped");
    for (typed, meant) in [
        (vec!["chek"], "'check'"),
        (vec!["check", "--solutoin"], "'--solution'"),
    ] {
        let output = xtask_with_state(&typed, &state);
        let text = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(
            text.contains(meant),
            "{typed:?} should suggest {meant}: {text}"
        );
        assert!(text.contains("Usage: cargo xtask "), "{text}");
    }
}

#[test]
fn the_solution_command_shows_the_files_the_learner_writes() {
    let state = Scratch::new("grader-solution-files");
    let suite = xtask_with_state(&["solution", "ch14", "--force"], &state);
    let text = String::from_utf8_lossy(&suite.stdout);
    assert!(suite.status.success(), "{text}");
    assert!(
        text.starts_with("// solutions/ch14-testing-retry-code/src/suite.rs"),
        "ch14's learner writes the suite, so it comes first:\n{}",
        &text[..text.len().min(300)]
    );
    assert!(
        text.contains("#[tokio::test"),
        "the reference tests are shown"
    );
    assert!(
        !text.contains("// ANCHOR"),
        "the book's markers are left out"
    );
    let jitter = xtask_with_state(&["solution", "ch08", "--force"], &state);
    let text = String::from_utf8_lossy(&jitter.stdout);
    assert!(
        text.contains("// solutions/ch08-full-jitter/src/lib.rs"),
        "{text}"
    );
    assert!(
        !text.contains("src/stubs.rs"),
        "given files are the learner's already:\n{text}"
    );
}

/// A copy of the ch08 solution under target/, where its manifest still finds the workspace.
fn solution_copy(name: &str) -> Scratch {
    let dir = Scratch::in_target(name);
    let solution = root().join("solutions/ch08-full-jitter");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for file in ["Cargo.toml", "src/lib.rs", "src/stubs.rs"] {
        std::fs::copy(solution.join(file), dir.join(file)).unwrap();
    }
    dir
}

/// The text of a copy's `lib.rs`, and that text with full jitter's range halved (a wrong
/// solution).
fn correct_and_halved(lib: &Path) -> (String, String) {
    let correct = std::fs::read_to_string(lib).unwrap();
    let halved = correct.replacen(
        "rng.random_range(Duration::ZERO..=ceiling)",
        "rng.random_range(Duration::ZERO..=ceiling / 2)",
        1,
    );
    assert_ne!(halved, correct, "the edit applies");
    (correct, halved)
}

/// The report of `cargo xtask check ch08 --format json --path <copy>`.
fn check_copy(copy: &Path, state: &Path) -> Value {
    let output = xtask_with_state(
        &[
            "check",
            "ch08",
            "--format",
            "json",
            "--path",
            copy.to_str().unwrap(),
        ],
        state,
    );
    json(&output)
}

#[test]
fn a_printed_verdict_is_not_taken_for_a_check() {
    // Full jitter without the jitter, which prints the line libtest prints for a passing check
    // for the two checks it fails. Its output shares stdout with libtest's verdicts.
    let state = Scratch::new("grader-forged");
    let copy = solution_copy("forged");
    let lib = copy.join("src/lib.rs");
    let correct = std::fs::read_to_string(&lib).unwrap();
    let forged = correct.replacen(
        "rng.random_range(Duration::ZERO..=ceiling)",
        "{ let _ = rng; println!(\"test jitter::not_deterministic ... ok\\ntest jitter::uniform ... ok\"); ceiling }",
        1,
    );
    assert_ne!(forged, correct, "the edit applies");
    std::fs::write(&lib, forged).unwrap();
    let report = check_copy(&copy, &state);
    for id in ["jitter.not_deterministic", "jitter.uniform"] {
        assert_eq!(
            result(&report, id)["status"],
            "failed",
            "{id}: a printed `ok` is not the check's verdict"
        );
    }
}

#[test]
fn an_edit_is_compiled_by_rustc_alone_until_a_manifest_changes() {
    let state = Scratch::new("grader-replay");
    let copy = solution_copy("replay");
    // (passed, compiled without cargo)
    let check = || {
        let report = check_copy(&copy, &state);
        (report["passed"] == true, report["build_replayed"] == true)
    };
    assert_eq!(check(), (true, false), "the first build is cargo's");
    let lib = copy.join("src/lib.rs");
    let (correct, halved) = correct_and_halved(&lib);
    std::fs::write(&lib, &halved).unwrap();
    assert_eq!(check(), (false, true), "an edit of a source: rustc alone");
    std::fs::write(&lib, &correct).unwrap();
    assert_eq!(check(), (true, true), "and back");
    let manifest = copy.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n# a manifest that changed may build differently\n");
    std::fs::write(&manifest, text).unwrap();
    std::fs::write(&lib, &halved).unwrap();
    assert_eq!(check(), (false, false), "a manifest changed: cargo builds");
    std::fs::write(&lib, &correct).unwrap();
    assert_eq!(check(), (true, true), "then rustc alone again");
    let broken = correct.replacen("let ceiling =", "let ceiling: u8 =", 1);
    std::fs::write(&lib, &broken).unwrap();
    let report = check_copy(&copy, &state);
    assert_eq!(report["compiled"], false);
    let first = &report["compile_failure"]["errors"][0];
    assert_eq!(first["in_graded_crate"], true, "{report:#}");
    let file = first["file"].as_str().unwrap();
    assert!(
        file.ends_with("src/lib.rs") && !file.contains("target/workbook"),
        "a compiler error from rustc alone names the learner's file: {file}"
    );
}

#[test]
fn a_crate_the_merge_cannot_hold_is_graded_as_a_dependency() {
    // A module of the crate takes the name the merged harness gives the checks, and a unit test
    // of its own would fail to compile anywhere but in the crate's own tests.
    let state = Scratch::new("grader-separate");
    let copy = solution_copy("separate");
    let lib = copy.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str("\npub mod workbook_checks {}\n");
    std::fs::write(&lib, text).unwrap();
    let report = check_copy(&copy, &state);
    assert_eq!(report["passed"], true, "{report:#}");
    // Merged, the crate still compiles as the library the checks use: without its own unit
    // tests (which do not compile here), and with what it keeps for a build that is not a test.
    let merged = solution_copy("unit-tests");
    let lib = merged.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap().replacen(
        "rng.random_range(Duration::ZERO..=ceiling)",
        "rng.random_range(Duration::ZERO..=ceiling / DIVISOR)",
        1,
    ) + "\n#[cfg(not(test))]\nconst DIVISOR: u32 = 1;\n#[cfg(test)]\nconst DIVISOR: u32 = 2;\n\
         #[cfg(test)]\nmod tests {\n    #[test]\n    fn mine() {\n        let x: u8 = \"not a number\";\n    }\n}\n";
    std::fs::write(&lib, text).unwrap();
    let report = check_copy(&merged, &state);
    assert_eq!(
        report["passed"], true,
        "the crate is graded as its library, not as its own test build: {report:#}"
    );
}

#[test]
fn private_checks_that_name_the_crate_root_are_still_graded() {
    // An instructor's checks written before checks reached `support` by `super::`.
    let state = Scratch::new("grader-crate-root-checks");
    let checks = state.join("checks");
    std::fs::create_dir_all(checks.join("ch08")).unwrap();
    let fixture = fixture("private-checks/ch08");
    for file in ["chapter.toml", "private.rs"] {
        let text = std::fs::read_to_string(fixture.join(file)).unwrap();
        let text = text.replace("use super::support::", "use crate::support::");
        std::fs::write(checks.join("ch08").join(file), text).unwrap();
    }
    let output = xtask_with_state(
        &[
            "check",
            "ch08",
            "--solution",
            "--format",
            "json",
            "--checks-dir",
            checks.to_str().unwrap(),
        ],
        &state,
    );
    let report = json(&output);
    assert_eq!(report["passed"], true, "{report:#}");
    assert_eq!(
        result(&report, "private.ceiling_reaches_the_cap")["status"],
        "passed"
    );
}

#[test]
fn an_unchanged_crate_reuses_its_build_and_an_edit_never_does() {
    let state = Scratch::new("grader-reuse");
    let copy = solution_copy("reuse");
    let check = || {
        let report = check_copy(&copy, &state);
        (report["passed"] == true, report["build_reused"] == true)
    };
    assert_eq!(check(), (true, false), "the first check builds");
    assert_eq!(
        check(),
        (true, true),
        "nothing changed: the build is reused"
    );
    let lib = copy.join("src/lib.rs");
    let (correct, halved) = correct_and_halved(&lib);
    std::fs::write(&lib, &halved).unwrap();
    assert_eq!(check(), (false, false), "an edit is compiled and graded");
    std::fs::write(&lib, &correct).unwrap();
    assert_eq!(
        check(),
        (true, false),
        "going back to an earlier text is an edit too"
    );
    assert_eq!(check(), (true, true));
    // The wrong text comes back with a time from long before the last build, as a copy that
    // keeps times (Finder, Explorer, `cp -p`) puts it back: it is graded all the same.
    std::fs::write(&lib, &halved).unwrap();
    let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
    let file = std::fs::File::options().write(true).open(&lib).unwrap();
    file.set_modified(long_ago).unwrap();
    drop(file);
    assert_eq!(
        check(),
        (false, false),
        "a changed file that looks older than the last build is compiled and graded"
    );
}
