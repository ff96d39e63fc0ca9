//! Grading a learner's tests: a suite is run against the shipped code and against hidden mutants.
//! The "learner" here tests ch08's given stub, through a private learner-tests rubric.

use serde_json::Value;

use crate::common::{Scratch, fixture, json, result, root, xtask};

/// A copy of the ch08 exercise with `suite` as its test module. It lives under target/ so that
/// its manifest still finds the workspace it inherits from.
fn learner_crate(name: &str, suite: &str) -> Scratch {
    let dir = Scratch::in_target(&format!("suite-{name}"));
    let exercise = root().join("exercises/ch08-full-jitter");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::copy(exercise.join("Cargo.toml"), dir.join("Cargo.toml")).unwrap();
    std::fs::copy(exercise.join("src/stubs.rs"), dir.join("src/stubs.rs")).unwrap();
    let lib = std::fs::read_to_string(exercise.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        format!("{lib}\n#[cfg(test)]\nmod suite;\n"),
    )
    .unwrap();
    std::fs::write(dir.join("src/suite.rs"), suite).unwrap();
    dir
}

fn grade(name: &str, suite: &str) -> Value {
    let learner = learner_crate(name, suite);
    let output = xtask()
        .args(["check", "ch08", "--format", "json", "--path"])
        .arg(&learner)
        .arg("--checks-dir")
        .arg(fixture("suite-checks"))
        .output()
        .unwrap();
    json(&output)
}

fn status<'a>(report: &'a Value, id: &str) -> &'a str {
    result(report, id)["status"].as_str().unwrap()
}

#[test]
fn an_empty_suite_scores_zero() {
    let report = grade("empty", "");
    assert_eq!(report["score"], 0);
    assert_eq!(report["max_score"], 3);
    assert_eq!(status(&report, "suite.passes_on_correct_code"), "failed");
    assert!(
        report["results"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no test ran")
    );
}

#[test]
fn assertion_free_tests_score_zero() {
    let suite = r#"
use crate::stubs::FlakyService;

#[tokio::test]
async fn calls_the_stub() {
    let service = FlakyService::fails_twice_then_succeeds();
    let _ = service.call().await;
}
"#;
    let report = grade("no-asserts", suite);
    assert_eq!(status(&report, "suite.passes_on_correct_code"), "passed");
    assert_eq!(status(&report, "kills.calls_not_counted"), "failed");
    assert!(
        report["results"][2]["message"]
            .as_str()
            .unwrap()
            .contains("survived")
    );
    assert_eq!(report["score"], 0);
}

#[test]
fn a_good_suite_kills_every_mutant() {
    let suite = r#"
use crate::stubs::FlakyService;

#[tokio::test]
async fn fails_twice_then_answers_and_counts() {
    let service = FlakyService::fails_twice_then_succeeds();
    assert!(service.call().await.is_err());
    assert!(service.call().await.is_err());
    assert_eq!(service.call().await, Ok(3));
    assert_eq!(service.calls(), 3);
}
"#;
    let report = grade("good", suite);
    assert_eq!(report["score"], 3, "{report:#}");
    assert_eq!(report["passed"], true);
}

#[test]
fn a_suite_that_fails_on_correct_code_earns_nothing() {
    let suite = "#[test]\nfn wrong() { assert_eq!(1 + 1, 3); }\n";
    let report = grade("red", suite);
    assert_eq!(status(&report, "suite.passes_on_correct_code"), "failed");
    assert!(
        report["results"][0]["message"]
            .as_str()
            .unwrap()
            .contains("fail on the correct code")
    );
    assert_eq!(report["score"], 0);
}

#[test]
fn a_chatty_suite_is_read_to_its_end_and_a_flood_is_named() {
    // Two MiB of output before the result lines: all of it is read, so the test counts.
    let chatty = r#"
use crate::stubs::FlakyService;

#[tokio::test]
async fn counts_calls_and_talks_a_lot() {
    for line in 0..40_000 {
        println!("{line:>10} a line of chatter that fills the output file nicely");
    }
    let service = FlakyService::fails_twice_then_succeeds();
    assert!(service.call().await.is_err());
    assert_eq!(service.calls(), 1);
}
"#;
    let report = grade("chatty", chatty);
    assert_eq!(
        status(&report, "suite.passes_on_correct_code"),
        "passed",
        "{report:#}"
    );
    // More than the 8 MiB a run may print: the run is stopped and says why.
    let flood = "#[test]\nfn floods() {\n    let line = \"x\".repeat(1023);\n    for _ in 0..10_000 {\n        println!(\"{line}\");\n    }\n}\n";
    let report = grade("flood", flood);
    assert_eq!(status(&report, "suite.passes_on_correct_code"), "failed");
    let message = report["results"][0]["message"].as_str().unwrap();
    assert!(message.contains("printed more than 8 MiB"), "{message}");
}
