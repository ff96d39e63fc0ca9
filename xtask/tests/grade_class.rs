//! `cargo xtask grade-class` over a small class (two chapters, ch01 and ch08): solved, partial,
//! untouched and missing work, and two hostile copies — one whose build script forks a sleeper
//! and never ends, one that floods its output and eats memory. The class grades into a CSV, a
//! JSON and an HTML report (tested in headless Chromium); the hostile copies fail only
//! themselves; an interrupted run resumes with the students not yet done; single students'
//! `grade --format json` reports merge into the same gradebook, and a self-graded one is
//! marked untrusted.
//!
//! Linux only: the hostile copies start Unix commands (`sleep`) and escape their group the Linux
//! way, and the report is read in Chromium at its Debian path.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
mod common;

use common::{process_is_gone, root};

const CH01: &str = "ch01-strong-medicine";
const CH08: &str = "ch08-full-jitter";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("workbook-class-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One class run at a time, so the runs reuse the same two grading slots and their compiled
/// dependencies.
fn one_run_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn xtask() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_REPOSITORY");
    command
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    eprintln!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn grade_class(students: &Path, out: &Path, jobs: usize) -> Command {
    let mut command = xtask();
    command
        .args(["grade-class", "ch01", "ch08", "--timeout", "40"])
        .arg("--jobs")
        .arg(jobs.to_string())
        .arg("--students")
        .arg(students)
        .arg("--out")
        .arg(out);
    command
}

/// A student's copy: the workspace manifest and lockfile, and the two exercises as shipped.
fn copy(class: &Path, name: &str) -> PathBuf {
    let dir = class.join(name);
    std::fs::create_dir_all(dir.join("exercises")).unwrap();
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(root().join(file), dir.join(file)).unwrap();
    }
    for stem in [CH01, CH08] {
        let from = root().join("exercises").join(stem);
        for file in [
            "Cargo.toml",
            "src/lib.rs",
            "src/stubs.rs",
            "tests/visible.rs",
        ] {
            let to = dir.join("exercises").join(stem).join(file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from.join(file), to).unwrap();
        }
    }
    dir
}

/// Puts the reference solution's code into the student's exercise, with `edits` applied.
fn solve(student: &Path, stem: &str, edits: &[(&str, &str)]) {
    let mut code =
        std::fs::read_to_string(root().join("solutions").join(stem).join("src/lib.rs")).unwrap();
    for (find, replace) in edits {
        assert!(
            code.contains(find),
            "{find} is not in the solution of {stem}"
        );
        code = code.replacen(find, replace, 1);
    }
    std::fs::write(
        student.join("exercises").join(stem).join("src/lib.rs"),
        code,
    )
    .unwrap();
}

/// The class: who is who, and where the hanging student's build script writes its sleeper's pid.
struct Class {
    dir: PathBuf,
    sleeper_pid_file: PathBuf,
}

