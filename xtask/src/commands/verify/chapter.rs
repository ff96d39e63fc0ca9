//! The audits of one chapter: its crates, rubric and page agree; the page shows no answer; the
//! shipped record is current; the exercise fails, the solution passes, every mutant is rejected;
//! the page's example programs run.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::grade::grader::{self, Grader, Target};

use super::findings::Findings;
use crate::build::compile;
use crate::build::crate_copy;
use crate::build::harness;
use crate::build::manifest_toml::CrateManifest;
use crate::curriculum::mutants;
use crate::curriculum::shipped::{self, Shipped};
use crate::curriculum::shown_answers;
use crate::curriculum::translation::{self, Coverage};
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, read_text_lf, rust_files};
use crate::grade::runner::{OUTPUT_LIMIT_BYTES, TESTS_MEMORY_BYTES};
use crate::lang::Lang;
use crate::report::model::{CheckResult, Report};
use crate::report::text::explain;
use crate::sandbox::{self, Ending, Limits};
use crate::util::{FolderLock, write_if_changed};

/// Words every chapter page has in a `##` heading: the standard shape of a page.
pub const PAGE_SECTIONS: &[&str] = &["goals", "exercise", "pitfalls", "checklist", "references"];

/// Checks one chapter completely.
pub fn verify_chapter(
    workbook: &Workbook,
    chapter: &Chapter,
    with_mutants: bool,
    lane: usize,
    findings: &mut Findings,
) -> Result<()> {
    findings.line(chapter.to_string());
    let rubric = match Rubric::for_chapter(workbook, chapter, None) {
        Ok(rubric) => rubric,
        Err(error) => {
            findings.fail(format!("{}: {error:#}", chapter.id));
            return Ok(());
        }
    };
    verify_structure(workbook, chapter, &rubric, findings)?;
    let build = compile::BuildOptions {
        lane,
        ..compile::BuildOptions::default()
    };
    verify_examples(workbook, chapter, build, findings)?;

    let grader = Grader {
        build,
        ..Grader::new(workbook)
    };
    let exercise = grader.grade(chapter, &Target::Exercise)?;
    findings.graded.add(&exercise);
    verify_exercise_fails(chapter, &exercise, findings);

    let solution = grader.grade(chapter, &Target::Solution)?;
    findings.graded.add(&solution);
    verify_solution_passes(chapter, &rubric, &solution, findings);

    if rubric.learner_tests.is_some() {
        // The mutants are the checks: the solution's reference suite must kill every one, which
        // the solution's passing report has just shown.
        findings.require(
            rubric.checks.iter().any(|c| c.id.starts_with("kills.")),
            format!(
                "{}: the reference suite is graded against mutants",
                chapter.id
            ),
        );
    } else if with_mutants {
        verify_mutants(&grader, chapter, &rubric, findings)?;
    }
    Ok(())
}

/// The chapter's crates, rubric and page agree with each other and with the rules.
pub fn verify_structure(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    verify_crates(workbook, chapter, rubric, findings)?;
    findings.require(
        !rubric.hints.is_empty(),
        format!("{}: has hints", chapter.id),
    );
    verify_shipped_record(workbook, chapter, findings)?;
    verify_translation(chapter, rubric, findings);
    verify_page(workbook, chapter, rubric, findings);
    verify_no_answer_on_page(workbook, chapter, rubric, findings)
}

/// The rubric's Japanese (`ja.toml`), when there is one, has exactly its hints and rules; a
/// chapter without one is counted, not failed.
fn verify_translation(chapter: &Chapter, rubric: &Rubric, findings: &mut Findings) {
    let id = &chapter.id;
    match translation::coverage(&rubric.dir, rubric, Lang::Ja) {
        Coverage::Complete => findings.ok(format!(
            "{id}: ja.toml has its {} hints and {} rules",
            rubric.hints.len(),
            rubric.checks.len()
        )),
        Coverage::Missing { hints, titles } => findings.note(format!(
            "{id}: no ja.toml: {hints} hints and {titles} rules are English only"
        )),
        Coverage::Inconsistent(problems) => {
            findings.fail(format!("{id}: ja.toml: {}", problems.join("; ")));
        }
    }
}

