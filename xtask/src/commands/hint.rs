//! `cargo xtask hint <chapter>`: the next hint, one more each time.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Rubric, Workbook};
use crate::progress::Progress;

/// Show the next hint for a chapter (each call reveals one more).
#[derive(Debug, Args)]
pub struct HintArgs {
    /// The chapter, e.g. ch08 (default: the first chapter you have not passed yet).
    pub chapter: Option<String>,
    /// Show the hints seen so far again, without revealing a new one.
    #[arg(long)]
    pub again: bool,
}

pub fn run(args: HintArgs) -> Result<ExitCode> {
    reveal(&Workbook::load()?, args.chapter.as_deref(), args.again)
}

/// Shows the hints of `wanted` (or of the first chapter not passed yet) seen so far, plus the
/// next one unless `again`; `watch` calls it for its `h` key.
pub fn reveal(workbook: &Workbook, wanted: Option<&str>, again: bool) -> Result<ExitCode> {
    let mut progress = Progress::load(workbook);
    let chapter = match wanted {
        Some(id) => workbook.ready_chapter(id)?,
        None => progress
            .next_chapter(workbook)
            .context("every chapter passes: no hints needed")?,
    };
    let rubric = Rubric::load(&workbook.checks_dir(chapter))?;
    let total = rubric.hints.len();
    if total == 0 {
        println!(
            "{} has no hints. The book page is {}.",
            chapter.id,
            display_path(workbook, &workbook.page(chapter))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let entry = progress.chapter(&chapter.id);
    let seen = if again {
        entry.hints_seen.clamp(1, total)
    } else {
        (entry.hints_seen + 1).min(total)
    };
    entry.hints_seen = seen;
    for (index, hint) in rubric.hints.iter().enumerate().take(seen) {
        println!(
            "Hint {} of {total} for {}:\n  {hint}\n",
            index + 1,
            chapter.id
        );
    }
    if seen == total {
        println!(
            "That was the last hint. The book explains every check: {}. \
             As a last resort, `cargo xtask solution {} --force` shows the reference solution.",
            display_path(workbook, &workbook.page(chapter)),
            chapter.id
        );
    } else {
        println!(
            "Run `cargo xtask hint {}` again for the next hint.",
            chapter.id
        );
    }
    progress.save(workbook)?;
    Ok(ExitCode::SUCCESS)
}
