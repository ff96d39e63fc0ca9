//! `cargo xtask verify [chapters…]`: prove that every chapter is sound. The untouched exercise
//! fails every hidden check; the solution passes every check and is clippy- and rustfmt-clean;
//! each mutant is rejected by the check it names; the manifest, the folders and the book agree.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use crate::commands::check::{TargetArgs, grade_chapter};
use crate::grading::{self, Report};
use crate::harness;
use crate::manifest_toml::CrateManifest;
use crate::report::explain;
use crate::workbook::{Chapter, Rubric, Workbook, read_text_lf, rust_files};
use crate::{mutants, term};

/// Prove every chapter (authors and CI): exercises fail, solutions pass, mutants are caught.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only these chapters (default: every ready chapter, plus the book-wide checks).
    pub chapters: Vec<String>,
    /// Skip the mutants (faster while writing a chapter).
    #[arg(long)]
    pub no_mutants: bool,
}

/// Words every chapter page has in a `##` heading: the standard shape of a page.
const PAGE_SECTIONS: &[&str] = &["goals", "exercise", "pitfalls", "checklist", "references"];

/// Problems found so far, printed as they come.
#[derive(Default)]
pub struct Findings {
    pub problems: Vec<String>,
    pub passed: usize,
}

impl Findings {
    pub fn ok(&mut self, what: impl AsRef<str>) {
        self.passed += 1;
        println!("  ok    {}", what.as_ref());
    }

    pub fn fail(&mut self, what: impl Into<String>) {
        let what = what.into();
        println!("  FAIL  {what}");
        self.problems.push(what);
    }

