//! `cargo xtask check [chapter]`: grade a chapter and print the table.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use crate::build::compile::BuildOptions;
use crate::commands::reset;
use crate::curriculum::shipped::{Departure, Shipped};
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::grade::grader::{Grader, Target};
use crate::lang::words::{Key, t, tf};
use crate::progress::Progress;
use crate::report::book_lang::learner_page;
use crate::report::model::Report;
use crate::report::text::{self, Layout};
use crate::term::{self, Style};

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
    /// Show every check and every failure in full (by default the first few failures are shown
    /// in full and the rest one line each).
    #[arg(long, short)]
    pub verbose: bool,
}

impl TargetArgs {
    /// The crate these arguments name.
    pub fn target(&self) -> Target {
        if self.solution {
            Target::Solution
        } else if let Some(dir) = &self.path {
            Target::Path(dir.clone())
        } else if let Some(name) = &self.mutant {
            Target::Mutant(name.clone())
        } else {
            Target::Exercise
        }
    }
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let progress = Progress::load(&workbook);
    let chapter = match &args.chapter {
        Some(id) => workbook.ready_chapter(id)?,
        None => match progress.next_chapter(&workbook) {
            Some(chapter) => chapter,
            None => {
                println!("{}", t(Key::EveryChapterPasses));
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let style = match args.format {
        Format::Text => Style::for_stdout(),
        Format::Json => Style::PLAIN,
    };
    let target = args.target.target();
    let exercise = (target == Target::Exercise).then_some(chapter);
    reset::warn_of_broken_manifests(&workbook, exercise);
    if let Some(broken) = exercise.and_then(|chapter| reset::broken_manifest(&workbook, chapter)) {
        bail!("{}", tf(Key::CannotBeGraded, &[&chapter.id, &broken]));
    }
    let grader = Grader {
        checks_dir: args.target.checks_dir.clone(),
        build: BuildOptions {
            color: style.color,
            // On stderr: a live line on a terminal, plain lines elsewhere.
            show_progress: args.format == Format::Text,
            ..BuildOptions::default()
        },
        ..Grader::new(&workbook)
    };
    let mut report = grader.grade(chapter, &target)?;
    crate::report::book_lang::localize(&workbook, &mut report);
    crate::timings::phase("graded");
    // Saved before anything is printed: a reader that stops early (`| head`) loses no progress,
    // and a save that fails does not hide the report.
    if target == Target::Exercise
        && let Err(error) = Progress::record(&workbook, chapter, &report)
    {
        eprintln!("{}", tf(Key::ProgressNotSaved, &[&format!("{error:#}")]));
    }
    match args.format {
        Format::Text => {
            if target == Target::Exercise {
                term::print(departures(&grader, chapter, style));
            }
            let layout = if args.verbose {
                Layout::Verbose
            } else {
                Layout::Brief
            };
            term::print(text::render(&report, style, layout));
            term::print(next_steps(&grader, chapter, &target, &report, style));
        }
        Format::Json => println!("{}", text::render_json(&report)),
    }
    crate::timings::phase("progress saved, report printed");
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The files of the learner's exercise that are not as shipped, each with the command that
/// restores it: a missing file is what the compiler's errors are about, and a given file or a
/// manifest changed by accident is hard to see in them. Empty when every file is as it should be.
pub fn departures(grader: &Grader, chapter: &Chapter, style: Style) -> String {
    let workbook = grader.workbook;
    let (Ok(shipped), Ok(rubric)) = (Shipped::load(workbook, chapter), grader.rubric(chapter))
    else {
        return String::new();
    };
    let dir = workbook.exercise_dir(chapter);
    let departures = shipped.departures(&dir, &rubric);
    if departures.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "{}\n",
        style.yellow(&tf(Key::NotAsShipped, &[&display_path(workbook, &dir)]))
    );
    for (file, departure) in departures {
        let what = match departure {
            Departure::Missing => t(Key::FileIsMissing),
            Departure::Changed if rubric.given.contains(&file) => t(Key::GivenFileChanged),
            Departure::Changed => t(Key::FileChanged),
        };
        text.push_str(&tf(
            Key::FileDeparture,
            &[&file, &what, &reset::restore_command(chapter, &file)],
        ));
        text.push('\n');
    }
    text.push('\n');
    text
}

/// What to do after this report.
fn next_steps(
    grader: &Grader,
    chapter: &Chapter,
    target: &Target,
    report: &Report,
    style: Style,
) -> String {
    let workbook = grader.workbook;
    if *target != Target::Exercise {
        return String::new();
    }
    if report.passed {
        let next = workbook
            .ready_chapters()
            .skip_while(|c| c.id != chapter.id)
            .nth(1);
        let mut text = format!(
            "\n{} {}\n",
            style.green(&tf(Key::ChapterDone, &[&chapter.id])),
            tf(Key::CompareWithReference, &[&chapter.id])
        );
        if report.skipped > 0 {
            text.push_str(&tf(Key::SkippedEarnedNothing, &[&report.skipped]));
            text.push('\n');
        }
        if let Some(next) = next {
            text.push_str(&tf(
                Key::NextChapter,
                &[&next, &learner_page(workbook, next), &next.id],
            ));
            text.push('\n');
        }
        return text;
    }
    // "Start here" is at the top of the report.
    let mut text = String::from("\n");
    let edit = display_path(
        workbook,
        &workbook
            .exercise_dir(chapter)
            .join(learner_file(grader, chapter)),
    );
    text.push_str(&tf(
        Key::NextSteps,
        &[&learner_page(workbook, chapter), &edit, &chapter.id],
    ));
    text.push('\n');
    text
}

/// The file the learner works in for `chapter` under the grader's rubric.
fn learner_file(grader: &Grader, chapter: &Chapter) -> String {
    grader.rubric(chapter).map_or_else(
        |_| "src/lib.rs".to_owned(),
        |rubric| rubric.learner_file().to_owned(),
    )
}
