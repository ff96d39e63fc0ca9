//! Grading a learner's *tests*: the suite runs against the shipped code (it must pass) and
//! against every mutant (it should fail), and each mutant it kills earns that mutant's points.
//! A chapter opts in with `[learner-tests]` in its rubric; nothing else in the grader changes.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::grading::{CheckKind, CheckResult, Report, Request, display_path};
use crate::harness::{self, Graded};
use crate::mutants::{self, Mutant};
use crate::runner::{Outcome, read_head};
use crate::sandbox::{self, Ending, Limits};
use crate::workbook::{LearnerTests, SUITE_FAST, SUITE_GREEN, kill_check_id};

/// What one run of the suite showed.
struct SuiteRun {
    passed: usize,
    failed: Vec<String>,
    /// Set when a test binary did not finish normally (a hang, a crash).
    trouble: Option<String>,
    elapsed: Duration,
    peak_memory_kib: u64,
}

impl SuiteRun {
    fn green(&self) -> bool {
        self.failed.is_empty() && self.trouble.is_none() && self.passed > 0
    }
}

/// Grades a learner-tests chapter.
pub fn grade(request: &Request, spec: &LearnerTests) -> Result<Report> {
    let Request {
        workbook,
        chapter,
        rubric,
        graded,
        color,
        ..
    } = *request;
    let mut report = Report::start(workbook, chapter, rubric, graded);
    // The code under test always comes from the shipped exercise: the suite meets the real code.
    let shipped = workbook.exercise_dir(chapter);
    let mut under_test = Vec::new();
    for file in &spec.under_test {
        let text = std::fs::read_to_string(shipped.join(file))
            .with_context(|| format!("reading the shipped {file}"))?;
        under_test.push((file.clone(), text));
    }
    let mut hasher = DefaultHasher::new();
    graded.dir.hash(&mut hasher);
    let base = workbook.work_dir().join("suites").join(format!(
        "{}-{:08x}",
        chapter.id,
        hasher.finish() as u32
    ));
    // Each copy is a package of its own name (cargo tells builds apart by it); the library
    // inside keeps the crate's name, so the learner's tests can `use` it.
    let key = base
        .file_name()
        .map(|n| n.to_string_lossy().replace('-', "_"))
        .unwrap_or_default();
    let package = format!("{}_suite_{key}", chapter.crate_name());
    let _lock = crate::manifest_toml::FolderLock::acquire(&base)?;
    let learner_path = display_path(workbook, &graded.dir);

    let correct = mutants::Mutant::unchanged();
    let started = Instant::now();
    let run = match build_and_run(
        workbook,
        graded,
        &base.join("correct"),
        &package,
        &under_test,
        &correct,
        spec,
        color,
    )? {
        Ok(run) => run,
        Err(failure) => {
            let mut failure = failure;
            for error in &mut failure.errors {
                error.rendered = error.rendered.replace(
                    &format!("{}/", display_path(workbook, &base.join("correct"))),
                    &format!("{learner_path}/"),
                );
                error.file = error.file.take().map(|f| {
                    f.replace(
                        &display_path(workbook, &base.join("correct")),
                        &learner_path,
                    )
                });
            }
            report.start_here = failure
                .errors
                .first()
                .and_then(|e| Some(format!("{}:{}", e.file.as_ref()?, e.line?)));
            report.compile_failure = Some(failure);
            return Ok(report);
        }
    };
    report.compiled = true;
    report.compile_ms = started.elapsed().saturating_sub(run.elapsed).as_millis() as u64;

    let green = run.green();
    let mut results = vec![
        row(
            rubric,
            SUITE_GREEN,
            if green {
                Outcome::Passed
            } else {
                failed(not_green(&run))
            },
            &run,
        ),
        row(
            rubric,
            SUITE_FAST,
            if !green {
                failed("not measured: your tests must first pass on the correct code".to_owned())
            } else if run.elapsed.as_millis() as u64 > spec.max_suite_ms {
                failed(format!(
                    "your tests took {} ms of real time on the correct code (the limit is {} ms): \
                     use tokio's paused clock (`#[tokio::test(start_paused = true)]`) so sleeps cost \
                     nothing, and never std::thread::sleep",
                    run.elapsed.as_millis(),
                    spec.max_suite_ms
                ))
            } else {
                Outcome::Passed
            },
            &run,
        ),
    ];
    let mutant_dir = base.join("mutant");
    for mutant in mutants::load_all(&rubric.mutants_dir(workbook, chapter))? {
        let id = kill_check_id(&mutant.name);
        if !green {
            results.push(row(
                rubric,
                &id,
                failed("not run: your tests must first pass on the correct code".to_owned()),
                &run,
            ));
            continue;
        }
        let outcome = match build_and_run(
            workbook,
            graded,
            &mutant_dir,
            &format!("{package}_mutant"),
            &under_test,
            &mutant,
            spec,
            color,
        )? {
            Ok(mutant_run) if mutant_run.green() => failed(format!(
                "a hidden mutant survived your tests — {}. All {} of your tests passed on it; add a \
                 test that fails when the code does this",
                lower_first(&mutant.description),
                mutant_run.passed
            )),
            Ok(_) => Outcome::Passed,
            Err(_) => Outcome::Crashed {
                reason: format!(
                    "mutant {} does not compile (an author's error, not yours)",
                    mutant.name
                ),
            },
        };
        results.push(row(rubric, &id, outcome, &run));
    }
    report.run_ms = run.elapsed.as_millis() as u64;
    report.score = results.iter().map(|r| r.earned).sum();
    report.passed = results.iter().all(|r| r.outcome.passed());
    report.results = results;
    if !report.passed {
        report.start_here = Some(format!("{learner_path}/{} (your tests)", spec.suite));
    }
    Ok(report)
}

