//! `cargo xtask hint <chapter>`: the next hint, one more each time.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::curriculum::translation;
use crate::curriculum::workbook::{Rubric, Workbook};
use crate::lang;
use crate::lang::words::{Key, t, tf};
use crate::progress::Progress;
use crate::report::book_lang::learner_page;

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
            .context(t(Key::NoHintsNeeded))?,
    };
    let mut rubric = Rubric::load(&workbook.checks_dir(chapter))?;
    translation::apply(&mut rubric, lang::current());
    let total = rubric.hints.len();
    if total == 0 {
        println!(
            "{}",
            tf(
                Key::NoHints,
                &[&chapter.id, &learner_page(workbook, chapter)]
            )
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
            "{}\n  {hint}\n",
            tf(Key::HintOf, &[&(index + 1), &total, &chapter.id])
        );
    }
    if seen == total {
        println!(
            "{}",
            tf(
                Key::LastHint,
                &[&learner_page(workbook, chapter), &chapter.id]
            )
        );
    } else {
        println!("{}", tf(Key::NextHint, &[&chapter.id]));
    }
    progress.save(workbook)?;
    Ok(ExitCode::SUCCESS)
}
