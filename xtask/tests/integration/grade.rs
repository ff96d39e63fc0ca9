//! `cargo xtask grade` over a student's workspace where one chapter passes and one fails, in
//! every output format.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

// The one platform difference of these tests: how a folder link is made (on Windows it needs
// Developer Mode or an administrator).
#[cfg(unix)]
use std::os::unix::fs::symlink as symlink_dir;
#[cfg(windows)]
use std::os::windows::fs::symlink_dir;

use crate::common::{Scratch, fixture, root, xtask};

/// A student's copy with ch08 finished (the solution) and ch01 untouched.
fn student_workspace(name: &str) -> Scratch {
    let dir = Scratch::new(&format!("student-{name}"));
    std::fs::create_dir_all(dir.join("exercises")).unwrap();
    let link = |from: &str, to: &str| {
        symlink_dir(root().join(from), dir.join("exercises").join(to)).unwrap()
    };
    link("solutions/ch08-full-jitter", "ch08-full-jitter");
    link("exercises/ch01-strong-medicine", "ch01-strong-medicine");
    dir
}

fn grade(format: &str, student: &Path) -> (Option<i32>, String) {
    let output = xtask()
        .args(["grade", "ch01", "ch08", "--format", format, "--workspace"])
        .arg(student)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn json_scores_each_check_and_the_total() {
    let student = student_workspace("json");
    let (code, stdout) = grade("json", &student);
    assert_eq!(code, Some(1), "one chapter fails, so the grade fails");
    let grade: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(grade["schema"], "retry-workbook/grade-report/v1");
    let chapters = grade["chapters"].as_array().unwrap();
    let ch01 = &chapters[0]["report"];
    let ch08 = &chapters[1]["report"];
    assert_eq!(ch01["chapter"], "ch01");
    assert_eq!(ch01["score"], 0);
    assert!(
        ch01["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "check")
            .all(|r| r["earned"] == 0)
    );
    assert_eq!(ch08["score"], ch08["max_score"]);
    let earned: u64 = ch08["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["earned"].as_u64().unwrap())
        .sum();
    assert_eq!(Some(earned), ch08["score"].as_u64());
    assert_eq!(grade["points"], 1.0);
    assert_eq!(grade["max_points"], 2.0);
    assert_eq!(chapters[0]["status"], "not_started", "ch01 is as shipped");
    assert_eq!(chapters[1]["status"], "done");
    // The "student" submitted the solution crate: its manifest differs from the shipped one and
    // it has no visible tests, so both count as changed files.
    let tampered = chapters[1]["tampered"].as_array().unwrap();
    assert_eq!(
        tampered,
        &[
            "exercises/ch08-full-jitter/Cargo.toml",
            "exercises/ch08-full-jitter/tests/visible.rs"
        ]
    );
    assert_eq!(
        chapters[0]["tampered"].as_array().unwrap().len(),
        0,
        "ch01 is untouched"
    );
}

#[test]
fn text_tells_the_instructor_where_the_student_stands() {
    let student = student_workspace("text");
    let (code, text) = grade("text", &student);
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("Grade of the copy at {}", student.display())
    );
    let row = |chapter: &str| {
        lines
            .iter()
            .find(|line| line.trim_start().starts_with(chapter))
            .unwrap_or_else(|| panic!("no {chapter} row: {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(row("ch01").starts_with("ch01 not started 0 of "), "{text}");
    assert!(row("ch08").starts_with("ch08 done "), "{text}");
    assert_eq!(row("total"), "total 1.00 of 2.00");
    assert!(
        text.contains("warning: the student changed exercises/ch08-full-jitter/Cargo.toml"),
        "{text}"
    );
    for learner_words in ["check again", "cargo xtask", "your code", "Start here"] {
        assert!(!text.contains(learner_words), "{learner_words}: {text}");
    }
}

#[test]
fn junit_is_accepted_by_an_xml_parser_with_the_right_counts() {
    let student = student_workspace("junit");
    let (_, xml) = grade("junit", &student);
    let file = student.join("report.xml");
    std::fs::write(&file, &xml).unwrap();
    // Python's standard XML parser reads the report and counts what a JUnit reader would.
    let script = r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
for suite in root.findall("testsuite"):
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert int(suite.get("tests")) == len(cases), suite.get("name")
    assert int(suite.get("failures")) == len(failed), suite.get("name")
    print(suite.get("name").split()[0], len(cases), len(failed))
"#;
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{xml}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines[0].starts_with("ch01 ") && !lines[0].ends_with(" 0"),
        "ch01 has failures: {summary}"
    );
    assert!(
        lines[1].starts_with("ch08 ") && lines[1].ends_with(" 0"),
        "ch08 has none: {summary}"
    );
}

#[test]
fn classroom_output_has_the_reporters_fields() {
    let student = student_workspace("classroom");
    let (_, stdout) = grade("classroom", &student);
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["version"], 1);
    assert_eq!(result["status"], "fail");
    let tests = result["tests"].as_array().unwrap();
    let max: u64 = result["max_score"].as_u64().unwrap();
    let scored: u64 = tests.iter().map(|t| t["score"].as_u64().unwrap()).sum();
    assert!(
        scored > 0 && scored < max,
        "partial credit: {scored} of {max}"
    );
    for test in tests {
        for field in ["name", "status", "test_code", "score", "execution_time"] {
            assert!(test.get(field).is_some(), "{field} missing in {test}");
        }
        assert!(["pass", "fail", "error"].contains(&test["status"].as_str().unwrap()));
    }
}

#[test]
fn private_checks_extend_the_public_ones() {
    let student = student_workspace("private");
    let output = xtask()
        .args(["grade", "ch08", "--format", "json", "--workspace"])
        .arg(&student)
        .arg("--checks-dir")
        .arg(fixture("private-checks"))
        .output()
        .unwrap();
    let grade: Value = serde_json::from_slice(&output.stdout).unwrap();
    let report = &grade["chapters"][0]["report"];
    let ids: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"jitter.not_deterministic"),
        "the public checks stay: {ids:?}"
    );
    assert!(
        ids.contains(&"private.ceiling_reaches_the_cap"),
        "the private check is added: {ids:?}"
    );
    assert_eq!(
        report["score"], report["max_score"],
        "the solution passes both"
    );
    assert_eq!(
        report["max_score"],
        rubric_points("xtask/checks/ch08/chapter.toml")
            + rubric_points("xtask/tests/fixtures/private-checks/ch08/chapter.toml"),
        "the private check's points are added to the public ones"
    );
}

/// The points of every check a rubric lists.
fn rubric_points(rubric: &str) -> u64 {
    let text = std::fs::read_to_string(root().join(rubric)).unwrap();
    let rubric: toml::Table = text.parse().unwrap();
    rubric["check"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check["points"].as_integer().unwrap() as u64)
        .sum()
}
