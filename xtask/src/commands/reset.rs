//! `cargo xtask reset <chapter>`: put an exercise back as shipped, after backing it up. What was
//! shipped comes from the record in `xtask/shipped/`, never from the learner's last commit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use clap::Args;

use crate::grading::display_path;
use crate::shipped::{self, Shipped};
use crate::workbook::Workbook;

/// Restore an exercise to its shipped state (your files are backed up first).
#[derive(Debug, Args)]
pub struct ResetArgs {
    /// The chapter, e.g. ch08.
    pub chapter: String,
}

pub fn run(args: ResetArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    let exercise = workbook.exercise_dir(chapter);
    let shipped = Shipped::load(&workbook, chapter)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let backup = workbook
        .root
        .join(".workbook/backups")
        .join(format!("{}-{stamp}", chapter.stem()));
    copy_tree(&exercise, &backup)?;
    println!(
        "Backed up your files to {}",
        display_path(&workbook, &backup)
    );
    let restored = shipped::restore(&workbook.root, &exercise, &shipped)?;
    let relative = display_path(&workbook, &exercise);
    for file in &restored.rewritten {
        println!("  restored {relative}/{file}");
    }
    for file in &restored.removed {
        println!("  removed  {relative}/{file}");
    }
    println!(
        "Reset {relative} to the shipped exercise (as recorded in {}).",
        display_path(&workbook, &Shipped::path(&workbook, chapter))
    );
    Ok(ExitCode::SUCCESS)
}

/// Copies `from` into `to`, skipping build output.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let entry = entry?;
        let path = entry.path();
        let target: PathBuf = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&path, &target)?;
            }
        } else {
            std::fs::copy(&path, &target).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}
