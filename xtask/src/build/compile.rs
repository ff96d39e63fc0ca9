//! Compiling a prepared harness into its test binary, the cheapest way that is correct: reuse the
//! last binary when nothing it was built from changed (`freshness`), replay rustc when only
//! sources did (`rustc_replay`), and otherwise run cargo, with its progress on the status line and
//! its messages read into a `CompileFailure` (`compiler_messages`).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::build::compiler_messages::{
    CargoMessage, RustcMessage, compile_error, is_code_failure, is_learners_file, shorten_paths,
};
use crate::build::freshness;
use crate::build::harness::Graded;
use crate::build::rustc_replay;
use crate::curriculum::workbook::Workbook;
use crate::lang::words;
use crate::report::model::{CompileError, CompileFailure};
use crate::status::{self, Activity, Mode};

/// A compiled harness, ready to run.
#[derive(Debug)]
pub struct Built {
    pub test_binary: PathBuf,
    /// Every test the binary holds.
    pub tests: Vec<String>,
    pub compile_time: Duration,
    /// True when the last build was reused without running cargo.
    pub reused: bool,
    /// True when rustc compiled it without cargo (see `rustc_replay`).
    pub replayed: bool,
}

/// How to run cargo for a build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Colour in the compiler's messages.
    pub color: bool,
    /// Show what cargo compiles and how far along it is, on one line of stderr.
    pub show_progress: bool,
    /// Which target folder to build in: 0 is the workspace's, `n` is `target/lane-n/`. Cargo
    /// builds one thing at a time in a target folder, so `verify` gives each of its lanes its
    /// own, and their builds run side by side.
    pub lane: usize,
}

/// The target folder of build lane `lane` (see [`BuildOptions::lane`]).
pub fn lane_target_dir(workbook: &Workbook, lane: usize) -> PathBuf {
    match lane {
        0 => workbook.target_dir(),
        n => workbook.target_dir().join(format!("lane-{n}")),
    }
}

/// A build that either worked or failed for a reason the learner must see.
#[derive(Debug)]
pub enum BuildOutcome<T> {
    Built(T),
    Failed(CompileFailure),
}

impl<T> BuildOutcome<T> {
    /// What was built, turned by `f`; a failure stays as it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> BuildOutcome<U> {
        match self {
            BuildOutcome::Built(built) => BuildOutcome::Built(f(built)),
            BuildOutcome::Failed(failure) => BuildOutcome::Failed(failure),
        }
    }
}

/// Compiles the harness at `dir`, or reuses its last build when nothing it was built from has
/// changed (see `freshness`). `sources` are the folders and files the harness compiles beside the
/// graded crate: the checks, the support file, the visible tests. A merged harness whose build
/// settings have not changed is compiled by rustc alone (see `rustc_replay`).
pub fn build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    sources: &[PathBuf],
    options: BuildOptions,
) -> Result<BuildOutcome<Built>> {
    let started = Instant::now();
    // Reading the inputs, building and stamping happen as one step for each harness, so a stamp
    // always describes the binary that is there.
    let _lock = crate::util::FolderLock::acquire(dir)?;
    let inputs = freshness::inputs(dir, &graded.dir, sources);
    crate::timings::phase("build inputs read");
    if let Some(reusable) = inputs
        .as_ref()
        .and_then(|inputs| freshness::reusable(dir, inputs))
    {
        return Ok(BuildOutcome::Built(Built {
            test_binary: reusable.test_binary,
            tests: reusable.tests,
            compile_time: started.elapsed(),
            reused: true,
            replayed: false,
        }));
    }
    if let Some(inputs) = &inputs {
        freshness::renew_changed_files_that_look_old(dir, inputs);
    }
    // The copy of the graded crate holds the learner's text; the other sources name the tests.
    let test_sources: Vec<PathBuf> = sources
        .iter()
        .filter(|source| Some(*source) != graded.copy.as_ref())
        .cloned()
        .collect();
    let known_tests = inputs
        .as_ref()
        .and_then(|inputs| freshness::tests_if_unchanged(dir, inputs, &test_sources));
    freshness::forget(dir);
    let merged = graded.copy.is_some();
    let settings = inputs.as_ref().map(freshness::Inputs::settings_digest);
    let replay = match (&settings, merged) {
        (Some(settings), true) => {
            rustc_replay::replayable(dir, settings, options.color, options.lane)
        }
        _ => None,
    };
    if let Some(replay) = replay
        && let Some(outcome) = build_by_replay(workbook, dir, graded, &replay, options)?
    {
        let (test_binary, units) = match outcome {
            BuildOutcome::Built(built) => built,
            BuildOutcome::Failed(failure) => return Ok(BuildOutcome::Failed(failure)),
        };
        let built = finish_build(dir, inputs.as_ref(), &units, test_binary, known_tests)?;
        return Ok(BuildOutcome::Built(Built {
            compile_time: started.elapsed(),
            replayed: true,
            ..built
        }));
    }
    build_with_cargo(workbook, dir, graded, options, inputs.as_ref(), settings)
}

