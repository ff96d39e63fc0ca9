//! `cargo xtask solution <chapter>`: show the reference solution once you have passed.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::grading::display_path;
use crate::progress::Progress;
use crate::workbook::Workbook;

/// Show the reference solution of a chapter you have passed (or any, with --force).
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
        bail!(
            "{} does not pass yet: try `cargo xtask hint {}` first, or add --force to see the solution anyway",
            chapter.id,
            chapter.id
        );
    }
    let lib = workbook.solution_dir(chapter).join("src/lib.rs");
    let text =
        std::fs::read_to_string(&lib).with_context(|| format!("reading {}", lib.display()))?;
    println!("// {}\n", display_path(&workbook, &lib));
    println!("{}", strip_anchors(&text));
    println!(
        "// The whole crate: {}",
        display_path(&workbook, &workbook.solution_dir(chapter))
    );
    Ok(ExitCode::SUCCESS)
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
