//! `cargo xtask ci`: the project's whole test suite, as CI runs it — the unit and integration
//! tests of every crate, then `verify` over every chapter, the figures and the book, then the
//! built book in headless Chromium.

use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use crate::commands::verify;
use crate::workbook::Workbook;

/// Run every test of the project: cargo test, then verify (chapters, mutants, figures, book).
#[derive(Debug, Args)]
pub struct CiArgs {}

pub fn run(_args: CiArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let started = Instant::now();
    match crate::system::postgres_url()? {
        Some(url) => {
            println!("== PostgreSQL for chapter 18's PostgreSQL track: {url}");
            // SAFETY: still single-threaded here; every process started later inherits it.
            unsafe { std::env::set_var(crate::system::POSTGRES_URL_VAR, url) };
        }
        None => println!(
            "== no PostgreSQL: chapter 18's PostgreSQL track will say it was skipped (set {})",
            crate::system::POSTGRES_URL_VAR
        ),
    }
    // Before the tests: the class report's test (xtask/tests/grade_class.rs) needs it too.
    crate::system::ensure(&[crate::system::CHROMIUM])?;
    let mut steps: Vec<(&str, bool)> = Vec::new();

    println!("== cargo test (the workbook's own crates and the solutions)");
    let tests = Command::new(crate::util::cargo())
        .args(["test", "--quiet"])
        .current_dir(&workbook.root)
        .status()?
        .success();
    steps.push(("cargo test", tests));

    println!("== cargo xtask verify");
    let verified = verify::run(verify::VerifyArgs {
        chapters: Vec::new(),
        no_mutants: false,
        shipped_only: false,
    })? == ExitCode::SUCCESS;
    steps.push(("verify", verified));

    println!("== the book in a browser");
    let browsed = crate::commands::book::browser_test(&workbook)? == ExitCode::SUCCESS;
    steps.push(("browser test of the book", browsed));

    let failed: Vec<&str> = steps
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| *name)
        .collect();
    let passed = steps.len() - failed.len();
    println!("\nci took {:.0} s", started.elapsed().as_secs_f64());
    // The closing line: "N passed, N failed" alone after one word.
    println!("ci: {passed} passed, {} failed", failed.len());
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        println!("failed: {}", failed.join(", "));
        Ok(ExitCode::FAILURE)
    }
}
