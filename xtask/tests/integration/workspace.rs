//! The grader grades the copy of the workbook it runs in, resets to what was shipped, and says
//! when a check could not run: through the real binary, on copies of this repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{
    Scratch, WorkDirs, copy_of_the_workbook, copy_tree, json, root, shared_target, xtask,
};

fn run(program: &str, args: &[&str], dir: &Path) {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs the grader binary in `dir`, the way a stale binary shared through one target folder
/// runs: built from another copy, told nothing about where it was built.
fn xtask_in(dir: &Path, args: &[&str], state: &Path) -> Output {
    xtask()
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target())
        .env("WORKBOOK_STATE_DIR", state)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("WORKBOOK_POSTGRES_URL")
        .output()
        .unwrap()
}

#[test]
fn two_copies_sharing_a_target_folder_each_grade_their_own_exercise() {
    let base = Scratch::new("copies");
    let pid = std::process::id();
    let first = base.join(format!("first-{pid}"));
    copy_of_the_workbook(&first);
    let second = base.join(format!("second-{pid}"));
    let _work_dirs = WorkDirs(vec![first.clone(), second.clone()]);
    copy_tree(&first, &second);
    // The second learner has finished ch08; the first has not started.
    std::fs::copy(
        root().join("solutions/ch08-full-jitter/src/lib.rs"),
        second.join("exercises/ch08-full-jitter/src/lib.rs"),
    )
    .unwrap();

    let state = base.join("state");
    let untouched = json(&xtask_in(
        &first,
        &["check", "ch08", "--format", "json"],
        &state,
    ));
    let finished = json(&xtask_in(
        // From a subfolder: the grader walks up to the copy's root.
        &second.join("exercises/ch08-full-jitter"),
        &["check", "ch08", "--format", "json"],
        &state,
    ));
    let again = json(&xtask_in(
        &first,
        &["check", "ch08", "--format", "json"],
        &state,
    ));

    assert_eq!(untouched["workspace"], first.display().to_string());
    assert_eq!(
        untouched["score"], 0,
        "the first copy's exercise is untouched"
    );
    assert_eq!(finished["workspace"], second.display().to_string());
    assert_eq!(
        finished["passed"], true,
        "the second copy's exercise is done"
    );
    assert_eq!(finished["score"], finished["max_score"]);
    assert_eq!(
        again["score"], 0,
        "grading the second copy left the first alone"
    );
    let text = xtask_in(&second, &["check", "ch08"], &state);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("workbook: {}", second.display())),
        "the table names the folder graded:\n{text}"
    );
}

#[test]
fn reset_brings_back_the_shipped_text_after_a_commit() {
    let base = Scratch::new("reset");
    let copy = base.join(format!("reset-{}", std::process::id()));
    let _work_dirs = WorkDirs(vec![copy.clone()]);
    copy_of_the_workbook(&copy);
    let git = |args: &[&str]| {
        let mut all = vec![
            "-c",
            "user.name=Learner",
            "-c",
            "user.email=learner@example.com",
        ];
        all.extend_from_slice(args);
        run("git", &all, &copy);
    };
    // A classroom repository: the shipped workbook is its first commit, the learner commits after.
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "the workbook as shipped"]);
    let exercise = copy.join("exercises/ch08-full-jitter");
    let lib = exercise.join("src/lib.rs");
    let shipped = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{shipped}\npub fn my_work() {{}}\n")).unwrap();
    std::fs::write(exercise.join("src/notes.rs"), "// mine\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-qm", "my work on ch08"]);

    let state = base.join("state");
    let output = xtask_in(&copy, &["reset", "ch08"], &state);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&lib).unwrap(),
        shipped,
        "reset restores the shipped text, not the last commit:\n{text}"
    );
    assert!(!exercise.join("src/notes.rs").exists(), "{text}");
    assert!(text.contains("xtask/shipped/ch08.txt"), "{text}");
    let backups: Vec<PathBuf> = std::fs::read_dir(copy.join(".workbook/backups"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(backups.len(), 1);
    let backed_up = std::fs::read_to_string(backups[0].join("src/lib.rs")).unwrap();
    assert!(
        backed_up.contains("my_work"),
        "the learner's work is backed up"
    );
}

#[test]
fn without_postgres_the_postgres_checks_are_skipped_and_earn_nothing() {
    let state = Scratch::new("skipped");
    let output = xtask_in(
        &root(),
        &["check", "ch18", "--solution", "--format", "json"],
        &state,
    );
    let report = json(&output);
    let results = report["results"].as_array().unwrap();
    let postgres: Vec<&Value> = results
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with("postgres."))
        .collect();
    assert!(!postgres.is_empty());
    for check in &postgres {
        assert_eq!(check["status"], "skipped", "{check}");
        assert_eq!(check["earned"], 0, "{check}");
        assert!(
            check["reason"]
                .as_str()
                .unwrap()
                .contains("WORKBOOK_POSTGRES_URL"),
            "a skip says how to run the check: {check}"
        );
    }
    let skipped_points: u64 = postgres.iter().map(|c| c["points"].as_u64().unwrap()).sum();
    assert_eq!(
        report["score"].as_u64().unwrap() + skipped_points,
        report["max_score"].as_u64().unwrap(),
        "everything but the skipped checks is earned"
    );
    assert_eq!(report["skipped"], postgres.len());
    assert_eq!(report["passed"], true, "a skip is not a failure");

    let text = xtask_in(&root(), &["check", "ch18", "--solution"], &state);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("–  postgres.claims_only_due_rows"), "{text}");
    assert!(text.contains("skipped (not run here, no points)"), "{text}");
}