    pub fn expect(&mut self, condition: bool, what: impl Into<String>) {
        if condition {
            self.ok(what.into());
        } else {
            self.fail(what);
        }
    }
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let started = Instant::now();
    let mut findings = Findings::default();
    let chapters: Vec<&Chapter> = if args.chapters.is_empty() {
        workbook.ready_chapters().collect()
    } else {
        args.chapters
            .iter()
            .map(|id| workbook.ready_chapter(id))
            .collect::<Result<_>>()?
    };
    if args.chapters.is_empty() {
        println!("the workbook");
        verify_layout(&workbook, &mut findings)?;
        findings.expect(
            crate::commands::figures::figures(&workbook, true)?,
            "every figure of the book is up to date (`cargo xtask figures` regenerates them)",
        );
        findings.expect(
            crate::commands::book::builds(&workbook)?,
            "the book builds (mdbook build book)",
        );
    }
    for chapter in &chapters {
        verify_chapter(&workbook, chapter, !args.no_mutants, &mut findings)?;
    }
    println!("lint");
    lint_solutions(&workbook, &chapters, &mut findings)?;
    println!("\nverify took {:.1} s", started.elapsed().as_secs_f64());
    for problem in &findings.problems {
        println!("  - {problem}");
    }
    // The closing line: "N passed, N failed" alone after one word.
    println!(
        "verify: {} passed, {} failed",
        findings.passed,
        findings.problems.len()
    );
    if findings.problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

/// Checks one chapter completely.
pub fn verify_chapter(
    workbook: &Workbook,
    chapter: &Chapter,
    with_mutants: bool,
    findings: &mut Findings,
) -> Result<()> {
    println!("{chapter}");
    let rubric = match Rubric::for_chapter(workbook, chapter, None) {
        Ok(rubric) => rubric,
        Err(error) => {
            findings.fail(format!("{}: {error:#}", chapter.id));
            return Ok(());
        }
    };
    verify_structure(workbook, chapter, &rubric, findings)?;

    let exercise = grade_chapter(workbook, chapter, &TargetArgs::default(), false)?;
    verify_exercise_fails(chapter, &exercise, findings);

    let solution = grade_chapter(
        workbook,
        chapter,
        &TargetArgs {
            solution: true,
            ..TargetArgs::default()
        },
        false,
    )?;
    verify_solution_passes(workbook, chapter, &rubric, &solution, findings)?;

    if rubric.learner_tests.is_some() {
        // The mutants are the checks: the solution's reference suite must kill every one, which
        // the solution's passing report has just shown.
        findings.expect(
            rubric.checks.iter().any(|c| c.id.starts_with("kills.")),
            format!(
                "{}: the reference suite is graded against mutants",
                chapter.id
            ),
        );
    } else if with_mutants {
        verify_mutants(workbook, chapter, &rubric, findings)?;
    }
    Ok(())
}

fn verify_structure(
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
        let shown = grading::display_path(workbook, &dir);
        match CrateManifest::read(&dir).and_then(|m| m.package_name()) {
            Ok(name) => findings.expect(
                name == expected,
                format!("{id}: {shown} is the package `{expected}`"),
            ),
            Err(error) => findings.fail(format!("{id}: {shown}: {error:#}")),
        }
    }
    let page = workbook.page(chapter);
    findings.expect(
        page.is_file(),
        format!(
            "{id}: the book page {} exists",
            grading::display_path(workbook, &page)
        ),
    );
    for check in &rubric.checks {
        if let Some(section) = &check.section {
            findings.expect(
                grading::page_has_section(&page, section),
                format!(
                    "{id}: {} points to §{section}, a heading of the page",
                    check.id
                ),
            );
        }
    }
    for given in &rubric.given {
        let exercise = read_text_lf(&workbook.exercise_dir(chapter).join(given));
        let solution = read_text_lf(&workbook.solution_dir(chapter).join(given));
        let same = matches!((&exercise, &solution), (Ok(a), Ok(b)) if a == b);
        findings.expect(
            same,
            format!("{id}: the given file {given} is identical in exercise and solution"),
        );
    }
    findings.expect(!rubric.hints.is_empty(), format!("{id}: has hints"));
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    let headings: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("## "))
        .map(str::to_lowercase)
        .collect();
    let missing: Vec<&str> = PAGE_SECTIONS
        .iter()
        .copied()
        .filter(|section| !headings.iter().any(|heading| heading.contains(section)))
        .collect();
    findings.expect(
        missing.is_empty(),
        format!(
            "{id}: the page has the standard sections ({}){}",
            PAGE_SECTIONS.join(", "),
            stray_list(&missing.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        ),
    );
    let solution_include = format!("{{{{#include ../../solutions/{}/", chapter.stem());
    findings.expect(
        text.contains(&solution_include),
        format!("{id}: the page includes its worked example from the solution crate"),
    );
    let learner_file = workbook.exercise_dir(chapter).join(rubric.learner_file());
    let shipped = std::fs::read_to_string(&learner_file).unwrap_or_default();
    if rubric.learner_tests.is_some() {
        let has_tests = shipped
            .lines()
            .map(str::trim_start)
            .any(|line| line.starts_with("#[test]") || line.starts_with("#[tokio::test"));
        findings.expect(
            !has_tests,
            format!(
                "{id}: the exercise's {} ships with no tests",
                rubric.learner_file()
            ),
        );
    } else {
        findings.expect(
            shipped.contains("todo!("),
            format!("{id}: the exercise has todo!()s to replace"),
        );
    }
    let solution_sources = rust_files(&workbook.solution_dir(chapter).join("src"))?;
    let unfinished = solution_sources.iter().any(|file| {
        std::fs::read_to_string(file)
            .is_ok_and(|text| text.contains("todo!(") || text.contains("unimplemented!("))
    });
    findings.expect(
        !unfinished,
        format!("{id}: the solution has no todo!() or unimplemented!()"),
    );
    Ok(())
}

fn verify_exercise_fails(chapter: &Chapter, report: &Report, findings: &mut Findings) {
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
    findings.expect(
        passing.is_empty(),
        if passing.is_empty() {
            format!(
                "{id}: the untouched exercise fails all {} hidden checks",
                report.hidden().count()
            )
        } else {
            format!(
                "{id}: checks that pass on the untouched exercise cannot fail: {}",
                passing.join(", ")
            )
        },
    );
}

