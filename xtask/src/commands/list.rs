//! `cargo xtask list`: every chapter and how far you are.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::progress::Progress;
use crate::term::{self, Style};
use crate::workbook::Workbook;

/// List the chapters with your progress.
#[derive(Debug, Args)]
pub struct ListArgs {}

pub fn run(_args: ListArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    print!(
        "{}",
        render(
            &workbook,
            &Progress::load(&workbook),
            Style {
                color: term::color_enabled()
            }
        )
    );
    Ok(ExitCode::SUCCESS)
}

/// The chapter list as text; the `watch` command shows it too.
pub fn render(workbook: &Workbook, progress: &Progress, style: Style) -> String {
    let next = progress.next_chapter(workbook).map(|c| c.id.clone());
    let mut out = String::new();
    for part in &workbook.parts {
        out.push_str(&format!("{}\n", style.bold(&part.title)));
        for chapter in &part.chapters {
            let entry = progress.chapters.get(&chapter.id);
            let status = if !chapter.ready {
                style.dim("(not written yet)")
            } else if entry.is_some_and(|e| e.passed) {
                style.green("✓ done")
            } else if let Some(entry) = entry.filter(|e| e.max_score > 0) {
                format!("{}/{} points", entry.best_score, entry.max_score)
            } else {
                "not started".to_owned()
            };
            let marker = if next.as_deref() == Some(chapter.id.as_str()) {
                "→"
            } else {
                " "
            };
            out.push_str(&format!(
                "  {marker} {}  {:<58} {status}\n",
                chapter.id, chapter.title
            ));
        }
    }
    if let Some(next) = next {
        out.push_str(&format!("\nNext: `cargo xtask check {next}`.\n"));
    }
    out
}
