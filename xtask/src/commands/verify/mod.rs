//! `cargo xtask verify [chapters…]`: prove that every chapter is sound. The untouched exercise
//! fails every hidden check; the solution passes every check and is clippy- and rustfmt-clean;
//! each mutant is rejected by the check it names; the manifest, the folders and the book agree.

mod audits;
mod chapter;
mod findings;
mod lanes;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use crate::build::compile;
use crate::curriculum::mutants;
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Workbook};
use audits::{lint_solutions, verify_layout};
use chapter::{verify_chapter, verify_shipped_record};
pub use findings::Findings;
use lanes::{Step, default_jobs, run_steps};

/// Prove every chapter (authors and CI): exercises fail, solutions pass, mutants are caught.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only these chapters (default: every ready chapter, plus the book-wide checks).
    pub chapters: Vec<String>,
    /// Skip the mutants (faster while writing a chapter).
    #[arg(long)]
    pub no_mutants: bool,
    /// Only bring the records of the shipped exercises (xtask/shipped/) up to date, after an
    /// exercise changed or a merge; nothing is graded.
    #[arg(long, conflicts_with = "no_mutants")]
    pub shipped_only: bool,
    /// How many chapters to verify at once (default: the number of cores). More hides more of
    /// the time spent waiting on checks' time limits, but a loaded machine makes a slow check
    /// look hung: keep it near the number of cores.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    if args.shipped_only {
        return update_shipped_records(&workbook, &args.chapters);
    }
    verify(
        &workbook,
        &Scope {
            chapters: &args.chapters,
            mutants: !args.no_mutants,
            jobs: args.jobs,
        },
    )
}

/// What a verify covers.
pub struct Scope<'a> {
    /// These chapters only; none means every ready chapter and the book-wide checks.
    pub chapters: &'a [String],
    /// Whether each mutant must be rejected by the checks it names.
    pub mutants: bool,
    /// How many lanes run side by side (default: the number of cores).
    pub jobs: Option<usize>,
}

impl Scope<'_> {
    /// Everything: every chapter with its mutants, and the book (what `ci` runs).
    pub const EVERYTHING: Scope<'static> = Scope {
        chapters: &[],
        mutants: true,
        jobs: None,
    };
}

/// Brings the records of the shipped exercises up to date; nothing is graded.
fn update_shipped_records(workbook: &Workbook, wanted: &[String]) -> Result<ExitCode> {
    let mut findings = Findings::default();
    for chapter in workbook.ready_chapters_or(wanted)? {
        verify_shipped_record(workbook, chapter, &mut findings)?;
    }
    // A rewritten record is a failure until it is committed, as in a full verify.
    println!(
        "verify: {} passed, {} failed",
        findings.passed,
        findings.problems.len()
    );
    Ok(exit_code(&findings))
}

/// Proves the chapters `scope` names sound, lane by lane, and prints what it found.
pub fn verify(workbook: &Workbook, scope: &Scope) -> Result<ExitCode> {
    let started = Instant::now();
    let mut findings = Findings::default();
    let chapters = workbook.ready_chapters_or(scope.chapters)?;
    let steps = plan_steps(workbook, &chapters, scope);
    let jobs = scope.jobs.unwrap_or_else(default_jobs).max(1);
    seed_lanes(workbook, &chapters, jobs)?;
    run_steps(workbook, steps, jobs, &mut findings)?;
    println!(
        "\nverify took {:.1} s ({jobs} at a time; {})",
        started.elapsed().as_secs_f64(),
        findings.graded.summary()
    );
    print_summary(&findings);
    Ok(exit_code(&findings))
}

/// The steps, in the order their findings are shown; they run side by side. Each weighs about
/// what it builds, so the lanes get equal shares.
fn plan_steps<'a>(
    workbook: &Workbook,
    chapters: &[&'a Chapter],
    scope: &Scope,
) -> Vec<(usize, Step<'a>)> {
    let mut steps: Vec<(usize, Step)> = Vec::new();
    if scope.chapters.is_empty() {
        steps.push((BOOK_STEP_WEIGHT, Box::new(verify_workbook)));
    }
    for &chapter in chapters {
        let with_mutants = scope.mutants;
        let weight = 2 + if with_mutants {
            mutants::count(&workbook.mutants_dir(chapter))
        } else {
            0
        };
        steps.push((
            weight,
            Box::new(
                move |workbook: &Workbook, lane: usize, findings: &mut Findings| {
                    let started = Instant::now();
                    verify_chapter(workbook, chapter, with_mutants, lane, findings)?;
                    findings.line(format!(
                        "  ({} took {:.1} s; {})",
                        chapter.id,
                        started.elapsed().as_secs_f64(),
                        findings.graded.summary()
                    ));
                    Ok(())
                },
            ),
        ));
    }
    let linted = chapters.to_vec();
    steps.push((
        LINT_STEP_WEIGHT,
        Box::new(move |workbook: &Workbook, _lane, findings: &mut Findings| {
            findings.line("lint");
            lint_solutions(workbook, &linted, findings)
        }),
    ));
    steps
}

/// The workbook's own step: its layout, its figures and its book.
fn verify_workbook(workbook: &Workbook, _lane: usize, findings: &mut Findings) -> Result<()> {
    findings.line("the workbook");
    verify_layout(workbook, findings)?;
    findings.require(
        crate::commands::figures::figures(workbook, true)?,
        "every figure of the book is up to date (`cargo xtask figures` regenerates them)",
    );
    findings.require(
        crate::commands::book::builds_every_edition(workbook)?,
        "the book builds, every edition (mdbook build book; the translations into book/build/<lang>/)",
    );
    Ok(())
}

/// Seeds each extra lane's target folder: its first build would otherwise compile every
/// dependency again in its own folder.
fn seed_lanes(workbook: &Workbook, chapters: &[&Chapter], jobs: usize) -> Result<()> {
    for lane in 1..jobs {
        let folder = compile::lane_target_dir(workbook, lane);
        let copied = crate::build::target_seed::seed(workbook, chapters.iter().copied(), &folder)?;
        if copied > 0 {
            println!(
                "(lane {lane}: {copied} dependency builds copied from {} to {})",
                display_path(workbook, &workbook.target_dir()),
                display_path(workbook, &folder)
            );
        }
    }
    Ok(())
}

/// What was not proven, every problem, and the closing line: "N passed, N failed" alone after
/// one word.
fn print_summary(findings: &Findings) {
    if !findings.unproven.is_empty() {
        println!(
            "not proven here, because checks were skipped ({}):",
            findings.unproven.len()
        );
        for what in &findings.unproven {
            println!("  ~ {what}");
        }
    }
    for problem in &findings.problems {
        println!("  - {problem}");
    }
    println!(
        "verify: {} passed, {} failed",
        findings.passed,
        findings.problems.len()
    );
}

fn exit_code(findings: &Findings) -> ExitCode {
    if findings.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What the workbook's own step (figures, book) and the lint step weigh, in gradings.
const BOOK_STEP_WEIGHT: usize = 10;
const LINT_STEP_WEIGHT: usize = 10;
