//! `cargo xtask bench [chapter]`: the grader's timings, measured the way a learner meets them —
//! through `cargo xtask check` — on a copy of the chapter's solution under `target/`, each beside
//! the floor measured in the same run: compiling, linking and running a one-test crate with no
//! dependencies after the same one-line edit. A shared or slow machine inflates every figure
//! alike, so the ratio to the floor is the figure to compare. Rustlings, timed after the same
//! edit in the same run, is the yardstick of the edit figure. The cold start is the README's
//! first command on a fresh clone, `cargo xtask check`, whatever chapter the bench measures.

mod rustlings;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;

use crate::build::crate_copy;
use crate::build::manifest_toml;
use crate::commands::watch;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::grade::grader::{Grader, Target};
use crate::sandbox;
use crate::util::write_if_changed;

/// Measure the grader against the floor: warm check, check after a one-line edit, watch, cold start.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The chapter to measure (default ch08).
    #[arg(default_value = "ch08")]
    pub chapter: String,
    /// Repetitions of each warm measurement.
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Skip the first check of a fresh clone (`cargo xtask check` building the grader and every
    /// dependency in an empty target folder: half a minute or more).
    #[arg(long)]
    pub skip_cold: bool,
    /// Skip the comparison with rustlings (the first run installs rustlings 6 into
    /// target/tools/: about three minutes).
    #[arg(long)]
    pub skip_rustlings: bool,
}

/// One `cargo xtask check` run.
struct Sample {
    wall: Duration,
    /// Processor time of every process it started (user and system).
    cpu: Duration,
    /// The build as the grader timed it (cargo and rustc, or the freshness check alone).
    build: Duration,
    checks: Duration,
    peak_memory_kib: u64,
    build_reused: bool,
    build_replayed: bool,
}