#[test]
fn grade_scores_skipped_checks_as_the_instructor_says() {
    // Under target/, so that the submitted crate's manifest finds the workspace it inherits from.
    let student = Scratch::in_target("skipped-grade");
    copy_tree(
        &root().join("solutions/ch18-many-publishers"),
        &student.join("exercises/ch18-many-publishers"),
    );
    let grade = |extra: &[&str]| {
        let mut args = vec!["grade", "ch18", "--workspace", student.to_str().unwrap()];
        args.extend_from_slice(extra);
        xtask_in(&root(), &args, &student)
    };
    let report = |output: &Output| json(output)["chapters"][0]["report"].clone();
    let not_earned = report(&grade(&["--format", "json"]));
    let excluded = report(&grade(&["--format", "json", "--skipped", "excluded"]));
    assert!(not_earned["score"].as_u64() < not_earned["max_score"].as_u64());
    assert_eq!(excluded["score"], not_earned["score"]);
    assert_eq!(
        excluded["max_score"], excluded["score"],
        "left out, the skipped checks count neither way"
    );
    let junit = grade(&["--format", "junit"]);
    let xml = String::from_utf8_lossy(&junit.stdout);
    assert!(
        xml.contains("<skipped message=\"skipped, no points: "),
        "{xml}"
    );
    assert!(xml.contains(" skipped=\""), "{xml}");
}

#[test]
fn a_compile_error_in_the_learners_visible_tests_is_theirs_and_told_once() {
    let dir = Scratch::in_target("visible");
    copy_tree(&root().join("exercises/ch08-full-jitter"), &dir);
    let visible = dir.join("tests/visible.rs");
    let text = std::fs::read_to_string(&visible).unwrap();
    std::fs::write(
        &visible,
        format!("{text}\n#[test]\nfn mine() {{\n    let n: u32 = \"three\";\n}}\n"),
    )
    .unwrap();
    let state = Scratch::new("visible-state");
    let output = xtask_in(
        &root(),
        &["check", "ch08", "--path", dir.to_str().unwrap()],
        &state,
    );
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(shown.contains("mismatched types"), "{shown}");
    assert_eq!(shown.matches("mismatched types").count(), 1, "{shown}");
    assert!(
        !shown.contains("The hidden checks do not compile"),
        "the learner's own test is not blamed on the checks:\n{shown}"
    );
    assert!(shown.contains("tests/visible.rs"), "{shown}");
}

/// A scratch folder for one test, and where in it a copy of the workbook goes.
fn scratch_copy(name: &str) -> (Scratch, PathBuf) {
    let base = Scratch::new(name);
    let copy = base.join(format!("{name}-{}", std::process::id()));
    (base, copy)
}