/// Builds the harness with cargo, recording how rustc ran (for a later replay) when the harness
/// is merged, and stamps the result.
fn build_with_cargo(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    options: BuildOptions,
    inputs: Option<&freshness::Inputs>,
    settings: Option<String>,
) -> Result<BuildOutcome<Built>> {
    let merged = graded.copy.is_some();
    // `--tests` leaves out what no test binary needs: the examples, and the plain library that
    // only doc tests and examples link.
    let build = |record_rustc| {
        cargo_build(
            workbook,
            dir,
            graded,
            &["test", "--no-run", "--tests"],
            options,
            record_rustc,
        )
    };
    let mut outcome = build(merged)?;
    // A wrapper that cargo could not run fails the build without a compiler error: once more
    // without it.
    if merged && matches!(&outcome, BuildOutcome::Failed(failure) if failure.errors.is_empty()) {
        outcome = build(false)?;
    }
    let tests = match outcome {
        BuildOutcome::Built(tests) => tests,
        BuildOutcome::Failed(failure) => {
            rustc_replay::keep(dir, settings, options.color, options.lane);
            return Ok(BuildOutcome::Failed(failure));
        }
    };
    rustc_replay::keep(dir, settings, options.color, options.lane);
    let test_binary = tests
        .binaries
        .iter()
        .find(|binary| binary.target == "checks")
        .map(|binary| binary.path.clone());
    let Some(test_binary) = test_binary else {
        return Ok(BuildOutcome::Failed(CompileFailure {
            errors: Vec::new(),
            cargo_output: "the check harness built no test binary".to_owned(),
        }));
    };
    let built = finish_build(dir, inputs, &tests.local_units, test_binary, None)?;
    Ok(BuildOutcome::Built(Built {
        compile_time: tests.compile_time,
        ..built
    }))
}

/// Lists the tests of a freshly built `test_binary` (unless `known_tests` already says what
/// they are) and stamps the build. The build's time and how it was made are the caller's to
/// fill in.
fn finish_build(
    dir: &Path,
    inputs: Option<&freshness::Inputs>,
    units: &freshness::LocalUnits,
    test_binary: PathBuf,
    known_tests: Option<Vec<String>>,
) -> Result<Built> {
    crate::timings::phase("compiled");
    let listed = match known_tests {
        Some(tests) => tests,
        None => list_tests(&test_binary)?,
    };
    crate::timings::phase("tests listed");
    if let Some(inputs) = inputs {
        freshness::record(dir, inputs, units, &test_binary, &listed)?;
        crate::timings::phase("build recorded");
    }
    Ok(Built {
        test_binary,
        tests: listed,
        compile_time: Duration::ZERO,
        reused: false,
        replayed: false,
    })
}