/// Package names, given files, what the exercise leaves to do and that the solution does it all.
pub fn verify_crates(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    for (dir, expected) in [
        (workbook.exercise_dir(chapter), chapter.crate_name()),
        (
            workbook.solution_dir(chapter),
            chapter.solution_crate_name(),
        ),
    ] {
        let shown = display_path(workbook, &dir);
        match CrateManifest::read(&dir).and_then(|m| m.package_name()) {
            Ok(name) => findings.require(
                name == expected,
                format!("{id}: {shown} is the package `{expected}`"),
            ),
            Err(error) => findings.fail(format!("{id}: {shown}: {error:#}")),
        }
    }
    for given in &rubric.given {
        let exercise = read_text_lf(&workbook.exercise_dir(chapter).join(given));
        let solution = read_text_lf(&workbook.solution_dir(chapter).join(given));
        let same = matches!((&exercise, &solution), (Ok(a), Ok(b)) if a == b);
        findings.require(
            same,
            format!("{id}: the given file {given} is identical in exercise and solution"),
        );
    }
    let learner_file = workbook.exercise_dir(chapter).join(rubric.learner_file());
    let shipped = std::fs::read_to_string(&learner_file).unwrap_or_default();
    if rubric.learner_tests.is_some() {
        let has_tests = shipped
            .lines()
            .map(str::trim_start)
            .any(|line| line.starts_with("#[test]") || line.starts_with("#[tokio::test"));
        findings.require(
            !has_tests,
            format!(
                "{id}: the exercise's {} ships with no tests",
                rubric.learner_file()
            ),
        );
    } else {
        findings.require(
            shipped.contains("todo!("),
            format!("{id}: the exercise has todo!()s to replace"),
        );
    }
    let solution_sources = rust_files(&workbook.solution_dir(chapter).join("src"))?;
    let unfinished = solution_sources.iter().any(|file| {
        std::fs::read_to_string(file)
            .is_ok_and(|text| text.contains("todo!(") || text.contains("unimplemented!("))
    });
    findings.require(
        !unfinished,
        format!("{id}: the solution has no todo!() or unimplemented!()"),
    );
    Ok(())
}

/// The page exists, has the standard sections, and has every section a check points to.
pub fn verify_page(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) {
    let id = &chapter.id;
    let page = workbook.page(chapter);
    findings.require(
        page.is_file(),
        format!(
            "{id}: the book page {} exists",
            display_path(workbook, &page)
        ),
    );
    for check in &rubric.checks {
        if let Some(section) = &check.section {
            findings.require(
                grader::page_has_section(&page, section),
                format!(
                    "{id}: {} points to §{section}, a heading of the page",
                    check.id
                ),
            );
        }
    }
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    let headings: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("## "))
        .map(str::to_lowercase)
        .collect();
    let missing: Vec<String> = PAGE_SECTIONS
        .iter()
        .filter(|section| !headings.iter().any(|heading| heading.contains(*section)))
        .map(|section| section.to_string())
        .collect();
    findings.require(
        missing.is_empty(),
        format!(
            "{id}: the page has the standard sections ({}){}",
            PAGE_SECTIONS.join(", "),
            stray_list("missing", &missing)
        ),
    );
}

