//! `cargo xtask`: the retry workbook's command line.
//!
//! Learners use `check`, `watch`, `hint`, `list`, `reset`, `solution` and `book`; instructors use
//! `grade` and `grade-class`; authors use `verify`, `sweep`, `figures`, `new` and `bench`. Each
//! command is one module of `commands/`. How the modules fit together, stage by stage, is
//! `xtask/ARCHITECTURE.md`.

mod build;
mod class;
mod commands;
mod cross;
mod curriculum;
mod grade;
mod lang;
mod progress;
mod report;
mod sandbox;
mod status;
mod system;
mod term;
mod timings;
mod tools;
mod util;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The retry workbook: read a chapter, fill in its exercise, and let the grader check it.
///
/// Start with `cargo xtask check`: it grades the first chapter you have not passed yet and says
/// where to begin.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version)]
struct Cli {
    /// The language the grader speaks (default: $WORKBOOK_LANG, else the locale; English
    /// unless either begins with `ja`).
    #[arg(long, global = true, value_enum, value_name = "LANG")]
    lang: Option<lang::Lang>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Check(commands::check::CheckArgs),
    Watch(commands::watch::WatchArgs),
    Hint(commands::hint::HintArgs),
    List(commands::list::ListArgs),
    Reset(commands::reset::ResetArgs),
    Solution(commands::solution::SolutionArgs),
    Book(commands::book::BookArgs),
    Grade(commands::grade::GradeArgs),
    GradeClass(commands::grade_class::GradeClassArgs),
    Verify(commands::verify::VerifyArgs),
    Figures(commands::figures::FiguresArgs),
    New(commands::new::NewArgs),
    Bench(commands::bench::BenchArgs),
    Sweep(commands::sweep::SweepArgs),
    Ci(commands::ci::CiArgs),
    #[command(hide = true)]
    BookPreprocess(commands::preprocess::PreprocessArgs),
}

fn main() -> ExitCode {
    timings::begin();
    status::begin();
    // Cargo runs the grader as rustc's wrapper while it builds a merged harness.
    if let Some(code) = build::rustc_replay::run_as_wrapper() {
        return code;
    }
    term::quiet_when_stdout_closes();
    let cli = Cli::parse();
    lang::set(cli.lang);
    if !matches!(cli.command, Command::BookPreprocess(_)) {
        build::fast_path::set_up();
    }
    timings::phase("arguments read, fast way set up");
    // Check and watch say it themselves, of every chapter but theirs.
    let learners = matches!(
        cli.command,
        Command::Hint(_) | Command::List(_) | Command::Solution(_) | Command::Book(_)
    );
    if let (true, Ok(workbook)) = (learners, curriculum::workbook::Workbook::load()) {
        commands::reset::warn_of_broken_manifests(&workbook, None);
        timings::phase("exercise manifests read");
    }
    let result = match std::panic::catch_unwind(AssertUnwindSafe(|| run(cli.command))) {
        Ok(result) => result,
        // A reader that went away took the rest of the output with it: nothing to say.
        Err(panic) if panic_message(&*panic).is_some_and(term::is_closed_stdout) => {
            return ExitCode::SUCCESS;
        }
        Err(panic) => std::panic::resume_unwind(panic),
    };
    match result {
        Ok(code) => code,
        Err(error) if closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let error = format!("{error:#}");
            eprintln!(
                "{}",
                lang::words::tf(lang::words::Key::ErrorPrefix, &[&error])
            );
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Check(args) => commands::check::run(args),
        Command::Watch(args) => commands::watch::run(args),
        Command::Hint(args) => commands::hint::run(args),
        Command::List(args) => commands::list::run(args),
        Command::Reset(args) => commands::reset::run(args),
        Command::Solution(args) => commands::solution::run(args),
        Command::Book(args) => commands::book::run(args),
        Command::Grade(args) => commands::grade::run(args),
        Command::GradeClass(args) => commands::grade_class::run(args),
        Command::Verify(args) => commands::verify::run(args),
        Command::Figures(args) => commands::figures::run(args),
        Command::New(args) => commands::new::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Ci(args) => commands::ci::run(args),
        Command::BookPreprocess(args) => commands::preprocess::run(args),
    }
}

/// The text a panic was raised with.
fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Whether `error` comes from writing to a pipe whose reader is gone.
fn closed_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(term::is_closed_pipe)
}
