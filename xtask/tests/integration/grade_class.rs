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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Scratch, process_is_gone, root, xtask};

const CH01: &str = "ch01-strong-medicine";
const CH08: &str = "ch08-full-jitter";

/// A hosted book, so that only the first class run builds the local one (two builds at once
/// would write the same folder).
const HOSTED: &str = "https://books.example/retry-workbook";

/// One class run at a time, so the runs reuse the same two grading slots and their compiled
/// dependencies.
fn one_run_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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

/// `grade-class ch01 ch08` merging reports, its page linked to the hosted book.
fn merge() -> Command {
    let mut command = xtask();
    command.args(["grade-class", "ch01", "ch08", "--book-url", HOSTED]);
    command
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

/// The class: who is who, and where the hanging student's build script writes its sleeper's pid,
/// both in one scratch folder.
struct Class {
    scratch: Scratch,
    dir: PathBuf,
    sleeper_pid_file: PathBuf,
}

fn class() -> Class {
    let scratch = Scratch::new("class");
    let dir = scratch.join("students");
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
        sleeper_pid_file: scratch.join("sleeper.pid"),
        dir,
        scratch,
    }
}

/// The class, graded once for the tests that read its outputs.
struct Graded {
    class: Class,
    out: Scratch,
    output: Output,
    elapsed: Duration,
}

/// The tests that read the graded class. The last of them to end removes its folders, unless
/// one failed; a test run that leaves some of them out keeps the folders.
const READERS: [&str; 3] = [
    "the_class_grades_into_a_gradebook_and_hostile_copies_fail_only_themselves",
    "the_html_report_passes_the_browser_test",
    "single_reports_merge_into_the_same_gradebook_and_self_graded_ones_are_untrusted",
];

/// The class graded once, for `reader`, one of the `READERS`.
fn graded(reader: &str) -> Reading {
    assert!(
        READERS.contains(&reader),
        "{reader} reads the graded class: name it in READERS"
    );
    static GRADED: OnceLock<Graded> = OnceLock::new();
    Reading(GRADED.get_or_init(|| {
        let _turn = one_run_at_a_time();
        let class = class();
        let out = Scratch::new("class-out");
        let started = Instant::now();
        let output =
            run(grade_class(&class.dir, &out, 2).env("HOSTILE_PID_FILE", &class.sleeper_pid_file));
        Graded {
            class,
            out,
            output,
            elapsed: started.elapsed(),
        }
    }))
}

/// One reader's use of the graded class, which lives as long as the test run: the scratch
/// folders in it are removed when the last reader ends.
struct Reading(&'static Graded);

impl std::ops::Deref for Reading {
    type Target = Graded;

    fn deref(&self) -> &Graded {
        self.0
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        static PASSED: AtomicUsize = AtomicUsize::new(0);
        let folders = [&self.0.class.scratch, &self.0.out];
        if std::thread::panicking() {
            for folder in folders {
                eprintln!("the graded class is kept in {}", folder.display());
            }
        } else if PASSED.fetch_add(1, Ordering::SeqCst) + 1 == READERS.len() {
            for folder in folders {
                let _ = std::fs::remove_dir_all(folder);
            }
        }
    }
}

fn read_json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The gradebook's rows by student: each field by its column's name.
fn gradebook(out: &Path) -> Vec<(String, BTreeMap<String, String>)> {
    let text = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "student");
    assert_eq!(header[1..], ALL);
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), header.len(), "{line}");
            let named = header
                .iter()
                .zip(&fields)
                .map(|(name, field)| (name.to_string(), field.to_string()))
                .collect();
            (fields[0].to_owned(), named)
        })
        .collect()
}

/// The fields `columns` of `student`'s row.
fn row(
    rows: &[(String, BTreeMap<String, String>)],
    student: &str,
    columns: &[&str],
) -> Vec<String> {
    let fields = &rows
        .iter()
        .find(|(name, _)| name == student)
        .unwrap_or_else(|| panic!("{student} is not in the gradebook: {rows:?}"))
        .1;
    columns.iter().map(|c| fields[*c].clone()).collect()
}

/// The points and total columns.
const POINTS: [&str; 3] = ["ch01", "ch08", "total"];

/// Every column after the students' name.
const ALL: [&str; 12] = [
    "ch01",
    "ch01_status",
    "ch01_checks",
    "ch08",
    "ch08_status",
    "ch08_checks",
    "total",
    "max_total",
    "late",
    "missing",
    "status",
    "trusted",
];

/// How many checks the public rubric of `chapter` has.
fn checks_of(chapter: &str) -> usize {
    let rubric = std::fs::read_to_string(
        root()
            .join("xtask/checks")
            .join(chapter)
            .join("chapter.toml"),
    )
    .unwrap();
    rubric
        .lines()
        .filter(|line| line.trim() == "[[check]]")
        .count()
}