fn verify_solution_passes(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    report: &Report,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    if let Some(failure) = &report.compile_failure {
        let first = failure
            .errors
            .first()
            .map_or(failure.cargo_output.clone(), |e| e.rendered.clone());
        findings.fail(format!(
            "{id}: the solution does not compile with its checks:\n{first}"
        ));
        return Ok(());
    }
    for result in &report.results {
        if !result.outcome.passed() {
            findings.fail(format!(
                "{id}: the solution fails {}: {}",
                result.id,
                explain(&result.outcome)
            ));
        }
    }
    let all_pass = report.passed;
    findings.expect(
        all_pass,
        format!(
            "{id}: the solution passes all {} checks and {} visible tests (checks ran in {} ms)",
            report.hidden().count(),
            report.visible().count(),
            report.run_ms
        ),
    );
    if rubric.learner_tests.is_some() {
        return Ok(());
    }
    // Every test in the check files must be in the rubric, or it would never be graded.
    let solution = TargetArgs {
        solution: true,
        ..TargetArgs::default()
    };
    let graded = crate::commands::check::graded_crate(workbook, chapter, &solution)?;
    let harness_dir = harness::prepare(workbook, chapter, rubric, &graded)?;
    if let Ok(built) = harness::build(workbook, &harness_dir, &graded, false)? {
        let listed: Vec<String> = rubric.checks.iter().map(|c| c.test_name()).collect();
        let strays: Vec<String> = crate::runner::list_tests(&built.test_binary)?
            .into_iter()
            .filter(|name| !name.starts_with(harness::VISIBLE_MODULE) && !listed.contains(name))
            .collect();
        findings.expect(
            strays.is_empty(),
            format!(
                "{id}: every test in the check files is in the rubric{}",
                stray_list(&strays)
            ),
        );
    }
    Ok(())
}

fn stray_list(strays: &[String]) -> String {
    if strays.is_empty() {
        String::new()
    } else {
        format!(" (missing: {})", strays.join(", "))
    }
}

fn verify_mutants(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let all = match mutants::load_all(&workbook.mutants_dir(chapter)) {
        Ok(all) => all,
        Err(error) => {
            findings.fail(format!("{id}: {error:#}"));
            return Ok(());
        }
    };
    findings.expect(!all.is_empty(), format!("{id}: has mutants"));
    for mutant in &all {
        if !rubric
            .checks
            .iter()
            .any(|check| check.id == mutant.rejected_by)
        {
            findings.fail(format!(
                "{id}: mutant {} names `{}`, which is not a check of the rubric",
                mutant.name, mutant.rejected_by
            ));
            continue;
        }
        let target = TargetArgs {
            mutant: Some(mutant.name.clone()),
            ..TargetArgs::default()
        };
        let report = match grade_chapter(workbook, chapter, &target, false) {
            Ok(report) => report,
            Err(error) => {
                findings.fail(format!("{id}: mutant {}: {error:#}", mutant.name));
                continue;
            }
        };
        if !report.compiled {
            let first = report
                .compile_failure
                .as_ref()
                .and_then(|f| f.errors.first())
                .map_or(String::new(), |e| e.rendered.clone());
            findings.fail(format!(
                "{id}: mutant {} does not compile (a mutant must be wrong, not broken):\n{first}",
                mutant.name
            ));
            continue;
        }
        let rejected = report
            .result(&mutant.rejected_by)
            .is_some_and(|r| !r.outcome.passed());
        let also: Vec<&str> = report
            .hidden()
            .filter(|r| !r.outcome.passed() && r.id != mutant.rejected_by)
            .map(|r| r.id.as_str())
            .collect();
        let also = if also.is_empty() {
            String::new()
        } else {
            format!("; also caught by {}", also.join(", "))
        };
        if rejected {
            findings.ok(format!(
                "{id}: mutant {} is rejected by {}{also}",
                mutant.name, mutant.rejected_by
            ));
        } else {
            findings.fail(format!(
                "{id}: mutant {} survives {} ({}){also}",
                mutant.name, mutant.rejected_by, mutant.description
            ));
        }
    }
    Ok(())
}

