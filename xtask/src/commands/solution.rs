//! `cargo xtask solution <chapter>`: show the reference solution once you have passed.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::curriculum::shown_answers;
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::lang::words::{Key, tf};
use crate::progress::Progress;

/// Show the reference solution of a chapter you have passed (or any, with --force): the files you
/// write in it.
#[derive(Debug, Args)]
pub struct SolutionArgs {
    /// The chapter, e.g. ch08.
    pub chapter: String,
    /// Show it even though the chapter does not pass yet.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: SolutionArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    if !args.force && !Progress::load(&workbook).passed(&chapter.id) {
        bail!("{}", tf(Key::NotPassedYet, &[&chapter.id]));
    }
    let rubric = Rubric::for_chapter(&workbook, chapter, None)?;
    let solution_dir = workbook.solution_dir(chapter);
    for file in learner_files(&workbook, chapter, &rubric)? {
        let path = solution_dir.join(&file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        println!("// {}\n", display_path(&workbook, &path));
        println!("{}\n", strip_anchors(&text));
    }
    println!(
        "{}",
        tf(Key::WholeCrate, &[&display_path(&workbook, &solution_dir)])
    );
    Ok(ExitCode::SUCCESS)
}

/// The solution's files that the learner writes: each Rust file that differs from the
/// exercise's (or that the exercise lacks), given files left out; the rubric's learner file first.
fn learner_files(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric) -> Result<Vec<String>> {
    let exercise = shown_answers::rust_sources(&workbook.exercise_dir(chapter))?;
    let solution = shown_answers::rust_sources(&workbook.solution_dir(chapter))?;
    let mut files: Vec<String> = solution
        .into_iter()
        .filter(|(file, text)| !rubric.given.contains(file) && exercise.get(file) != Some(text))
        .map(|(file, _)| file)
        .collect();
    files.sort_by_key(|file| file != rubric.learner_file());
    Ok(files)
}

/// The solution without the book's `// ANCHOR` markers.
fn strip_anchors(text: &str) -> String {
    text.lines()
        .filter(|line| {
            let line = line.trim_start();
            !line.starts_with("// ANCHOR:") && !line.starts_with("// ANCHOR_END:")
        })
        .collect::<Vec<_>>()
        .join("\n")
}