fn class() -> Class {
    let dir = temp_dir("students");
    for name in ["solved-1", "solved-2", "solved-3"] {
        let student = copy(&dir, name);
        solve(&student, CH01, &[]);
        solve(&student, CH08, &[]);
    }
    // Equal jitter instead of full jitter: some ch08 checks pass, others fail.
    let partial = copy(&dir, "partial-equal-jitter");
    solve(&partial, CH01, &[]);
    solve(
        &partial,
        CH08,
        &[(
            "rng.random_range(Duration::ZERO..=ceiling)",
            "ceiling / 2 + rng.random_range(Duration::ZERO..=ceiling / 2)",
        )],
    );
    let half = copy(&dir, "partial-ch08-only");
    solve(&half, CH08, &[]);
    copy(&dir, "untouched");
    let no_ch01 = copy(&dir, "missing-ch01");
    solve(&no_ch01, CH08, &[]);
    std::fs::remove_dir_all(no_ch01.join("exercises").join(CH01)).unwrap();

    // Hostile: a build script that forks a sleeper and never ends.
    let hangs = copy(&dir, "hostile-hangs");
    solve(&hangs, CH01, &[]);
    std::fs::write(
        hangs.join("exercises").join(CH08).join("build.rs"),
        r#"fn main() {
    let child = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
    if let Ok(file) = std::env::var("HOSTILE_PID_FILE") {
        std::fs::write(file, child.id().to_string()).unwrap();
    }
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
"#,
    )
    .unwrap();
    // Hostile: ch08 prints 64 MiB at every call, ch01 asks for 8 GiB.
    let floods = copy(&dir, "hostile-floods");
    solve(
        &floods,
        CH08,
        &[(
            "let ceiling = backoff_ceiling(attempt, base, cap);",
            "let line = \"x\".repeat(1 << 20);\n    for _ in 0..64 {\n        println!(\"{line}\");\n    }\n    let ceiling = backoff_ceiling(attempt, base, cap);",
        )],
    );
    solve(
        &floods,
        CH01,
        &[(
            ") -> Result<T, E> {",
            ") -> Result<T, E> {\n    let hog = vec![1u8; 8 << 30];\n    std::hint::black_box(&hog);",
        )],
    );
    Class {
        sleeper_pid_file: dir.with_extension("sleeper-pid"),
        dir,
    }
}

/// The class, graded once for the tests that read its outputs.
struct Graded {
    class: Class,
    out: PathBuf,
    output: Output,
    elapsed: Duration,
}

fn graded() -> &'static Graded {
    static GRADED: OnceLock<Graded> = OnceLock::new();
    GRADED.get_or_init(|| {
        let _turn = one_run_at_a_time();
        let class = class();
        let out = temp_dir("out");
        let started = Instant::now();
        let output =
            run(grade_class(&class.dir, &out, 2).env("HOSTILE_PID_FILE", &class.sleeper_pid_file));
        Graded {
            class,
            out,
            output,
            elapsed: started.elapsed(),
        }
    })
}

fn read_json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The gradebook's rows by student: the fields after the name.
fn gradebook(out: &Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "student,ch01,ch08,total,max_total,late,missing,status,trusted"
    );
    lines
        .map(|line| {
            let mut fields = line.split(',').map(str::to_owned);
            (fields.next().unwrap(), fields.collect())
        })
        .collect()
}

fn row<'a>(rows: &'a [(String, Vec<String>)], student: &str) -> &'a [String] {
    &rows
        .iter()
        .find(|(name, _)| name == student)
        .unwrap_or_else(|| panic!("{student} is not in the gradebook: {rows:?}"))
        .1
}

