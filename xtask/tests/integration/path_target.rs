//! `check --path` on a crate copied out of the workbook: it is graded as a copy under `target/`,
//! and its report names the folder given, never the copy.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{Scratch, copy_tree, root, xtask};

/// A copy of the ch01 exercise, as `cp -r` makes it, in `scratch` (outside the workbook).
fn exercise_copied_out(scratch: &Scratch, name: &str) -> PathBuf {
    let dir = scratch.join(name);
    copy_tree(&root().join("exercises/ch01-strong-medicine"), &dir);
    dir
}

/// `cargo xtask check ch01 --path <dir>`, with `extra` arguments.
fn check(dir: &Path, extra: &[&str]) -> Output {
    xtask()
        .args(["check", "ch01", "--path"])
        .arg(dir)
        .args(extra)
        .env("WORKBOOK_STATE_DIR", dir.with_extension("state"))
        .output()
        .expect("the xtask binary runs")
}

/// The report's text, after asserting that it names no file of the grader's copy (which lives
/// under `target/workbook/…/outside/ch01/`).
fn names_no_copy(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let copy = Path::new("outside").join("ch01");
    assert!(
        !text.contains(copy.to_str().unwrap()),
        "the copy's path is shown:\n{text}"
    );
    text
}

/// The JSON report of the crate at `dir`, after asserting that it names no file of the copy,
/// that it names `dir` as the crate graded, and that it starts in `dir`'s `src/lib.rs`.
fn json_report(dir: &Path) -> Value {
    let json = names_no_copy(&check(dir, &["--format", "json"]));
    let report: Value =
        serde_json::from_str(&json).unwrap_or_else(|error| panic!("{error}: {json}"));
    assert_eq!(report["graded_path"], dir.display().to_string(), "{json}");
    let lib = dir.join("src").join("lib.rs");
    let start = report["start_here"].as_str().unwrap_or_default();
    assert!(start.starts_with(&format!("{}:", lib.display())), "{json}");
    report
}

/// One test, not two: both gradings write the same copy, `outside/ch01`.
#[test]
fn a_crate_copied_out_is_named_by_its_own_folder_in_every_message() {
    let scratch = Scratch::new("path-target");
    // A compile error: the compiler's message, its file and where to start.
    let broken = exercise_copied_out(&scratch, "broken");
    let lib = broken.join("src").join("lib.rs");
    let mut source = std::fs::read_to_string(&lib).unwrap();
    source.push_str("\npub fn broken() -> u32 {\n    \"not a number\"\n}\n");
    std::fs::write(&lib, source).unwrap();
    let given_lib = lib.display().to_string();

    let output = check(&broken, &[]);
    let text = names_no_copy(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("error[E0308]"), "{text}");
    assert!(text.contains(&format!("--> {given_lib}:")), "{text}");
    assert!(
        text.contains(&format!("fix the first error, at {given_lib}:")),
        "{text}"
    );

    let report = json_report(&broken);
    let first = &report["compile_failure"]["errors"][0];
    assert_eq!(first["file"], given_lib.as_str(), "{report:#}");

    // The untouched exercise: each check's evidence and where to start.
    let untouched = exercise_copied_out(&scratch, "untouched");
    let given_lib = untouched.join("src").join("lib.rs").display().to_string();
    let report = json_report(&untouched);
    // Where the learner's code panicked (a `todo!()` left), as each check reports it.
    let in_graded_code: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["in_graded_code"] == true)
        .filter_map(|result| result["location"].as_str())
        .collect();
    assert!(!in_graded_code.is_empty(), "{report:#}");
    for place in in_graded_code {
        assert!(
            place.starts_with(&format!("{given_lib}:")),
            "{place}: {report:#}"
        );
    }
    let text = names_no_copy(&check(&untouched, &[]));
    assert!(text.contains(&given_lib), "{text}");
}