/// True when every number in `value` has at most four decimals.
fn rounded(value: &Value) -> bool {
    match value {
        Value::Number(number) => number
            .as_f64()
            .is_none_or(|x| (x * 10_000.0).round() / 10_000.0 == x),
        Value::Array(items) => items.iter().all(rounded),
        Value::Object(fields) => fields.values().all(rounded),
        _ => true,
    }
}

#[test]
fn the_class_grades_into_a_gradebook_and_hostile_copies_fail_only_themselves() {
    let graded =
        graded("the_class_grades_into_a_gradebook_and_hostile_copies_fail_only_themselves");
    assert_eq!(graded.output.status.code(), Some(0));
    eprintln!("the class of 9 took {:.1} s", graded.elapsed.as_secs_f64());
    let rows = gradebook(&graded.out);
    assert_eq!(rows.len(), 9, "{rows:?}");
    let (ch01, ch08) = (checks_of("ch01"), checks_of("ch08"));
    for name in ["solved-1", "solved-2", "solved-3"] {
        assert_eq!(
            row(&rows, name, &ALL),
            [
                "1.00",
                "done",
                &format!("{ch01} of {ch01}"),
                "1.00",
                "done",
                &format!("{ch08} of {ch08}"),
                "2.00",
                "2.00",
                "",
                "",
                "graded",
                "yes"
            ]
        );
    }
    assert_eq!(
        row(&rows, "untouched", &ALL[..7]),
        [
            "0.00",
            "not started",
            &format!("0 of {ch01}"),
            "0.00",
            "not started",
            &format!("0 of {ch08}"),
            "0.00"
        ]
    );
    let statuses = ["ch01", "ch01_status", "ch08", "ch08_status", "total"];
    assert_eq!(
        row(&rows, "partial-ch08-only", &statuses),
        ["0.00", "not started", "1.00", "done", "1.00"]
    );
    let partial = row(&rows, "partial-equal-jitter", &statuses);
    let ch08: f64 = partial[2].parse().unwrap();
    assert!(
        partial[..2] == ["1.00", "done"] && ch08 > 0.0 && ch08 < 1.0 && partial[3] == "partial",
        "{partial:?}"
    );
    assert_eq!(
        row(&rows, "missing-ch01", &statuses),
        ["0.00", "missing", "1.00", "done", "1.00"]
    );
    assert_eq!(row(&rows, "missing-ch01", &["missing"]), ["ch01"]);

    // The hanging copy fails alone, and its sleeper dies with it.
    assert_eq!(
        row(&rows, "hostile-hangs", &ALL),
        ["", "", "", "", "", "", "", "2.00", "", "", "failed", "yes"]
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
    let floods = row(&rows, "hostile-floods", &POINTS);
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
    assert_eq!(report["schema"], "retry-workbook/class-report/v2");
    assert!(rounded(&report), "no float has more than four decimals");
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
    // The shares count only those who attempted the chapter and compiled: five of the eight
    // graded attempted ch01 (three solved, the partial one and the one that floods).
    let checks = report["checks"].as_array().unwrap();
    let shares: Vec<f64> = checks
        .iter()
        .map(|c| c["share"].as_f64().unwrap())
        .collect();
    assert!(
        shares.windows(2).all(|w| w[0] <= w[1]),
        "most missed first: {shares:?}"
    );
    let check = checks.iter().find(|c| c["chapter"] == "ch01").unwrap();
    assert_eq!(
        (
            &check["attempted"],
            &check["not_started"],
            &check["missing"]
        ),
        (&5.into(), &2.into(), &1.into()),
        "{check}"
    );
    assert_eq!(report["totals"]["graded"], 8);

    // The page names each status, folds the failed checks of a partial chapter, and links only
    // to pages of the built book that exist.
    let html = std::fs::read_to_string(graded.out.join("class-report.html")).unwrap();
    assert!(
        html.contains("<td class=\"left-out\">2 not started, 1 missing</td>"),
        "the left out, counted beside"
    );
    assert!(html.contains("<small>not started</small>"));
    let partial_cell = html
        .split("data-student=\"partial-equal-jitter\"")
        .nth(1)
        .unwrap();
    assert!(
        partial_cell.contains("failed</summary><ul><li><code title=\""),
        "the failed checks, folded: {partial_cell}"
    );
    let build = root().join("book/build");
    for href in html
        .split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
    {
        let file = href
            .strip_prefix("file://")
            .unwrap_or_else(|| panic!("{href} is not a link into the built book"));
        let file = file.split('#').next().unwrap();
        assert!(
            file.starts_with(build.to_str().unwrap()) && Path::new(file).is_file(),
            "{href} leads nowhere"
        );
    }
}

#[test]
fn the_html_report_passes_the_browser_test() {
    let graded = graded("the_html_report_passes_the_browser_test");
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
    let dir = Scratch::new("class-resume");
    for name in ["a", "b", "c", "d", "e"] {
        let student = copy(&dir, name);
        solve(&student, CH08, &[]);
    }
    let out = Scratch::new("class-resume-out");
    let mut first = grade_class(&dir, &out, 1)
        .args(["--book-url", HOSTED])
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

    let second = run(grade_class(&dir, &out, 2).args(["--book-url", HOSTED]));
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
            .all(|(name, _)| row(&rows, name, &POINTS) == ["0.00", "1.00", "1.00"]),
        "{rows:?}"
    );

    // A changed copy is graded again, and only it.
    solve(&dir.join("c"), CH01, &[]);
    let third = run(grade_class(&dir, &out, 2).args(["--book-url", HOSTED]));
    let text = String::from_utf8_lossy(&third.stdout);
    assert!(
        text.contains("1 graded now (0 could not be graded), 4 reused"),
        "{text}"
    );
    assert_eq!(
        row(&gradebook(&out), "c", &POINTS),
        ["1.00", "1.00", "2.00"]
    );
}