#[test]
fn the_class_grades_into_a_gradebook_and_hostile_copies_fail_only_themselves() {
    let graded = graded();
    assert_eq!(graded.output.status.code(), Some(0));
    eprintln!("the class of 9 took {:.1} s", graded.elapsed.as_secs_f64());
    let rows = gradebook(&graded.out);
    assert_eq!(rows.len(), 9, "{rows:?}");
    for name in ["solved-1", "solved-2", "solved-3"] {
        assert_eq!(
            row(&rows, name),
            ["1.00", "1.00", "2.00", "2.00", "", "", "graded", "yes"]
        );
    }
    assert_eq!(row(&rows, "untouched")[..3], ["0.00", "0.00", "0.00"]);
    assert_eq!(
        row(&rows, "partial-ch08-only")[..3],
        ["0.00", "1.00", "1.00"]
    );
    let partial = row(&rows, "partial-equal-jitter");
    let ch08: f64 = partial[1].parse().unwrap();
    assert!(
        partial[0] == "1.00" && ch08 > 0.0 && ch08 < 1.0,
        "{partial:?}"
    );
    assert_eq!(row(&rows, "missing-ch01")[..3], ["0.00", "1.00", "1.00"]);
    assert_eq!(row(&rows, "missing-ch01")[5], "ch01");

    // The hanging copy fails alone, and its sleeper dies with it.
    assert_eq!(
        row(&rows, "hostile-hangs"),
        ["", "", "", "2.00", "", "", "failed", "yes"]
    );
    let pid: u32 = std::fs::read_to_string(&graded.class.sleeper_pid_file)
        .expect("the hostile build script ran")
        .trim()
        .parse()
        .unwrap();
    assert!(
        process_is_gone(pid),
        "the sleeper (pid {pid}) outlived the grading"
    );
    // The flooding, memory-hungry copy fails its own checks (a check that never calls the
    // flooding function may pass) and stops nothing else.
    let floods = row(&rows, "hostile-floods");
    assert_eq!(floods[0], "0.00");
    assert!(floods[1].parse::<f64>().unwrap() < 0.5, "{floods:?}");
    let floods = read_json(&graded.out.join("reports/hostile-floods.json"));
    let statuses: Vec<&str> = floods["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["report"]["results"].as_array().unwrap())
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"output_flood"), "{statuses:?}");
    assert!(statuses.contains(&"crashed"), "{statuses:?}");

    let report = read_json(&graded.out.join("class-report.json"));
    assert_eq!(report["schema"], "retry-workbook/class-report/v1");
    let hangs = report["students"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["student"] == "hostile-hangs")
        .unwrap();
    assert!(
        hangs["reason"]
            .as_str()
            .unwrap()
            .contains("longer than 40 s"),
        "{hangs}"
    );
    let shares: Vec<f64> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["share"].as_f64().unwrap())
        .collect();
    assert!(
        shares.windows(2).all(|w| w[0] <= w[1]),
        "most missed first: {shares:?}"
    );
    assert_eq!(report["totals"]["graded"], 8);
}

#[test]
fn the_html_report_passes_the_browser_test() {
    let graded = graded();
    let book = root().join("book/build");
    let built = run(xtask().arg("book"));
    assert!(built.status.success(), "the book builds");
    let tests = root().join("book/tests");
    if !tests.join("node_modules/playwright-core").is_dir() {
        let installed = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel", "error"])
            .current_dir(&tests)
            .status()
            .unwrap();
        assert!(installed.success(), "npm ci in book/tests");
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    assert!(
        Path::new(&chromium).exists(),
        "the browser test needs Chromium at {chromium} (apt-get install chromium, or set CHROMIUM)"
    );
    let output = run(Command::new("node")
        .arg("class-report.mjs")
        .arg(graded.out.join("class-report.html"))
        .arg(&book)
        .current_dir(&tests));
    assert!(output.status.success());
}

#[test]
fn an_interrupted_run_grades_only_the_students_not_yet_done() {
    let _turn = one_run_at_a_time();
    let dir = temp_dir("resume");
    for name in ["a", "b", "c", "d", "e"] {
        let student = copy(&dir, name);
        solve(&student, CH08, &[]);
    }
    let out = temp_dir("resume-out");
    let mut first = grade_class(&dir, &out, 1)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let states = out.join("state");
    let started = Instant::now();
    while std::fs::read_dir(&states).map_or(0, |d| d.count()) < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no student finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let done: Vec<(String, String)> = std::fs::read_dir(&states)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&path).unwrap(),
            )
        })
        .collect();
    assert!(done.len() >= 2 && done.len() < 5, "{done:?}");

    let second = run(&mut grade_class(&dir, &out, 2));
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(
        text.contains(&format!(
            "{} graded now (0 could not be graded), {} reused",
            5 - done.len(),
            done.len()
        )),
        "{text}"
    );
    for (file, state) in &done {
        assert_eq!(
            &std::fs::read_to_string(states.join(file)).unwrap(),
            state,
            "{file} was graded again"
        );
    }
    let rows = gradebook(&out);
    assert_eq!(rows.len(), 5);
    assert!(
        rows.iter()
            .all(|(_, fields)| fields[..3] == ["0.00", "1.00", "1.00"]),
        "{rows:?}"
    );

    // A changed copy is graded again, and only it.
    solve(&dir.join("c"), CH01, &[]);
    let third = run(&mut grade_class(&dir, &out, 2));
    let text = String::from_utf8_lossy(&third.stdout);
    assert!(
        text.contains("1 graded now (0 could not be graded), 4 reused"),
        "{text}"
    );
    assert_eq!(row(&gradebook(&out), "c")[..3], ["1.00", "1.00", "2.00"]);
}