/// A copy of the workbook at `copy` in a git repository whose first commit is the workbook as
/// shipped (`reset` reads the shipped files from git's history).
fn shipped_repository(copy: &Path) {
    copy_of_the_workbook(copy);
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=Learner",
            "-c",
            "user.email=learner@example.com",
            "commit",
            "-qm",
            "the workbook as shipped",
        ],
    ] {
        run("git", args, copy);
    }
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn check_names_missing_shipped_files_and_reset_restores_one_file() {
    let (base, copy) = scratch_copy("missing");
    let _work_dirs = WorkDirs(vec![copy.clone()]);
    shipped_repository(&copy);
    let state = base.join("state");
    let exercise = copy.join("exercises/ch08-full-jitter");
    let stubs = std::fs::read_to_string(exercise.join("src/stubs.rs")).unwrap();
    std::fs::remove_file(exercise.join("src/stubs.rs")).unwrap();
    std::fs::remove_file(exercise.join("tests/visible.rs")).unwrap();
    let lib = exercise.join("src/lib.rs");
    let mine = format!("{}\n// my work\n", std::fs::read_to_string(&lib).unwrap());
    std::fs::write(&lib, &mine).unwrap();

    let (shown, _) = text(&xtask_in(&copy, &["check", "ch08"], &state));
    for file in ["src/stubs.rs", "tests/visible.rs"] {
        assert!(
            shown.contains(&format!(
                "{file} is missing; `cargo xtask reset ch08 --file {file}` restores it"
            )),
            "{shown}"
        );
    }
    assert!(
        !shown.contains("src/lib.rs is"),
        "the learner's file is theirs:\n{shown}"
    );

    let output = xtask_in(&copy, &["reset", "ch08", "--file", "src/stubs.rs"], &state);
    let (said, errors) = text(&output);
    assert!(output.status.success(), "{said}{errors}");
    assert_eq!(
        std::fs::read_to_string(exercise.join("src/stubs.rs")).unwrap(),
        stubs
    );
    assert!(
        !exercise.join("tests/visible.rs").exists(),
        "only the file named"
    );
    assert_eq!(std::fs::read_to_string(&lib).unwrap(), mine, "{said}");
    assert!(said.contains("(it was missing)"), "{said}");

    // A file that is there is backed up first, and the reset says how to get it back.
    let output = xtask_in(&copy, &["reset", "ch08", "--file", "src/lib.rs"], &state);
    let (said, errors) = text(&output);
    assert!(output.status.success(), "{said}{errors}");
    assert_ne!(std::fs::read_to_string(&lib).unwrap(), mine);
    let command = said
        .lines()
        .skip_while(|line| !line.ends_with("to get it back:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no command to get the file back:\n{said}"))
        .trim();
    assert!(
        command.contains(".workbook/backups/ch08-full-jitter-"),
        "{said}"
    );
    if cfg!(unix) {
        run("sh", &["-c", command], &copy);
        assert_eq!(std::fs::read_to_string(&lib).unwrap(), mine, "{command}");
    }
}

#[test]
fn a_broken_exercise_manifest_is_named_and_reset_restores_it() {
    let (base, copy) = scratch_copy("manifest");
    let _work_dirs = WorkDirs(vec![copy.clone()]);
    shipped_repository(&copy);
    let state = base.join("state");
    let manifest = copy.join("exercises/ch01-strong-medicine/Cargo.toml");
    let shipped = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{shipped}garbage\n")).unwrap();
    let restore = "`cargo xtask reset ch01 --file Cargo.toml` restores the shipped one";

    for args in [&["list"][..], &["hint", "ch02"]] {
        let output = xtask_in(&copy, args, &state);
        let (said, errors) = text(&output);
        assert!(output.status.success(), "{args:?}: {said}{errors}");
        assert!(
            errors.contains("exercises/ch01-strong-medicine/Cargo.toml is broken (line 12:"),
            "{args:?}: {errors}"
        );
        assert!(errors.contains(restore), "{args:?}: {errors}");
    }
    let output = xtask_in(&copy, &["check", "ch01"], &state);
    let (_, errors) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{errors}");
    assert!(errors.contains("ch01 cannot be graded: "), "{errors}");
    assert!(errors.contains(restore), "{errors}");

    let output = xtask_in(&copy, &["reset", "ch01", "--file", "Cargo.toml"], &state);
    let (said, errors) = text(&output);
    assert!(output.status.success(), "{said}{errors}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), shipped);
    let (_, errors) = text(&xtask_in(&copy, &["list"], &state));
    assert_eq!(errors, "", "restored, nothing to warn of");
}

#[test]
fn watch_keeps_watching_when_its_input_is_not_a_terminal() {
    use std::io::BufRead;
    use std::sync::mpsc;

    let (base, copy) = scratch_copy("watch");
    let _work_dirs = WorkDirs(vec![copy.clone()]);
    copy_of_the_workbook(&copy);
    let mut child = xtask()
        .args(["watch", "ch01"])
        .current_dir(&copy)
        .env("CARGO_TARGET_DIR", shared_target())
        .env("WORKBOOK_STATE_DIR", base.join("state"))
        .env_remove("CARGO_MANIFEST_DIR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (lines, received) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // Each report ends with the watching line; a watch that stopped ends its output instead.
    let next_watching_line = || {
        received
            .iter()
            .find(|line| line.starts_with("watching for changes"))
    };
    let first = next_watching_line();
    let lib = copy.join("exercises/ch01-strong-medicine/src/lib.rs");
    let edited = format!("{}\n// an edit\n", std::fs::read_to_string(&lib).unwrap());
    std::fs::write(&lib, edited).unwrap();
    let second = next_watching_line();
    let _ = child.kill();
    let _ = child.wait();
    let first = first.expect("watch checks once and says it is watching");
    assert!(
        first.contains("keys are off (input is not a terminal)"),
        "{first}"
    );
    assert!(
        second.is_some(),
        "an edit after the first check is checked: watch did not stop at the end of its input"
    );
}