fn failed(message: String) -> Outcome {
    Outcome::Failed {
        message,
        location: None,
        in_graded_code: false,
    }
}

fn not_green(run: &SuiteRun) -> String {
    if let Some(trouble) = &run.trouble {
        format!("your test run did not finish normally: {trouble}")
    } else if !run.failed.is_empty() {
        format!(
            "{} of your tests fail on the correct code ({}); a test must pass when the code is right",
            run.failed.len(),
            run.failed.join(", ")
        )
    } else {
        "no test ran: an empty suite catches nothing; write #[test] or #[tokio::test] functions"
            .to_owned()
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first
            .to_lowercase()
            .chain(chars)
            .collect::<String>()
            .trim_end_matches('.')
            .to_owned(),
        None => String::new(),
    }
}

/// A report row for the rubric check `id`.
fn row(
    rubric: &crate::workbook::Rubric,
    id: &str,
    outcome: Outcome,
    run: &SuiteRun,
) -> CheckResult {
    let spec = rubric.checks.iter().find(|c| c.id == id);
    let points = spec.map_or(0, |c| c.points);
    CheckResult {
        id: id.to_owned(),
        kind: CheckKind::Check,
        title: spec.map(|c| c.title.clone()).unwrap_or_default(),
        points,
        earned: if outcome.passed() { points } else { 0 },
        outcome,
        section: None,
        elapsed_ms: run.elapsed.as_millis() as u64,
        peak_memory_kib: run.peak_memory_kib,
    }
}

/// Writes the learner's crate (with `mutant`'s edits) to `dir`, builds its tests, and runs them.
#[allow(clippy::too_many_arguments)]
fn build_and_run(
    workbook: &crate::workbook::Workbook,
    graded: &Graded,
    dir: &Path,
    package: &str,
    under_test: &[(String, String)],
    mutant: &Mutant,
    spec: &LearnerTests,
    color: bool,
) -> Result<Result<SuiteRun, harness::CompileFailure>> {
    mutants::write_crate_copy(&graded.dir, dir, package, under_test, mutant)?;
    let copy = Graded::at(dir, graded.label.clone(), "suite")?;
    let built = match harness::build_tests(workbook, dir, &copy, color)? {
        Ok(built) => built,
        Err(failure) => return Ok(Err(failure)),
    };
    let limits = Limits {
        wall: Duration::from_millis((spec.max_suite_ms * 3).max(3_000)),
        memory_bytes: 1024 * 1024 * 1024,
        output_bytes: 8 * 1024 * 1024,
    };
    let mut run = SuiteRun {
        passed: 0,
        failed: Vec::new(),
        trouble: None,
        elapsed: Duration::ZERO,
        peak_memory_kib: 0,
    };
    let scratch = dir.join("runs").join(std::process::id().to_string());
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    for (target, binary) in &built.binaries {
        let mut command = Command::new(binary);
        command
            .args(["--test-threads", "2", "--color", "never"])
            .current_dir(&scratch)
            .env("RUST_BACKTRACE", "0")
            .env("INSTA_UPDATE", "no")
            .env("TMPDIR", &scratch)
            .env("TMP", &scratch)
            .env("TEMP", &scratch);
        let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
        let finished = sandbox::run(command, limits, &stdout, &stderr)?;
        run.elapsed += finished.elapsed;
        run.peak_memory_kib = run.peak_memory_kib.max(finished.peak_memory_kib);
        let output = read_head(&stdout, 1024 * 1024);
        for line in output.lines() {
            if let Some(name) = line.strip_prefix("test ") {
                if name.ends_with(" ... ok") {
                    run.passed += 1;
                } else if let Some(name) = name.strip_suffix(" ... FAILED") {
                    run.failed.push(name.to_owned());
                }
            }
        }
        match finished.ending {
            Ending::TimedOut => {
                run.trouble = Some(format!(
                    "the tests of {target} did not finish within {} s",
                    limits.wall.as_secs()
                ))
            }
            Ending::Exited(status) if !status.success() && run.failed.is_empty() => {
                run.trouble = Some(format!("the tests of {target} ended abnormally ({status})"));
            }
            Ending::Exited(_) => {}
        }
    }
    Ok(Ok(run))
}