#[test]
fn single_reports_merge_into_the_same_gradebook_and_self_graded_ones_are_untrusted() {
    let graded = graded();
    let reports = temp_dir("reports");
    let direct = gradebook(&graded.out);
    let merged_students = [
        "solved-1",
        "partial-equal-jitter",
        "untouched",
        "missing-ch01",
    ];
    for name in merged_students {
        let output = xtask()
            .args(["grade", "ch01", "ch08", "--format", "json", "--workspace"])
            .arg(graded.class.dir.join(name))
            .output()
            .unwrap();
        std::fs::write(reports.join(format!("{name}.json")), &output.stdout).unwrap();
    }
    // A student's own workflow: the grader grades the copy it belongs to.
    let own = xtask()
        .args(["grade", "ch01", "ch08", "--format", "json"])
        .output()
        .unwrap();
    let untrusted = temp_dir("untrusted");
    std::fs::write(untrusted.join("self-graded.json"), &own.stdout).unwrap();
    // A report from a grader built from other sources is not trusted either.
    let mut other_build = read_json(&reports.join("solved-1.json"));
    other_build["grader"]["build"] = "a changed grader".into();
    std::fs::write(reports.join("other-build.json"), other_build.to_string()).unwrap();
    // A report of other chapters is rejected.
    let other = xtask()
        .args(["grade", "ch08", "--format", "json", "--workspace"])
        .arg(graded.class.dir.join("solved-2"))
        .output()
        .unwrap();
    std::fs::write(reports.join("solved-2.json"), &other.stdout).unwrap();

    let out = temp_dir("merged");
    let output = run(xtask()
        .args(["grade-class", "ch01", "ch08", "--from-reports"])
        .arg(&reports)
        .arg("--from-reports")
        .arg(&untrusted)
        .arg("--out")
        .arg(&out));
    assert_eq!(
        output.status.code(),
        Some(1),
        "a rejected report fails the merge"
    );
    let merged = gradebook(&out);
    for name in merged_students {
        assert_eq!(row(&merged, name), row(&direct, name), "{name}");
    }
    assert_eq!(row(&merged, "solved-2")[6], "rejected");
    let own_row = row(&merged, "self-graded");
    assert_eq!(own_row[6], "graded");
    assert_eq!(own_row[7], "no", "a self-graded report is not trusted");
    assert_eq!(row(&merged, "other-build")[7], "no");

    let report = read_json(&out.join("class-report.json"));
    let student = |name: &str| {
        report["students"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["student"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(student("self-graded")["trusted"], false);
    assert!(
        student("self-graded")["untrusted_because"][0]
            .as_str()
            .unwrap()
            .contains("own copy of the grader")
    );
    assert!(
        student("solved-2")["reason"]
            .as_str()
            .unwrap()
            .contains("lacking: ch01"),
        "{}",
        student("solved-2")
    );
    let html = std::fs::read_to_string(out.join("class-report.html")).unwrap();
    assert!(html.contains("data-student=\"self-graded\" data-trusted=\"false\""));
    assert!(html.contains("id=\"untrusted-warning\""));

    // Reports from a folder given as untrusted are untrusted however they were made.
    let out = temp_dir("merged-untrusted");
    run(xtask()
        .args(["grade-class", "ch01", "ch08", "--untrusted-reports"])
        .arg(&reports)
        .arg("--out")
        .arg(&out));
    assert_eq!(row(&gradebook(&out), "solved-1")[7], "no");
}
