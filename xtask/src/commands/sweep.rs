//! `cargo xtask sweep <chapter>`: grade small wrong versions of the solution and list those that
//! pass every check.
//!
//! Each line the learner writes in the reference solution is changed in one small way at a time
//! (`line_changes`): a comparison loosened, an operator flipped, a constant moved by one, a
//! condition fixed, a statement dropped. Each changed copy is graded like a mutant. A change that
//! passes every check is either equivalent to the solution (it changes nothing a caller can
//! see) or a wrong solution the checks cannot tell from a right one: a gap to close with a check
//! written from the page's rule, and a mutant that proves it.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::grade::grader::{Grader, Target};

use crate::report::model::Report;

use crate::build::compile::{clear_status, show_status};
use crate::build::crate_copy;
use crate::build::crate_copy::CrateCopy;
use crate::curriculum::line_changes::{LineChange, changes_of_line};
use crate::curriculum::shown_answers;
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook};

/// Grade one-line changes of a chapter's solution and list those every check passes (authors).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The chapter, e.g. ch08.
    pub chapter: String,
    /// Grade at most this many changes, in the order of the solution's lines.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// One change to grade: where, in which function, and the file's text with it.
struct Candidate {
    file: String,
    function: String,
    change: LineChange,
    before: String,
    text: String,
}

pub fn run(args: SweepArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    let rubric = Rubric::for_chapter(&workbook, chapter, None)?;
    if rubric.learner_tests.is_some() {
        bail!(
            "{} grades the learner's own tests against mutants; a sweep changes a solution \
             graded by hidden checks",
            chapter.id
        );
    }
    let mut candidates = candidates(&workbook, chapter, &rubric)?;
    if let Some(limit) = args.limit {
        candidates.truncate(limit);
    }
    let copy = workbook.work_dir().join("sweep").join(&chapter.id);
    let package = format!("{}_sweep", chapter.crate_name());
    let grader = Grader::new(&workbook);
    let grade = |replaced: &[(String, String)]| -> Result<Report> {
        crate_copy::write_crate_copy(
            &workbook.solution_dir(chapter),
            &copy,
            &CrateCopy {
                package: &package,
                replaced,
                ..CrateCopy::default()
            },
        )?;
        grader.grade(chapter, &Target::Path(copy.clone()))
    };
    let unchanged = grade(&[])?;
    if !unchanged.passed {
        bail!(
            "the solution of {} does not pass its own checks; run `cargo xtask check {} --solution`",
            chapter.id,
            chapter.id
        );
    }
    println!(
        "sweep {}: {} one-line changes of the solution's learner code, each graded by every check",
        chapter.id,
        candidates.len()
    );
    let live = std::io::stderr().is_terminal();
    let (mut rejected, mut uncompiled, mut passing) = (0, 0, Vec::new());
    for (n, candidate) in candidates.iter().enumerate() {
        if live {
            show_status(&format!(
                "sweep {}: {} of {} graded, {} passed every check",
                chapter.id,
                n,
                candidates.len(),
                passing.len()
            ));
        }
        let report = grade(&[(candidate.file.clone(), candidate.text.clone())])
            .with_context(|| format!("grading a change of {}", candidate.file))?;
        match (report.compiled, report.passed) {
            (false, _) => uncompiled += 1,
            (true, false) => rejected += 1,
            (true, true) => {
                if live {
                    clear_status();
                }
                print_passing(&workbook, chapter, candidate);
                passing.push(candidate);
            }
        }
    }
    if live {
        clear_status();
    }
    // Leave the copy as the solution, so the next sweep starts from a build that passes.
    grade(&[])?;
    println!(
        "\n{} changes: {rejected} rejected by a check, {uncompiled} did not compile, {} passed \
         every check{}",
        candidates.len(),
        passing.len(),
        if passing.is_empty() {
            "."
        } else {
            " (listed above): each is equivalent to the solution, or a gap in the checks"
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Every change of every line inside a function the learner writes, in file and line order.
fn candidates(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric) -> Result<Vec<Candidate>> {
    let exercise = shown_answers::rust_sources(&workbook.exercise_dir(chapter))?;
    let solution = shown_answers::rust_sources(&workbook.solution_dir(chapter))?;
    let mut lines_of: BTreeMap<String, Vec<(usize, usize, String)>> = BTreeMap::new();
    for (file, function) in shown_answers::learner_functions(&exercise, &solution, &rubric.given) {
        let (Some(first), Some(last)) = (function.body.first(), function.body.last()) else {
            continue;
        };
        lines_of
            .entry(file)
            .or_default()
            .push((first.line, last.line, function.name));
    }
    let mut out = Vec::new();
    for (file, functions) in lines_of {
        let text = &solution[&file];
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            // Token lines count from 1.
            let Some((_, _, function)) = functions
                .iter()
                .find(|(first, last, _)| (*first..=*last).contains(&(index + 1)))
            else {
                continue;
            };
            for change in changes_of_line(index, line) {
                let mut changed: Vec<&str> = lines.clone();
                // A dropped statement leaves its line blank: the lines below keep their
                // places, and rustc's incremental cache its work on them.
                changed[index] = change.after.as_deref().unwrap_or("");
                out.push(Candidate {
                    file: file.clone(),
                    function: function.clone(),
                    before: line.to_string(),
                    text: changed.join("\n") + "\n",
                    change,
                });
            }
        }
    }
    Ok(out)
}

fn print_passing(workbook: &Workbook, chapter: &Chapter, candidate: &Candidate) {
    let path = workbook.solution_dir(chapter).join(&candidate.file);
    println!(
        "passed every check: {}:{} in {} ({})\n  - {}\n  + {}",
        display_path(workbook, &path),
        candidate.change.index + 1,
        candidate.function,
        candidate.change.what,
        candidate.before.trim(),
        candidate
            .change
            .after
            .as_deref()
            .map_or("(line dropped)", str::trim),
    );
}