/// clippy -D warnings and rustfmt on the solutions (and the workbook's own crates).
fn lint_solutions(
    workbook: &Workbook,
    chapters: &[&Chapter],
    findings: &mut Findings,
) -> Result<()> {
    let mut packages: Vec<String> = chapters.iter().map(|c| c.solution_crate_name()).collect();
    packages.extend(["xtask", "workbook-figures"].map(str::to_owned));
    let mut clippy = Command::new(harness::cargo());
    clippy.arg("clippy").arg("--quiet").arg("--all-targets");
    let mut fmt = Command::new(harness::cargo());
    fmt.arg("fmt").arg("--check");
    for package in &packages {
        clippy.args(["-p", package]);
        fmt.args(["-p", package]);
    }
    // The exercises are shipped code too: formatted, though unfinished.
    for chapter in chapters {
        fmt.args(["-p", &chapter.crate_name()]);
    }
    clippy.args(["--", "-D", "warnings"]);
    let names = packages.join(", ");
    findings.expect(
        quiet_success(&mut clippy, &workbook.root)?,
        format!("clippy -D warnings is clean on {names}"),
    );
    findings.expect(
        quiet_success(&mut fmt, &workbook.root)?,
        format!("rustfmt is clean on {names}"),
    );
    Ok(())
}

/// Runs a command in `dir`, showing its output only when it fails.
pub fn quiet_success(command: &mut Command, dir: &Path) -> Result<bool> {
    let output = command
        .current_dir(dir)
        .output()
        .with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        print!("{}", String::from_utf8_lossy(&output.stdout));
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output.status.success())
}

/// The manifest, the folders and book/src/SUMMARY.md must agree.
fn verify_layout(workbook: &Workbook, findings: &mut Findings) -> Result<()> {
    let summary_path = workbook.root.join("book/src/SUMMARY.md");
    let summary = std::fs::read_to_string(&summary_path).unwrap_or_default();
    findings.expect(!summary.is_empty(), "book/src/SUMMARY.md exists");
    for part in &workbook.parts {
        findings.expect(
            summary.contains(&format!("# {}", part.title)),
            format!("SUMMARY.md has the part \"{}\"", part.title),
        );
    }
    for chapter in workbook.chapters() {
        let entry = if chapter.ready {
            format!("[{}]({}.md)", chapter.title, chapter.stem())
        } else {
            format!("[{}]()", chapter.title)
        };
        let kind = if chapter.ready {
            "a page"
        } else {
            "a draft entry"
        };
        findings.expect(
            summary.contains(&entry),
            format!("SUMMARY.md lists {} as {kind}: {entry}", chapter.id),
        );
        let folders = [
            workbook.exercise_dir(chapter),
            workbook.solution_dir(chapter),
            workbook.checks_dir(chapter),
        ];
        if !chapter.ready {
            let stray: Vec<String> = folders
                .iter()
                .filter(|dir| dir.exists())
                .map(|dir| grading::display_path(workbook, dir))
                .collect();
            findings.expect(
                stray.is_empty(),
                format!(
                    "{}: a draft chapter has no folders yet{}",
                    chapter.id,
                    stray_list(&stray)
                ),
            );
        }
    }
    for folder in ["exercises", "solutions", "xtask/checks", "xtask/mutants"] {
        let dir = workbook.root.join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.path().is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let known = workbook
                .chapters()
                .any(|c| name == c.stem() || name == c.id);
            findings.expect(
                known,
                format!("{folder}/{name} belongs to a chapter of the manifest"),
            );
        }
    }
    let _ = term::color_enabled();
    Ok(())
}