/// The page teaches without handing over the answer: no code block of the rendered page shares a
/// run of tokens with a solution function the learner writes (see `shown_answers`).
pub fn verify_no_answer_on_page(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let solution_dir = workbook.solution_dir(chapter);
    let answers = shown_answers::answers(
        &shown_answers::rust_sources(&workbook.exercise_dir(chapter))?,
        &shown_answers::rust_sources(&solution_dir)?,
        &rubric.given,
        &display_path(workbook, &solution_dir),
    );
    // The page and its sub-pages (`book/src/<stem>/*.md`).
    let mut pages = vec![workbook.page(chapter)];
    let sub_pages = workbook.page(chapter).with_extension("");
    if sub_pages.is_dir() {
        for file in shipped::crate_files(&sub_pages)? {
            if file.ends_with(".md") {
                pages.push(sub_pages.join(file));
            }
        }
    }
    let mut shown_anywhere = false;
    for page in &pages {
        let shown_page = display_path(workbook, page);
        let lines = match shown_answers::expand_includes(page) {
            Ok(lines) => lines,
            Err(error) => {
                findings.fail(format!("{id}: {shown_page}: {error:#}"));
                continue;
            }
        };
        let shown = shown_answers::shown_answers(&shown_answers::code_blocks(&lines), &answers);
        for finding in &shown {
            findings.fail(format!("{id}: {}", finding.message(&shown_page)));
        }
        shown_anywhere |= !shown.is_empty();
    }
    if !shown_anywhere {
        findings.ok(format!(
            "{id}: no page of the chapter ({}) shows any of the {} solution functions the exercise \
             asks for (no run of {} tokens)",
            pages.len(),
            answers.len(),
            shown_answers::RUN_TOKENS
        ));
    }
    Ok(())
}

/// The record of the shipped exercise (`xtask/shipped/<chapter>.txt`) matches the exercise; a
/// stale one is rewritten, and the finding says to commit it.
pub fn verify_shipped_record(
    workbook: &Workbook,
    chapter: &Chapter,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let path = Shipped::path(workbook, chapter);
    let shown = display_path(workbook, &path);
    let now = Shipped::of_folder(&workbook.exercise_dir(chapter))?;
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    let text = now.render(chapter);
    if recorded == text {
        findings.ok(format!("{id}: {shown} records the exercise as it is"));
    } else {
        write_if_changed(&path, &text)?;
        findings.fail(format!(
            "{id}: {shown} did not record the exercise as it is; it has been rewritten: commit it \
             with the exercise (reset and grade read it)"
        ));
    }
    Ok(())
}

pub fn verify_exercise_fails(chapter: &Chapter, report: &Report, findings: &mut Findings) {
    let id = &chapter.id;
    if !report.compiled {
        findings.fail(format!(
            "{id}: the untouched exercise must compile (it fails only its checks)"
        ));
        return;
    }
    let passing: Vec<&str> = report
        .hidden()
        .filter(|r| r.outcome.passed())
        .map(|r| r.id.as_str())
        .collect();
    let skipped = report.hidden().filter(|r| r.outcome.skipped()).count();
    if skipped > 0 {
        findings.unproven(format!(
            "{id}: {skipped} checks were skipped on the untouched exercise, so they are not proven to fail on it"
        ));
    }
    findings.require(
        passing.is_empty(),
        if passing.is_empty() {
            format!(
                "{id}: the untouched exercise fails all {} hidden checks that ran",
                report.hidden().filter(|r| r.outcome.failed()).count()
            )
        } else {
            format!(
                "{id}: checks that pass on the untouched exercise cannot fail: {}",
                passing.join(", ")
            )
        },
    );
}