/// Compiles a merged harness by replaying rustc's last invocation. None when the replay failed
/// for a reason outside the code (see [`is_code_failure`]): cargo then builds it.
fn build_by_replay(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    replay: &rustc_replay::Replay,
    options: BuildOptions,
) -> Result<Option<BuildOutcome<(PathBuf, freshness::LocalUnits)>>> {
    let activity = Activity::start(
        Mode::for_stderr(options.show_progress),
        words::tf(words::Key::StatusCompilingWith, &[&graded.package]),
    );
    let replayed = replay.run();
    drop(activity);
    let replayed = replayed?;
    if replayed.success {
        let Some(dep_info) = freshness::dep_info_of(&replay.test_binary) else {
            return Ok(None);
        };
        let units = freshness::LocalUnits::single(
            &dir.join("Cargo.toml"),
            dep_info,
            replay.workspace_dir(),
        );
        return Ok(Some(BuildOutcome::Built((
            replay.test_binary.clone(),
            units,
        ))));
    }
    let mut errors: Vec<CompileError> = Vec::new();
    for line in &replayed.diagnostics {
        let Ok(diagnostic) = serde_json::from_str::<RustcMessage>(line) else {
            continue;
        };
        if !diagnostic.is_reported_error() {
            continue;
        }
        let in_graded_crate = is_learners_file(graded, &diagnostic);
        let mut error = compile_error(workbook, graded, diagnostic, in_graded_crate);
        // Rustc renders in colour for cargo, which takes it out when asked for none; replayed,
        // the grader does.
        if !options.color {
            error.rendered = anstream::adapter::strip_str(&error.rendered).to_string();
        }
        errors.push(error);
    }
    if !is_code_failure(&errors) {
        rustc_replay::forget(dir);
        return Ok(None);
    }
    errors.sort_by_key(|error| !error.in_graded_crate);
    Ok(Some(BuildOutcome::Failed(CompileFailure {
        errors,
        cargo_output: shorten_paths(workbook, graded, &replayed.other_output),
    })))
}

/// Every executable of one build.
#[derive(Debug)]
pub struct BuiltTests {
    pub binaries: Vec<Executable>,
    pub compile_time: Duration,
    /// What the build read for the crates of this workspace (not the registry's).
    pub local_units: freshness::LocalUnits,
}

/// One executable a build produced.
#[derive(Debug, Clone)]
pub struct Executable {
    /// The name of its target (a test's file stem, an example's name, the library's name).
    pub target: String,
    pub path: PathBuf,
    /// The folder of the package it belongs to (one build of a workspace builds several).
    pub package_dir: Option<PathBuf>,
}