#[test]
fn single_reports_merge_into_the_same_gradebook_and_self_graded_ones_are_untrusted() {
    let graded =
        graded("single_reports_merge_into_the_same_gradebook_and_self_graded_ones_are_untrusted");
    let reports = Scratch::new("class-reports");
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
    let untrusted = Scratch::new("class-untrusted");
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

    let out = Scratch::new("class-merged");
    let output = run(merge()
        .arg("--from-reports")
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
        assert_eq!(row(&merged, name, &ALL), row(&direct, name, &ALL), "{name}");
    }
    assert_eq!(row(&merged, "solved-2", &["status"]), ["rejected"]);
    assert_eq!(
        row(&merged, "self-graded", &["status", "trusted"]),
        ["graded", "no"],
        "a self-graded report is not trusted"
    );
    assert_eq!(row(&merged, "other-build", &["trusted"]), ["no"]);

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
    let out = Scratch::new("class-merged-untrusted");
    run(merge()
        .arg("--untrusted-reports")
        .arg(&reports)
        .arg("--out")
        .arg(&out));
    assert_eq!(row(&gradebook(&out), "solved-1", &["trusted"]), ["no"]);
}

#[test]
fn a_class_of_an_untouched_a_broken_and_a_solved_copy_says_which_is_which_outside_git() {
    let _turn = one_run_at_a_time();
    let dir = Scratch::new("class-which");
    copy(&dir, "untouched");
    let broken = copy(&dir, "broken");
    let lib = broken.join("exercises").join(CH01).join("src/lib.rs");
    let code = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        format!("{code}\nfn broken() -> u32 {{ \"three\" }}\n"),
    )
    .unwrap();
    let solved = copy(&dir, "solved");
    solve(&solved, CH01, &[]);
    solve(&solved, CH08, &[]);
    // Inside the instructor's clone, in a folder that no .gitignore of the workbook names.
    let out = &Scratch::in_repository("class-grades-test");
    let output = run(grade_class(&dir, out, 2).args(["--book-url", HOSTED]));
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "Reports are in {} (its .gitignore keeps students' grades out of git)",
            out.display()
        )),
        "{text}"
    );
    let progress = String::from_utf8_lossy(&output.stderr);
    assert!(
        progress.contains("broken: 0.00 of 2.00 points, 1 not started, 1 does not compile"),
        "{progress}"
    );

    let rows = gradebook(out);
    let columns = ["ch01_status", "ch01_checks", "ch08_status", "total"];
    let ch01 = checks_of("ch01");
    assert_eq!(
        row(&rows, "untouched", &columns),
        [
            "not started",
            &format!("0 of {ch01}"),
            "not started",
            "0.00"
        ]
    );
    assert_eq!(
        row(&rows, "broken", &columns),
        [
            "does not compile",
            &format!("0 of {ch01}"),
            "not started",
            "0.00"
        ]
    );
    assert_eq!(
        row(&rows, "solved", &columns),
        ["done", &format!("{ch01} of {ch01}"), "done", "2.00"]
    );

    // What to teach again counts only the solved copy; the others stand beside.
    let report = read_json(&out.join("class-report.json"));
    for check in report["checks"].as_array().unwrap() {
        assert_eq!(
            (
                &check["passed"],
                &check["attempted"],
                &check["share"],
                &check["not_started"],
                &check["does_not_compile"]
            ),
            (
                &1.into(),
                &1.into(),
                &1.0.into(),
                &if check["chapter"] == "ch01" { 1 } else { 2 }.into(),
                &if check["chapter"] == "ch01" { 1 } else { 0 }.into()
            ),
            "{check}"
        );
    }
    let html = std::fs::read_to_string(out.join("class-report.html")).unwrap();
    assert!(html.contains("<td class=\"left-out\">1 not started, 1 does not compile</td>"));
    assert!(html.contains("<small>does not compile</small>"));
    assert!(html.contains(&format!("<a href=\"{HOSTED}/ch01-strong-medicine.html#")));

    let status = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all", "--"])
        .arg(out)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(status.status.success());
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "git sees the students' grades"
    );
}