pub fn verify_solution_passes(
    chapter: &Chapter,
    rubric: &Rubric,
    report: &Report,
    findings: &mut Findings,
) {
    let id = &chapter.id;
    if let Some(failure) = &report.compile_failure {
        findings.fail(format!(
            "{id}: the solution does not compile with its checks:\n{}",
            failure.first_message()
        ));
        return;
    }
    let skipped: Vec<&CheckResult> = report
        .results
        .iter()
        .filter(|r| r.outcome.skipped())
        .collect();
    if let Some(first) = skipped.first() {
        let ids: Vec<&str> = skipped.iter().map(|r| r.id.as_str()).collect();
        findings.unproven(format!(
            "{id}: {} checks were skipped on the solution ({}): {}",
            skipped.len(),
            ids.join(", "),
            explain(&first.outcome)
        ));
    }
    for result in &report.results {
        if result.outcome.failed() {
            findings.fail(format!(
                "{id}: the solution fails {}: {}",
                result.id,
                explain(&result.outcome)
            ));
        }
    }
    let all_pass = report.passed;
    findings.require(
        all_pass,
        format!(
            "{id}: the solution passes all {} checks and {} visible tests (checks ran in {} ms)",
            report.hidden().count(),
            report.visible().count(),
            report.run_ms
        ),
    );
    if rubric.learner_tests.is_some() {
        return;
    }
    // Every test in the check files must be in the rubric, or it would never be graded.
    let listed: Vec<String> = rubric.checks.iter().map(|c| c.test_name()).collect();
    let strays: Vec<String> = report
        .available_tests
        .iter()
        .filter(|name| !name.starts_with(harness::VISIBLE_MODULE) && !listed.contains(name))
        .cloned()
        .collect();
    findings.require(
        strays.is_empty(),
        format!(
            "{id}: every test in the check files is in the rubric{}",
            stray_list("not in the rubric", &strays)
        ),
    );
}

/// ` (label: a, b)`, or nothing for an empty list.
pub fn stray_list(label: &str, strays: &[String]) -> String {
    if strays.is_empty() {
        String::new()
    } else {
        format!(" ({label}: {})", strays.join(", "))
    }
}

pub fn verify_mutants(
    grader: &Grader,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let workbook = grader.workbook;
    let id = &chapter.id;
    let all = match mutants::load_all(&workbook.mutants_dir(chapter)) {
        Ok(all) => all,
        Err(error) => {
            findings.fail(format!("{id}: {error:#}"));
            return Ok(());
        }
    };
    findings.require(!all.is_empty(), format!("{id}: has mutants"));
    for mutant in &all {
        let unknown: Vec<&str> = mutant
            .rejected_by
            .iter()
            .filter(|named| !rubric.checks.iter().any(|check| &check.id == *named))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            findings.fail(format!(
                "{id}: mutant {} names {}, which is not a check of the rubric",
                mutant.name,
                unknown.join(", ")
            ));
            continue;
        }
        // Only the checks that name the mutant run: they are what must reject it, and a hung
        // mutant then waits out their time limits alone. The exercise's visible tests would
        // tell nothing, and wait out their 10 s limits.
        let named = Grader {
            visible_tests: false,
            only_checks: Some(mutant.rejected_by.clone()),
            build: grader.build,
            ..Grader::new(workbook)
        };
        let report = match named.grade(chapter, &Target::Mutant(mutant.name.clone())) {
            Ok(report) => {
                findings.graded.add(&report);
                report
            }
            Err(error) => {
                findings.fail(format!("{id}: mutant {}: {error:#}", mutant.name));
                continue;
            }
        };
        if let Some(failure) = &report.compile_failure {
            findings.fail(format!(
                "{id}: mutant {} does not compile (a mutant must be wrong, not broken):\n{}",
                mutant.name,
                failure.first_message()
            ));
            continue;
        }
        verify_rejection(chapter, mutant, &report, findings);
    }
    let unnamed: Vec<&str> = rubric
        .checks
        .iter()
        .filter(|check| !all.iter().any(|m| m.rejected_by.contains(&check.id)))
        .map(|check| check.id.as_str())
        .collect();
    if !unnamed.is_empty() {
        findings.note(format!(
            "{id}: no mutant names {} of {} checks ({}); each is proven only to fail on the \
             untouched exercise",
            unnamed.len(),
            rubric.checks.len(),
            unnamed.join(", ")
        ));
    }
    Ok(())
}

