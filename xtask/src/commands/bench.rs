//! `cargo xtask bench [chapter]`: the grader's timings, measured the way a learner meets them —
//! through `cargo xtask check` — on a copy of the chapter's solution under `target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;

use crate::mutants;
use crate::workbook::{Chapter, Workbook};

/// Measure the grader: warm check, check after a one-line edit, the checks' own time, cold start.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The chapter to measure (default ch08).
    #[arg(default_value = "ch08")]
    pub chapter: String,
    /// Repetitions of each warm measurement.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Skip the cold first check (it compiles everything in a fresh target folder, about a minute).
    #[arg(long)]
    pub skip_cold: bool,
}

/// One `cargo xtask check` run.
struct Sample {
    wall: Duration,
    checks: Duration,
    peak_memory_kib: u64,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    let copy = mutants::copy_of_solution(&workbook, chapter, "bench")?;
    let lib = copy.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).context("reading the copy's lib.rs")?;

    println!(
        "bench {} on a copy of its solution ({} runs each)",
        chapter.id, args.runs
    );
    sample(&workbook, chapter, &copy, None)?;
    let warm: Vec<Sample> = (0..args.runs)
        .map(|_| sample(&workbook, chapter, &copy, None))
        .collect::<Result<_>>()?;
    let mut edited = Vec::new();
    for run in 0..args.runs {
        std::fs::write(
            &lib,
            format!("{original}\npub const BENCH_EDIT: u32 = {run};\n"),
        )?;
        edited.push(sample(&workbook, chapter, &copy, None)?);
    }
    std::fs::write(&lib, &original)?;

    println!();
    row("warm check, nothing changed", &warm, |s| s.wall, "≤ 0.3 s");
    row("check after a one-line edit", &edited, |s| s.wall, "≤ 1 s");
    row("the checks' own run", &warm, |s| s.checks, "≤ 0.5 s");
    let peak = warm
        .iter()
        .chain(&edited)
        .map(|s| s.peak_memory_kib)
        .max()
        .unwrap_or(0);
    println!(
        "  {:<34} {:>8.1} MiB   (budget ≤ 500 MiB)",
        "peak memory of a check process",
        peak as f64 / 1024.0
    );

    if !args.skip_cold {
        let target = workbook.target_dir().join("bench-cold");
        if target.exists() {
            std::fs::remove_dir_all(&target).context("clearing the cold target folder")?;
        }
        let cold = sample(&workbook, chapter, &copy, Some(&target))?;
        println!(
            "  {:<34} {:>8.2} s     (budget ≤ 60 s; builds the grader and every dependency)",
            "cold first check",
            cold.wall.as_secs_f64()
        );
        println!(
            "  {:<34} {:>8.0} MiB   (budget ≤ 300 MiB)",
            "target/ after the first check",
            folder_size(&target) as f64 / (1024.0 * 1024.0)
        );
        std::fs::remove_dir_all(&target).context("removing the cold target folder")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn row(name: &str, samples: &[Sample], pick: impl Fn(&Sample) -> Duration, budget: &str) {
    let mut values: Vec<f64> = samples.iter().map(|s| pick(s).as_secs_f64()).collect();
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    let max = values.last().copied().unwrap_or_default();
    println!("  {name:<34} {median:>8.3} s median, {max:.3} s max   (budget {budget})");
}

/// Times `cargo xtask check <chapter> --path <copy>`, optionally in another target folder.
fn sample(
    workbook: &Workbook,
    chapter: &Chapter,
    copy: &Path,
    target: Option<&PathBuf>,
) -> Result<Sample> {
    let mut command = Command::new(crate::util::cargo());
    command
        .args(["xtask", "check", &chapter.id, "--format", "json", "--path"])
        .arg(copy)
        .current_dir(&workbook.root);
    if let Some(target) = target {
        command.env("CARGO_TARGET_DIR", target);
    }
    let started = Instant::now();
    let output = command.output().context("running cargo xtask check")?;
    let wall = started.elapsed();
    let report: Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "the check printed no report:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    if report["passed"] != true {
        bail!(
            "the solution's copy did not pass; run `cargo xtask check {} --solution`",
            chapter.id
        );
    }
    let results = report["results"].as_array().cloned().unwrap_or_default();
    Ok(Sample {
        wall,
        checks: Duration::from_millis(report["run_ms"].as_u64().unwrap_or(0)),
        peak_memory_kib: results
            .iter()
            .filter_map(|r| r["peak_memory_kib"].as_u64())
            .max()
            .unwrap_or(0),
    })
}

/// The size of every file below `dir`, in bytes.
fn folder_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}
