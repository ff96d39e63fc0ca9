//! `cargo xtask ci`: the project's whole test suite, as CI runs it — actionlint over the GitHub
//! Actions workflows, the unit and integration tests of every crate, then `verify` over every
//! chapter, the figures and the book, then the cross-platform stage (clippy for macOS, Windows
//! and musl; the sandbox tests under Wine), then the built book in headless Chromium.

mod actionlint;

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;

use crate::commands::verify;
use crate::curriculum::workbook::Workbook;

/// Run every test of the project: cargo test, then verify (chapters, mutants, figures, book).
#[derive(Debug, Args)]
pub struct CiArgs {
    /// Run only the cross-platform stage (clippy on macOS, Windows and musl; Wine tests).
    #[arg(long)]
    pub cross_only: bool,
    /// Run only actionlint over the GitHub Actions workflows (installing it with pip the first time).
    #[arg(long, conflicts_with = "cross_only")]
    pub workflows_only: bool,
    /// Run only the translations stage: the book's PO files and the grader's Japanese.
    #[arg(long, conflicts_with_all = ["cross_only", "workflows_only"])]
    pub translations_only: bool,
}

pub fn run(args: CiArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let started = Instant::now();
    if args.cross_only {
        let cross = crate::cross::run(&workbook)?;
        let passed = cross.clippy_clean && cross.wine_tests_pass;
        return Ok(if passed {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    if args.translations_only {
        let all_ok = translations(&workbook)?.iter().all(|(_, ok)| *ok);
        return Ok(if all_ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    if args.workflows_only {
        println!("{WORKFLOWS_HEADING}");
        return Ok(if actionlint::run(&workbook)? {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    if let Some(code) = start_again_with_postgres()? {
        return Ok(code);
    }
    // Before the tests: the class report's test (xtask/tests/integration/grade_class.rs) needs it too.
    crate::system::ensure(&[crate::system::CHROMIUM])?;
    let cross_packages = crate::cross::install_in_background();
    let mut stages = Stages::default();
    // Finding or starting PostgreSQL, installing Chromium.
    stages.times.push(("setup", started.elapsed()));

    println!("{WORKFLOWS_HEADING}");
    stages.run("actionlint", || {
        Ok(vec![(
            "actionlint on the workflows",
            actionlint::run(&workbook)?,
        )])
    })?;

    println!("== cargo test (the workbook's own crates and the solutions)");
    stages.run("cargo test", || {
        Ok(vec![(
            "cargo test",
            Command::new(crate::util::cargo())
                .args(["test", "--quiet"])
                .current_dir(&workbook.root)
                .status()?
                .success(),
        )])
    })?;

    println!("== cargo xtask verify");
    stages.run("verify", || {
        let verified = verify::verify(&workbook, &verify::Scope::EVERYTHING)? == ExitCode::SUCCESS;
        Ok(vec![("verify", verified)])
    })?;

    stages.run("translations", || translations(&workbook))?;

    println!(
        "== other platforms: clippy on {} for the workspace and every harness, the sandbox under Wine",
        crate::cross::TARGETS.join(", ")
    );
    match cross_packages.join() {
        Ok(Ok(())) => {}
        Ok(Err(error)) => println!("   installing in the background failed ({error:#}); again:"),
        Err(_) => println!("   the installing thread panicked; installing again:"),
    }
    stages.run(CROSS_STAGE, || {
        let cross = crate::cross::run(&workbook)?;
        Ok(vec![
            ("cross-platform clippy", cross.clippy_clean),
            ("sandbox tests under Wine", cross.wine_tests_pass),
        ])
    })?;

    println!("== the book in a browser");
    stages.run("browser test", || {
        let browsed = crate::commands::book::browser_test(&workbook)? == ExitCode::SUCCESS;
        Ok(vec![("browser test of the book", browsed)])
    })?;

    Ok(close(stages, started.elapsed()))
}

/// Finds a PostgreSQL server for chapter 18's PostgreSQL track (or says there is none). When
/// one is found and the variable that names it is not set, ci runs again as a child with it set
/// (a running process cannot safely change its own environment), so every process it starts
/// inherits it; that run's exit code is returned.
fn start_again_with_postgres() -> Result<Option<ExitCode>> {
    match crate::system::postgres_url()? {
        Some(url) if std::env::var_os(crate::system::POSTGRES_URL_VAR).is_none() => {
            let status = Command::new(std::env::current_exe()?)
                .args(std::env::args_os().skip(1))
                .env(crate::system::POSTGRES_URL_VAR, url)
                .status()?;
            return Ok(Some(
                status
                    .code()
                    .and_then(|code| u8::try_from(code).ok())
                    .map_or(ExitCode::FAILURE, ExitCode::from),
            ));
        }
        Some(url) => println!("== PostgreSQL for chapter 18's PostgreSQL track: {url}"),
        None => println!(
            "== no PostgreSQL: chapter 18's PostgreSQL track will say it was skipped (set {})",
            crate::system::POSTGRES_URL_VAR
        ),
    }
    Ok(None)
}

/// The translations stage: the book's PO files (every language marked complete has every entry
/// translated, none fuzzy) and the grader's Japanese (the CLI's words and every chapter's
/// `ja.toml`), each with its counts.
fn translations(workbook: &Workbook) -> Result<Vec<(&'static str, bool)>> {
    println!("== translations of the book (book/po/*.po) and of the grader");
    let results = crate::commands::book_i18n::coverage_report(workbook)?;
    let grader = crate::curriculum::translation::grader_report(workbook)?;
    Ok(vec![
        (
            "translations marked complete are complete",
            results.iter().all(|(_, ok)| *ok),
        ),
        ("the grader's words all have their Japanese", grader),
    ])
}

/// Prints how long ci and each stage took, and the closing line: "N passed, N failed" alone
/// after one word, then the failed steps.
fn close(stages: Stages, total: Duration) -> ExitCode {
    println!(
        "\nci took {:.0} s; {:.0} s without the cross-platform stage ({})",
        total.as_secs_f64(),
        (total - stages.time_of(CROSS_STAGE)).as_secs_f64(),
        stages
            .times
            .iter()
            .map(|(name, time)| format!("{name} {:.0} s", time.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let steps = stages.steps;
    let failed: Vec<&str> = steps
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| *name)
        .collect();
    let passed = steps.len() - failed.len();
    println!("ci: {passed} passed, {} failed", failed.len());
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// The workflow stage's heading.
const WORKFLOWS_HEADING: &str = "== actionlint on the GitHub Actions workflows";

/// The stage whose time is budgeted apart (it prints its own time too).
const CROSS_STAGE: &str = "cross-platform";

/// The stages run so far: each step's verdict, and each stage's time.
#[derive(Default)]
struct Stages {
    steps: Vec<(&'static str, bool)>,
    times: Vec<(&'static str, Duration)>,
}

impl Stages {
    /// Runs one stage, which reports a verdict for each of its steps, and times it.
    fn run(
        &mut self,
        name: &'static str,
        stage: impl FnOnce() -> Result<Vec<(&'static str, bool)>>,
    ) -> Result<()> {
        let started = Instant::now();
        self.steps.extend(stage()?);
        self.times.push((name, started.elapsed()));
        Ok(())
    }

    /// How long the stage `name` took (nothing, if it did not run).
    fn time_of(&self, name: &str) -> Duration {
        self.times
            .iter()
            .find(|(stage, _)| *stage == name)
            .map_or(Duration::ZERO, |(_, time)| *time)
    }
}