/// Runs `cargo <subcommand…>` on the crate at `dir` with JSON messages, and collects its
/// executables and its errors. With `record_rustc`, the grader is cargo's workspace wrapper and
/// keeps how rustc ran (see `rustc_replay`).
pub fn cargo_build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    subcommand: &[&str],
    options: BuildOptions,
    record_rustc: bool,
) -> Result<BuildOutcome<BuiltTests>> {
    let started = Instant::now();
    let mode = Mode::for_stderr(options.show_progress);
    let mut command = cargo_command(workbook, dir, subcommand, options, mode);
    if record_rustc {
        rustc_replay::record_through_wrapper(&mut command, dir);
    }
    let activity = Arc::new(Activity::start(mode, words::t(words::Key::StatusCompiling)));
    // Its own process group: Ctrl-C ends it through the sandbox, with every rustc it started.
    let mut child = crate::sandbox::BuildChild::spawn(&mut command).context("starting cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let reader_activity = Arc::clone(&activity);
    let stderr_reader = std::thread::spawn(move || read_cargo_stderr(stderr, &reader_activity));
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut read = read_cargo_stdout(stdout, workbook, dir, graded)?;
    let status = child.wait().context("waiting for cargo")?;
    let cargo_output = stderr_reader.join().unwrap_or_default();
    drop(activity);
    if status.success() {
        return Ok(BuildOutcome::Built(BuiltTests {
            binaries: read.binaries,
            compile_time: started.elapsed(),
            local_units: read.local_units,
        }));
    }
    // The learner's own errors first, the checks' after.
    read.errors.sort_by_key(|error| !error.in_graded_crate);
    Ok(BuildOutcome::Failed(CompileFailure {
        errors: read.errors,
        cargo_output: shorten_paths(workbook, graded, &cargo_output),
    }))
}

/// Cargo with `subcommand` on the harness in `dir`, its JSON messages on stdout and, when the
/// status line is on, its progress bar on stderr.
fn cargo_command(
    workbook: &Workbook,
    dir: &Path,
    subcommand: &[&str],
    options: BuildOptions,
    mode: Mode,
) -> Command {
    let format = if options.color {
        "json-diagnostic-rendered-ansi"
    } else {
        "json"
    };
    let mut command = Command::new(crate::util::cargo());
    command
        .args(subcommand)
        .args(["--message-format", format, "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", lane_target_dir(workbook, options.lane))
        .env_remove("RUSTC_BOOTSTRAP")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if mode != Mode::Off {
        // Cargo draws its progress bar into the pipe too; the status line below reads it.
        command
            .env("CARGO_TERM_PROGRESS_WHEN", "always")
            .env("CARGO_TERM_PROGRESS_WIDTH", "100")
            .env("CARGO_TERM_COLOR", "never");
    }
    command
}

/// What cargo's JSON messages told about a build.
struct CargoRead {
    binaries: Vec<Executable>,
    local_units: freshness::LocalUnits,
    errors: Vec<CompileError>,
}

/// Reads cargo's JSON messages: the executables built, what the local crates were built from,
/// and each compiler error once.
fn read_cargo_stdout(
    stdout: std::process::ChildStdout,
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
) -> Result<CargoRead> {
    let mut read = CargoRead {
        binaries: Vec::new(),
        local_units: freshness::LocalUnits::default(),
        errors: Vec::new(),
    };
    let graded_id_fragment = graded.dir.display().to_string();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        let Ok(message) = serde_json::from_str::<CargoMessage>(&line) else {
            continue;
        };
        match message.reason.as_str() {
            "compiler-artifact" => {
                if message.package_id.starts_with("path+") {
                    read.local_units.add(
                        message.manifest_path.as_deref(),
                        message.target.as_ref().map_or(&[][..], |t| &t.kind[..]),
                        &message.filenames,
                        dir,
                    );
                }
                if let (Some(target), Some(executable)) = (message.target, message.executable) {
                    read.binaries.push(Executable {
                        target: target.name,
                        path: executable,
                        package_dir: message
                            .manifest_path
                            .as_deref()
                            .and_then(Path::parent)
                            .map(Path::to_path_buf),
                    });
                }
            }
            "compiler-message" => {
                if let Some(diagnostic) = message.message
                    && diagnostic.is_reported_error()
                {
                    let in_graded_crate = message.package_id.contains(&graded_id_fragment)
                        || is_learners_file(graded, &diagnostic);
                    let error = compile_error(workbook, graded, diagnostic, in_graded_crate);
                    // A file compiled twice (a crate's lib and its tests) reports an error twice.
                    if !read
                        .errors
                        .iter()
                        .any(|seen| seen.rendered == error.rendered)
                    {
                        read.errors.push(error);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(read)
}

/// Shows `line` as the one status line on stderr: in place of the last one on a terminal, as a
/// line of its own elsewhere.
pub fn show_status(line: &str) {
    status::say(Mode::for_stderr(true), line);
}

/// Clears the status line.
pub fn clear_status() {
    show_status("");
}

/// Collects cargo's stderr (its complaints, when no compiler error explains a failure), and
/// tells `activity` what cargo compiles and how far along it is.
fn read_cargo_stderr(stderr: std::process::ChildStderr, activity: &Activity) -> String {
    use std::io::Read;
    let mut text = String::new();
    let mut status = progress::Status::default();
    let mut pending = Vec::new();
    let mut bytes = std::io::BufReader::new(stderr).bytes();
    while let Some(Ok(byte)) = bytes.next() {
        if byte != b'\n' && byte != b'\r' {
            pending.push(byte);
            continue;
        }
        let line = String::from_utf8_lossy(&pending).into_owned();
        pending.clear();
        let is_progress = status.read(&line);
        if !is_progress && byte == b'\n' {
            text.push_str(&line);
            text.push('\n');
        }
        if let Some((cold, detail)) = status.changed() {
            if cold {
                activity.headline(words::t(words::Key::StatusCompilingCold));
            }
            activity.detail(detail);
        }
    }
    text
}

/// Reading cargo's human output for a one-line status.
mod progress {
    /// What cargo has said so far about its build.
    #[derive(Debug, Default)]
    pub struct Status {
        compiling: Option<String>,
        done: usize,
        total: usize,
        /// More crates than the graded one and the checks were left to compile at some point
        /// (cargo counts those it finds up to date as done): dependencies, on a first build.
        cold: bool,
        changed: bool,
    }

    impl Status {
        /// Takes one line of cargo's stderr; true when it was the progress bar (not a message).
        pub fn read(&mut self, line: &str) -> bool {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("Compiling ") {
                self.compiling = rest.split_whitespace().next().map(str::to_owned);
                self.changed = true;
                return false;
            }
            // `Building [=====>     ] 37/120: tokio, rand`
            let Some(rest) = line.strip_prefix("Building [") else {
                return false;
            };
            let Some((_, counts)) = rest.split_once("] ") else {
                return true;
            };
            let (counts, names) = counts.split_once(':').unwrap_or((counts, ""));
            if let Some((done, total)) = counts.trim().split_once('/')
                && let (Ok(done), Ok(total)) = (done.parse(), total.parse())
            {
                (self.done, self.total) = (done, total);
                // A build after an edit compiles the graded crate and the checks; more crates
                // left are dependencies, compiled once.
                self.cold |= total.saturating_sub(done) > 3;
                if let Some(name) = names.split(',').next().map(str::trim)
                    && !name.is_empty()
                {
                    self.compiling = Some(name.to_owned());
                }
                self.changed = true;
            }
            true
        }

        /// Whether the build is cold (every dependency is compiled), and how far along it is
        /// (`37/120 crates · tokio`); once per change.
        pub fn changed(&mut self) -> Option<(bool, String)> {
            if !std::mem::take(&mut self.changed) {
                return None;
            }
            let crate_name = self.compiling.as_deref()?;
            let detail = if self.total > 0 {
                crate::lang::words::tf(
                    crate::lang::words::Key::StatusCrates,
                    &[&self.done, &self.total, &crate_name],
                )
            } else {
                crate_name.to_owned()
            };
            Some((self.cold, detail))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Status;

        #[test]
        fn reads_cargo_progress_and_compiling_lines() {
            let mut status = Status::default();
            assert!(!status.read("   Compiling tokio v1.48.0"));
            assert_eq!(status.changed(), Some((false, "tokio".to_owned())));
            assert_eq!(status.changed(), None, "said once per change");
            assert!(status.read("    Building [=======>        ] 37/120: rand, serde"));
            assert_eq!(
                status.changed(),
                Some((true, "37/120 crates · rand".to_owned()))
            );
            assert!(!status.read("warning: unused variable"));
        }

        #[test]
        fn a_build_with_few_crates_left_is_not_called_the_first() {
            let mut status = Status::default();
            assert!(status.read("    Building [=============>  ] 56/58: suite(test)"));
            assert_eq!(
                status.changed(),
                Some((false, "56/58 crates · suite(test)".to_owned()))
            );
        }
    }
}

/// The names of the tests in a test binary.
pub fn list_tests(binary: &Path) -> Result<Vec<String>> {
    let output = Command::new(binary)
        .args(["--list", "--format", "terse"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .with_context(|| format!("listing the tests of {}", binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}
