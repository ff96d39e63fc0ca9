//! `cargo xtask figures`: regenerate every figure of the book from the solution crates, in
//! English (`book/src/figures/`) and with Japanese words (`book/src/figures/ja/`, which the
//! Japanese edition shows).

use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::Args;

use crate::curriculum::workbook::Workbook;

/// Where the book's generated figures live (each translation's in a folder named for its language).
pub const FIGURES_DIR: &str = "book/src/figures";

/// Regenerate the book's SVG figures (or, with --check, fail if any is stale).
#[derive(Debug, Args)]
pub struct FiguresArgs {
    /// Write nothing; exit non-zero if a committed figure differs from what the code draws.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: FiguresArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    Ok(if figures(&workbook, args.check)? {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs the figure generator; true when it succeeded (and, with `check`, nothing was stale).
pub fn figures(workbook: &Workbook, check: bool) -> Result<bool> {
    let mut command = Command::new(crate::util::cargo());
    command
        .args(["run", "--quiet", "--package", "workbook-figures", "--"])
        .current_dir(&workbook.root);
    if check {
        command.arg("--check");
    }
    let status = command
        .arg(workbook.root.join(FIGURES_DIR))
        .status()
        .context("running the figure generator")?;
    Ok(status.success())
}