/// Every check a mutant names fails on it (a skipped one leaves it unproven).
pub fn verify_rejection(
    chapter: &Chapter,
    mutant: &mutants::Mutant,
    report: &Report,
    findings: &mut Findings,
) {
    let id = &chapter.id;
    let named = mutant.rejected_by.join(", ");
    let skipped: Vec<String> = mutant
        .rejected_by
        .iter()
        .filter_map(|check| report.result(check))
        .filter(|r| r.outcome.skipped())
        .map(|r| format!("{} ({})", r.id, explain(&r.outcome)))
        .collect();
    if !skipped.is_empty() {
        findings.unproven(format!(
            "{id}: mutant {} is not proven rejected: {} skipped",
            mutant.name,
            skipped.join(", ")
        ));
        return;
    }
    let survived: Vec<&str> = mutant
        .rejected_by
        .iter()
        .filter(|check| !report.result(check).is_some_and(|r| r.outcome.failed()))
        .map(String::as_str)
        .collect();
    if survived.is_empty() {
        findings.ok(format!(
            "{id}: mutant {} is rejected by {named}",
            mutant.name
        ));
    } else {
        findings.fail(format!(
            "{id}: mutant {} survives {} ({})",
            mutant.name,
            survived.join(", "),
            mutant.description
        ));
    }
}

/// The page's "predict, then run" programs (`exercises/<chapter>/examples/*.rs`) compile and run
/// against the solution: built as examples of a copy of the solution that carries the exercise's
/// library name, each run in the sandbox and expected to exit successfully.
pub fn verify_examples(
    workbook: &Workbook,
    chapter: &Chapter,
    build: compile::BuildOptions,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let exercise = workbook.exercise_dir(chapter);
    let examples: Vec<(String, String)> = rust_files(&exercise.join("examples"))?
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            Ok((format!("examples/{name}"), text))
        })
        .collect::<Result<_>>()?;
    if examples.is_empty() {
        return Ok(());
    }
    let dir = workbook.work_dir().join("examples").join(id);
    let _lock = FolderLock::acquire(&dir)?;
    crate_copy::write_crate_copy(
        &workbook.solution_dir(chapter),
        &dir,
        &crate_copy::CrateCopy {
            package: &format!("{}_examples", chapter.crate_name()),
            library: Some(&chapter.crate_name()),
            replaced: &examples,
            ..crate_copy::CrateCopy::default()
        },
    )?;
    let copy = harness::Graded::at(&dir, "the solution".to_owned(), "examples")?;
    let built = compile::cargo_build(
        workbook,
        &dir,
        &copy,
        &["build", "--examples"],
        build,
        false,
    )?;
    let binaries = match built {
        compile::BuildOutcome::Built(built) => built.binaries,
        compile::BuildOutcome::Failed(failure) => {
            findings.fail(format!(
                "{id}: the examples do not compile against the solution:\n{}",
                failure.first_message()
            ));
            return Ok(());
        }
    };
    let scratch = dir.join("runs").join(std::process::id().to_string());
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let limits = Limits {
        wall: Duration::from_secs(30),
        memory_bytes: TESTS_MEMORY_BYTES,
        output_bytes: OUTPUT_LIMIT_BYTES,
    };
    for (name, _) in &examples {
        let stem = name.trim_start_matches("examples/").trim_end_matches(".rs");
        let Some(binary) = binaries.iter().find(|binary| binary.target == stem) else {
            findings.fail(format!("{id}: {name} built no program"));
            continue;
        };
        let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
        let mut command = Command::new(&binary.path);
        command.current_dir(&scratch).env("NO_COLOR", "1");
        let finished = sandbox::run(command, limits, &stdout, &stderr)?;
        let ok = matches!(&finished.ending, Ending::Exited(status) if status.success());
        if ok {
            findings.ok(format!(
                "{id}: {name} compiles and runs against the solution ({:.1} s)",
                finished.elapsed.as_secs_f64()
            ));
        } else {
            let err = crate::grade::runner::read_head(&stderr, 4_000);
            findings.fail(format!(
                "{id}: {name} fails against the solution ({:?}):\n{}",
                finished.ending,
                err.trim()
            ));
        }
    }
    Ok(())
}