/// The medians of one round of measurements.
struct Figures {
    floor_edit: Vec<Timed>,
    floor_warm: Vec<Timed>,
    rustlings_edit: Vec<Timed>,
    rustlings_warm: Vec<Timed>,
    warm: Vec<Sample>,
    edited: Vec<Sample>,
    watched: Vec<Timed>,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    let runs = args.runs.max(1);
    let rustlings = if args.skip_rustlings {
        None
    } else {
        // Without rustlings the other figures still stand; the edit figure then has no
        // yardstick.
        rustlings::Rustlings::prepare(&workbook)
            .inspect_err(|error| println!("rustlings will not be timed: {error:#}"))
            .ok()
    };
    announce(chapter, runs);
    let figures = measure(&workbook, chapter, runs, rustlings.as_ref())?;
    let table = Table {
        floor: medians(&figures.floor_edit),
    };
    table.print_speed(&figures);
    print_caches_and_memory(&figures);
    if !args.skip_cold {
        bench_first_check(&workbook, &table)?;
    }
    if let Some(load) = load_average() {
        println!("  load average at the end: {load}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What is benched, and what on this machine may slow it.
fn announce(chapter: &Chapter, runs: usize) {
    println!(
        "bench {} on a copy of its solution ({runs} runs each, interleaved with the floor){}",
        chapter.id,
        load_average()
            .map(|load| format!("; load average {load}"))
            .unwrap_or_default()
    );
    if let Some(names) = names_known_missing().filter(|&names| names > MISSING_NAMES_SLOW) {
        println!(
            "note: the kernel remembers {:.1} million names that do not exist; a cache that large \
             slows every file lookup and every figure below (`echo 2 > \
             /proc/sys/vm/drop_caches` as root empties it)",
            names as f64 / 1e6
        );
    }
}

/// Times every figure `runs` times, interleaved with the floor, on a copy of the solution; the
/// copy and the floor crate are restored afterwards.
fn measure(
    workbook: &Workbook,
    chapter: &Chapter,
    runs: usize,
    rustlings: Option<&rustlings::Rustlings>,
) -> Result<Figures> {
    let copy = crate_copy::copy_of_solution(workbook, chapter, "bench")?;
    let floor = floor_crate(workbook)?;
    let lib = copy.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).context("reading the copy's lib.rs")?;
    let floor_lib = floor.join("src/lib.rs");
    let floor_original = std::fs::read_to_string(&floor_lib)?;
    // Warm everything once: the grader, the harness, the floor.
    cargo_test(workbook, &floor)?;
    sample(workbook, chapter, &copy)?;
    if let Some(rustlings) = rustlings {
        rustlings.run()?;
    }
    let mut figures = Figures {
        floor_edit: Vec::new(),
        floor_warm: Vec::new(),
        rustlings_edit: Vec::new(),
        rustlings_warm: Vec::new(),
        warm: Vec::new(),
        edited: Vec::new(),
        watched: Vec::new(),
    };
    for run in 0..runs {
        let edit = |text: &str| format!("{text}\npub const BENCH_EDIT: u32 = {run};\n");
        std::fs::write(&floor_lib, edit(&floor_original))?;
        figures.floor_edit.push(cargo_test(workbook, &floor)?);
        figures.floor_warm.push(cargo_test(workbook, &floor)?);
        if let Some(rustlings) = rustlings {
            rustlings.edit(run)?;
            figures.rustlings_edit.push(rustlings.run()?);
            figures.rustlings_warm.push(rustlings.run()?);
        }
        std::fs::write(&lib, edit(&original))?;
        figures.edited.push(sample(workbook, chapter, &copy)?);
        figures.warm.push(sample(workbook, chapter, &copy)?);
        let watched_edit = format!("{original}\npub const BENCH_WATCH: u32 = {run};\n");
        figures.watched.push(save_to_verdict(
            workbook,
            chapter,
            &copy,
            &lib,
            &watched_edit,
        )?);
    }
    std::fs::write(&lib, &original)?;
    std::fs::write(&floor_lib, &floor_original)?;
    Ok(figures)
}

/// The wall and CPU time of each sample.
fn timed(samples: &[Sample]) -> Vec<Timed> {
    samples
        .iter()
        .map(|s| Timed {
            wall: s.wall,
            cpu: s.cpu,
        })
        .collect()
}

/// The table of figures, each also as a multiple of the floor.
struct Table {
    floor: Timed,
}

impl Table {
    /// One row: the figure, its ratio to the floor, and its budget.
    fn row(&self, name: &str, value: Timed, budget: &str) {
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        println!(
            "  {name:<38} {:>7.3} {:>7.2}×   {:>7.3} {:>7.2}×   {budget}",
            value.wall.as_secs_f64(),
            ratio(value.wall, self.floor.wall),
            value.cpu.as_secs_f64(),
            ratio(value.cpu, self.floor.cpu),
        );
    }

    /// The speed figures: the floor, rustlings, a check after an edit and where its time goes,
    /// a warm check, and watch's save to verdict.
    fn print_speed(&self, figures: &Figures) {
        let edited = medians(&timed(&figures.edited));
        println!();
        println!(
            "  {:<38} {:>7} {:>8}   {:>7} {:>8}   budget",
            "figure (median)", "wall s", "× floor", "CPU s", "× floor"
        );
        self.row(
            "floor: one-test crate after the edit",
            self.floor,
            "(the unit)",
        );
        self.row(
            "floor: the same, nothing changed",
            medians(&figures.floor_warm),
            "",
        );
        let rustlings_edit =
            (!figures.rustlings_edit.is_empty()).then(|| medians(&figures.rustlings_edit));
        if let Some(rustlings_edit) = rustlings_edit {
            self.row(
                "rustlings run after the same edit",
                rustlings_edit,
                "(the yardstick)",
            );
            self.row(
                "rustlings run, nothing changed",
                medians(&figures.rustlings_warm),
                "",
            );
        }
        let edit_budget = match rustlings_edit {
            Some(yardstick) => format!(
                "≤ 0.7× rustlings = {:.3} s (here {:.2}×)",
                yardstick.wall.as_secs_f64() * 0.7,
                edited.wall.as_secs_f64() / yardstick.wall.as_secs_f64().max(1e-9)
            ),
            None => "≤ 0.7× rustlings, about 0.4 s".to_owned(),
        };
        self.row("check after a one-line edit", edited, &edit_budget);
        // Where the edit figure goes: the build, the checks, and the rest (`cargo run` starting
        // the grader, which reads the workbook, writes the harness and the report).
        let part = |get: fn(&Sample) -> Duration| {
            median(&figures.edited.iter().map(get).collect::<Vec<_>>()).as_secs_f64()
        };
        let (build, run) = (part(|s| s.build), part(|s| s.checks));
        println!(
            "  {:<38} build {build:.3} s · checks {run:.3} s · the rest {:.3} s",
            "  of which (medians)",
            edited.wall.as_secs_f64() - build - run
        );
        self.row(
            "warm check, nothing changed",
            medians(&timed(&figures.warm)),
            "≤ 0.15 s",
        );
        self.row(
            "watch: save to verdict (in process)",
            medians(&figures.watched),
            &format!(
                "≤ check after the edit + 0.05 s = {:.3} s",
                edited.wall.as_secs_f64() + 0.05
            ),
        );
    }
}

/// The checks' own run, how often a build was replayed or skipped, and the peak memory.
fn print_caches_and_memory(figures: &Figures) {
    let checks = median(&figures.warm.iter().map(|s| s.checks).collect::<Vec<_>>());
    println!(
        "  {:<38} {:>7.3} s (budget ≤ 0.5 s)",
        "the checks' own run (wall)",
        checks.as_secs_f64()
    );
    let replayed = figures.edited.iter().filter(|s| s.build_replayed).count();
    println!(
        "  edits compiled by rustc alone: {replayed} of {}",
        figures.edited.len()
    );
    let reused = figures.warm.iter().filter(|s| s.build_reused).count();
    println!(
        "  warm checks that skipped cargo: {reused} of {}",
        figures.warm.len()
    );
    let peak = figures
        .warm
        .iter()
        .chain(&figures.edited)
        .map(|s| s.peak_memory_kib)
        .max()
        .unwrap_or(0);
    println!(
        "  {:<38} {:>8.1} MiB   (budget ≤ 500 MiB)",
        "peak memory of a check process",
        peak as f64 / 1024.0
    );
}

/// A fresh clone's first check, in a target folder of its own that is removed afterwards.
fn bench_first_check(workbook: &Workbook, table: &Table) -> Result<()> {
    let target = workbook.target_dir().join("bench-cold");
    if target.exists() {
        std::fs::remove_dir_all(&target).context("clearing the cold target folder")?;
    }
    let (first, graded) = first_check(workbook, &target)?;
    table.row(
        &format!("fresh clone's first check ({graded})"),
        first,
        "≤ 20 s (dependencies downloaded, nothing built)",
    );
    println!(
        "  {:<38} {:>8.0} MiB   (budget ≤ 300 MiB)",
        "target/ after the first check",
        folder_size(&target) as f64 / (1024.0 * 1024.0)
    );
    std::fs::remove_dir_all(&target).context("removing the cold target folder")?;
    Ok(())
}

/// The median wall time and the median processor time, each on its own.
fn medians(values: &[Timed]) -> Timed {
    Timed {
        wall: median(&values.iter().map(|t| t.wall).collect::<Vec<_>>()),
        cpu: median(&values.iter().map(|t| t.cpu).collect::<Vec<_>>()),
    }
}

fn median(values: &[Duration]) -> Duration {
    let mut values = values.to_vec();
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// The 1, 5 and 15 minute load averages, where the system tells them.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// How many names that do not exist the kernel's lookup cache holds above which lookups slow
/// down: builds delete many files (rustc's incremental sessions, the checks' folders), and
/// Linux keeps each deleted name until memory runs short. At 10 million, on this project's
/// 2-core machine, `rustc -V` took 85-235 ms instead of 21 ms.
const MISSING_NAMES_SLOW: u64 = 1_000_000;

/// The number of negative entries in Linux's directory cache (none elsewhere).
fn names_known_missing() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/sys/fs/dentry-state").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// The floor: a crate with one test and no dependencies, built like the workspace's crates.
fn floor_crate(workbook: &Workbook) -> Result<PathBuf> {
    let dir = workbook.work_dir().join("bench-floor");
    let mut manifest = String::from(
        "# Generated by `cargo xtask bench`: the floor every figure is compared with.\n\
         [package]\nname = \"bench_floor\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[workspace]\n",
    );
    if let Some(profiles) = manifest_toml::workspace_profiles_for(&workbook.root, &["bench_floor"])?
    {
        let table = toml::Table::from_iter([("profile".to_owned(), profiles)]);
        manifest.push('\n');
        manifest.push_str(&toml::to_string(&table).context("writing the floor's manifest")?);
    }
    write_if_changed(&dir.join("Cargo.toml"), &manifest)?;
    write_if_changed(
        &dir.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    \
         fn answers() {\n        assert_eq!(super::answer(), 42);\n    }\n}\n",
    )?;
    Ok(dir)
}

/// Times `cargo test` on the floor crate: compile, link and run its one test.
fn cargo_test(workbook: &Workbook, floor: &Path) -> Result<Timed> {
    let stopwatch = Stopwatch::start();
    let output = Command::new(crate::util::cargo())
        .args(["test", "--quiet"])
        .current_dir(floor)
        .env("CARGO_TARGET_DIR", workbook.target_dir())
        .output()
        .context("running cargo test on the floor crate")?;
    let timed = stopwatch.read();
    if !output.status.success() {
        bail!(
            "the floor crate failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(timed)
}

/// A wall-clock time and the processor time spent in it.
#[derive(Debug, Clone, Copy)]
struct Timed {
    wall: Duration,
    cpu: Duration,
}

/// Measures a [`Timed`] from its start.
struct Stopwatch {
    started: Instant,
    cpu_before: Duration,
}

impl Stopwatch {
    fn start() -> Self {
        Self {
            started: Instant::now(),
            cpu_before: sandbox::processor_time(),
        }
    }

    /// The wall-clock and processor time since the start.
    fn read(&self) -> Timed {
        Timed {
            wall: self.started.elapsed(),
            cpu: sandbox::processor_time().saturating_sub(self.cpu_before),
        }
    }
}

/// What `watch` does after a save, timed from the save: it notices the change (looking every
/// `watch::POLL`), waits for the files to settle, and grades, in its own process as `watch`
/// does. `text` must differ from what the file holds.
fn save_to_verdict(
    workbook: &Workbook,
    chapter: &Chapter,
    copy: &Path,
    lib: &Path,
    text: &str,
) -> Result<Timed> {
    let seen = watch::snapshot(copy);
    // A save lands at a random moment between two looks.
    std::thread::sleep(watch::POLL / 2);
    let since_save = Stopwatch::start();
    std::fs::write(lib, text)?;
    loop {
        std::thread::sleep(watch::POLL);
        let now = watch::snapshot(copy);
        if now != seen {
            watch::settled(copy, now);
            break;
        }
    }
    let report = Grader::new(workbook).grade(chapter, &Target::Path(copy.to_path_buf()))?;
    if !report.passed {
        bail!("the solution's copy did not pass under watch");
    }
    Ok(since_save.read())
}

/// Times what a fresh clone's first command does, the README's `cargo xtask check`, in the empty
/// target folder `target` with no progress recorded: cargo builds the grader (a fresh clone has
/// no fast way in yet, so this is the alias's slow way, `cargo run`), which then grades the first
/// chapter's exercise. Returns the time and the chapter graded.
fn first_check(workbook: &Workbook, target: &Path) -> Result<(Timed, String)> {
    let progress = target.join("no-progress-yet");
    std::fs::create_dir_all(&progress)?;
    let (timed, report) = timed_report(
        Command::new(crate::util::cargo())
            .args(["run", "--quiet", "--package", "xtask", "--"])
            .args(["check", "--format", "json"])
            .env("CARGO_TARGET_DIR", target)
            .env(crate::progress::STATE_DIR_VAR, &progress)
            .current_dir(&workbook.root),
    )?;
    let chapter = report["chapter"].as_str().unwrap_or("?").to_owned();
    Ok((timed, chapter))
}

/// Times `cargo xtask check <chapter> --path <copy>`.
fn sample(workbook: &Workbook, chapter: &Chapter, copy: &Path) -> Result<Sample> {
    let (Timed { wall, cpu }, report) = timed_report(
        Command::new(crate::util::cargo())
            .arg("xtask")
            .args(["check", &chapter.id, "--format", "json", "--path"])
            .arg(copy)
            .current_dir(&workbook.root),
    )?;
    if report["passed"] != true {
        bail!(
            "the solution's copy did not pass; run `cargo xtask check {} --solution`",
            chapter.id
        );
    }
    let results = report["results"].as_array().cloned().unwrap_or_default();
    Ok(Sample {
        wall,
        cpu,
        build: Duration::from_millis(report["compile_ms"].as_u64().unwrap_or(0)),
        checks: Duration::from_millis(report["run_ms"].as_u64().unwrap_or(0)),
        peak_memory_kib: results
            .iter()
            .filter_map(|r| r["peak_memory_kib"].as_u64())
            .max()
            .unwrap_or(0),
        build_reused: report["build_reused"] == true,
        build_replayed: report["build_replayed"] == true,
    })
}

/// Runs a `check --format json` command and times it; returns the time and the report it
/// printed.
fn timed_report(command: &mut Command) -> Result<(Timed, Value)> {
    let stopwatch = Stopwatch::start();
    let output = command.output().context("running cargo xtask check")?;
    let timed = stopwatch.read();
    let report = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "the check printed no report:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    Ok((timed, report))
}

/// The size of every file below `dir`, in bytes.
fn folder_size(dir: &Path) -> u64 {
    crate::util::files_under(dir, &[])
        .unwrap_or_default()
        .iter()
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .sum()
}
