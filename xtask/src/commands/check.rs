//! `cargo xtask check [chapter]`: grade a chapter and print the table.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::grading::{self, Report, Request};
use crate::harness::Graded;
use crate::mutants;
use crate::progress::Progress;
use crate::report;
use crate::term::{self, Style};
use crate::workbook::{Chapter, Rubric, Workbook};

/// Which crate to grade and with which checks.
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Grade the reference solution instead of your exercise.
    #[arg(long, conflicts_with_all = ["path", "mutant"])]
    pub solution: bool,
    /// Grade the crate in DIR (any folder with the chapter's public API).
    #[arg(long, value_name = "DIR", conflicts_with = "mutant")]
    pub path: Option<PathBuf>,
    /// Grade one of the chapter's mutants (a known-wrong solution), by file name.
    #[arg(long, value_name = "NAME")]
    pub mutant: Option<String>,
    /// Use private checks: DIR/<chapter>/chapter.toml and its check files replace the public ones.
    #[arg(long, value_name = "DIR")]
    pub checks_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    #[default]
    Text,
    /// JSON for tools (schema retry-workbook/check-report/v1).
    Json,
}

/// Grade a chapter: compile your exercise with the hidden checks and run them.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The chapter, e.g. ch08 (default: the first chapter you have not passed yet).
    pub chapter: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let progress = Progress::load(&workbook);
    let chapter = match &args.chapter {
        Some(id) => workbook.ready_chapter(id)?,
        None => match progress.next_chapter(&workbook) {
            Some(chapter) => chapter,
            None => {
                println!("Every chapter passes. `cargo xtask list` shows them all.");
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let style = Style {
        color: args.format == Format::Text && term::color_enabled(),
    };
    let report = grade_chapter(&workbook, chapter, &args.target, style.color)?;
    match args.format {
        Format::Text => {
            print!("{}", report::render_text(&report, style));
            print!(
                "{}",
                next_steps(&workbook, chapter, &args.target, &report, style)
            );
        }
        Format::Json => println!("{}", report::render_json(&report)),
    }
    if is_learner_exercise(&args.target) {
        record(&workbook, chapter, &report)?;
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// True when the learner's own exercise is graded (the only case that records progress).
pub fn is_learner_exercise(target: &TargetArgs) -> bool {
    !target.solution && target.path.is_none() && target.mutant.is_none()
}

/// Grades `chapter` on the crate `target` names.
pub fn grade_chapter(
    workbook: &Workbook,
    chapter: &Chapter,
    target: &TargetArgs,
    color: bool,
) -> Result<Report> {
    let rubric = Rubric::for_chapter(workbook, chapter, target.checks_dir.as_deref())
        .with_context(|| format!("loading the checks of {}", chapter.id))?;
    // A mutant's crate is one folder per chapter, rewritten for each mutant: one grading at a time.
    let _lock = match &target.mutant {
        Some(_) => Some(crate::manifest_toml::FolderLock::acquire(
            &workbook.work_dir().join("mutants").join(&chapter.id),
        )?),
        None => None,
    };
    let graded = graded_crate(workbook, chapter, target)?;
    grading::grade(&Request {
        workbook,
        chapter,
        rubric: &rubric,
        graded: &graded,
        color,
        visible_tests: true,
    })
}

/// The crate `target` names.
pub fn graded_crate(workbook: &Workbook, chapter: &Chapter, target: &TargetArgs) -> Result<Graded> {
    if target.solution {
        let solution = workbook.solution_dir(chapter);
        return Ok(
            Graded::at(&solution, "the solution".to_owned(), "solution")?
                .with_visible_tests_of(&workbook.exercise_dir(chapter)),
        );
    }
    if let Some(dir) = &target.path {
        return Graded::at(dir, format!("the crate in {}", dir.display()), "path");
    }
    if let Some(name) = &target.mutant {
        let file = workbook
            .mutants_dir(chapter)
            .join(format!("{}.toml", name.trim_end_matches(".toml")));
        if !file.is_file() {
            let known: Vec<String> = mutants::load_all(&workbook.mutants_dir(chapter))?
                .into_iter()
                .map(|m| m.name)
                .collect();
            bail!(
                "{} has no mutant `{name}`; it has: {}",
                chapter.id,
                known.join(", ")
            );
        }
        let mutant = mutants::load(&file)?;
        let dir = mutants::materialize(workbook, chapter, &mutant)?;
        return Ok(
            Graded::at(&dir, format!("mutant {}", mutant.name), "mutant")?
                .with_visible_tests_of(&workbook.exercise_dir(chapter)),
        );
    }
    Graded::at(
        &workbook.exercise_dir(chapter),
        "your exercise".to_owned(),
        "exercise",
    )
}

/// Saves the learner's result.
pub fn record(workbook: &Workbook, chapter: &Chapter, report: &Report) -> Result<()> {
    let mut progress = Progress::load(workbook);
    let entry = progress.chapter(&chapter.id);
    entry.passed |= report.passed;
    entry.best_score = entry.best_score.max(report.score);
    entry.max_score = report.max_score;
    progress.save(workbook)
}

/// What to do after this report.
fn next_steps(
    workbook: &Workbook,
    chapter: &Chapter,
    target: &TargetArgs,
    report: &Report,
    style: Style,
) -> String {
    if !is_learner_exercise(target) {
        return String::new();
    }
    if report.passed {
        let next = workbook
            .ready_chapters()
            .skip_while(|c| c.id != chapter.id)
            .nth(1);
        let mut text = format!(
            "\n{} Compare with the reference: `cargo xtask solution {}`.\n",
            style.green(&format!("{} is done.", chapter.id)),
            chapter.id
        );
        if let Some(next) = next {
            text.push_str(&format!(
                "Next: {} — read {} and run `cargo xtask check {}`.\n",
                next,
                grading::display_path(workbook, &workbook.page(next)),
                next.id
            ));
        }
        return text;
    }
    let mut text = String::from("\n");
    if let Some(place) = &report.start_here {
        text.push_str(&format!("{} {place}\n", style.bold("Start here:")));
    }
    text.push_str(&format!(
        "Read {} (`cargo xtask book --open`), edit {}, and run `cargo xtask check {}` again \
         (or `cargo xtask watch {}` to re-check on every save). Stuck? `cargo xtask hint {}`.\n",
        grading::display_path(workbook, &workbook.page(chapter)),
        grading::display_path(
            workbook,
            &workbook
                .exercise_dir(chapter)
                .join(learner_file(workbook, chapter, target)),
        ),
        chapter.id,
        chapter.id,
        chapter.id,
    ));
    text
}

/// The file the learner works in for `chapter` under `target`'s rubric.
fn learner_file(workbook: &Workbook, chapter: &Chapter, target: &TargetArgs) -> String {
    Rubric::for_chapter(workbook, chapter, target.checks_dir.as_deref()).map_or_else(
        |_| "src/lib.rs".to_owned(),
        |rubric| rubric.learner_file().to_owned(),
    )
}
