//! Runs the tests of a compiled harness, each in its own sandboxed process, and reads their
//! outcomes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::lang::words::{Key, t, tf};
use crate::report::model::Outcome;
use crate::sandbox::{self, Cause, Ending, Finished, Limits};
use crate::status::{Activity, seconds};

/// One test to run.
#[derive(Debug, Clone)]
pub struct Planned {
    pub name: String,
    /// The name the learner knows it by (a check's id), for the status line.
    pub label: String,
    pub limits: Limits,
}

/// One test's result.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub name: String,
    pub outcome: Outcome,
    pub elapsed: Duration,
    /// Peak resident memory of the process the test ran in, in KiB.
    pub peak_memory_kib: u64,
    /// True when the time and memory are the run of all tests together (its share of the time,
    /// the whole process's peak), not this test's own.
    pub shared: bool,
}

/// What the runner needs to know about the checks' sources: which panics are the checks' own
/// (the rest are the graded code's), and where `support::skip` lives.
#[derive(Debug, Clone)]
pub struct Sources {
    pub checks_dirs: Vec<PathBuf>,
    /// `xtask/checks/support.rs`: a panic there that starts with [`SKIP_MARKER`] is a skip.
    pub support_file: PathBuf,
}

/// How `support::skip` starts its panic message (keep in step with `xtask/checks/support.rs`).
pub const SKIP_MARKER: &str = "workbook-skip: ";

/// Runs every planned test and returns the results in plan order.
///
/// All tests first run together in one process, which is fast (unless there are no more tests
/// than `parallel`); every test that did not pass there (failed, hung, crashed, skipped, or
/// never reported) then runs alone in its own process, `parallel` at a time, so that its
/// outcome and message are its own.
///
/// The run together stops after `together_wall` (at most 10 s): it only decides which tests
/// need a run of their own, so a short limit changes no outcome, and a hung test costs that
/// limit, not the longest limit of any test, before it runs alone under its own.
///
/// `status` says which step runs, how long it may take at most, and which tests are running
/// alone, each with its time against its limit.
#[allow(
    clippy::too_many_arguments,
    reason = "one call site, each argument a separate input"
)]
pub fn run_all(
    binary: &Path,
    plan: &[Planned],
    available: &[String],
    scratch: &Path,
    sources: &Sources,
    parallel: usize,
    together_wall: Duration,
    status: &Activity,
) -> Result<Vec<TestRun>> {
    std::fs::create_dir_all(scratch).with_context(|| format!("creating {}", scratch.display()))?;
    // With no more tests than parallel runs, each runs alone at once: a run together first
    // could only add time.
    let passed_together = if plan.len() <= parallel.max(1) {
        HashMap::new()
    } else {
        let wall = together_wall.min(MAX_TOGETHER);
        status.next(tf(
            Key::StatusTogether,
            &[&what_runs(&plan.iter().collect::<Vec<_>>()), &seconds(wall)],
        ));
        run_together(binary, plan, scratch, parallel, wall)?
    };
    let alone: Vec<&Planned> = plan
        .iter()
        .filter(|p| !passed_together.contains_key(&p.name) && available.contains(&p.name))
        .collect();
    if !alone.is_empty() {
        let workers = parallel.max(1).min(alone.len());
        let limits: Vec<Duration> = alone.iter().map(|p| p.limits.wall).collect();
        status.next(tf(
            Key::StatusAlone,
            &[
                &what_runs(&alone),
                &workers,
                &seconds(longest_schedule(&limits, workers)),
            ],
        ));
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<TestRun>>>> =
        Mutex::new(plan.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..parallel.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(planned) = plan.get(index) else {
                        break;
                    };
                    let result = if let Some((elapsed, peak)) = passed_together.get(&planned.name) {
                        Ok(TestRun {
                            name: planned.name.clone(),
                            outcome: Outcome::Passed,
                            elapsed: *elapsed,
                            peak_memory_kib: *peak,
                            shared: true,
                        })
                    } else if available.contains(&planned.name) {
                        status.begin(&planned.label, planned.limits.wall);
                        let run = run_one(binary, planned, index, scratch, sources);
                        status.end(&planned.label);
                        run
                    } else {
                        Ok(TestRun {
                            name: planned.name.clone(),
                            outcome: Outcome::Missing,
                            elapsed: Duration::ZERO,
                            peak_memory_kib: 0,
                            shared: false,
                        })
                    };
                    results.lock().expect("a worker panicked")[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("a worker panicked")
        .into_iter()
        .map(|result| result.expect("every planned test ran"))
        .collect()
}

/// The longest the run together may take.
const MAX_TOGETHER: Duration = Duration::from_secs(10);

/// `6 checks`, `1 visible test`, `6 checks and 2 visible tests`: what `runs` are, as the
/// learner knows them (a visible test's label names its file under `tests/`).
fn what_runs(runs: &[&Planned]) -> String {
    let tests = runs
        .iter()
        .filter(|p| p.label.starts_with("tests/"))
        .count();
    let count = |count: usize, one: Key, many: Key| match count {
        1 => t(one).to_owned(),
        _ => tf(many, &[&count]),
    };
    let checks = |n| count(n, Key::OneCheck, Key::ManyChecks);
    let visible = |n| count(n, Key::OneVisibleTest, Key::ManyVisibleTests);
    match (runs.len() - tests, tests) {
        (n, 0) => checks(n),
        (0, n) => visible(n),
        (c, v) => tf(Key::ChecksAndTests, &[&checks(c), &visible(v)]),
    }
}

/// How long runs with these time limits take at most when `workers` run them at once, each
/// taking the next as soon as it is free (as [`run_all`] does).
fn longest_schedule(limits: &[Duration], workers: usize) -> Duration {
    let mut free_at = vec![Duration::ZERO; workers.max(1)];
    for limit in limits {
        let first_free = free_at.iter_mut().min().expect("at least one worker");
        *first_free += *limit;
    }
    free_at.into_iter().max().unwrap_or_default()
}

/// Runs every planned test in one process and returns the names of those that passed,
/// each with an equal share of the run's time and the process's peak memory.
fn run_together(
    binary: &Path,
    plan: &[Planned],
    scratch: &Path,
    parallel: usize,
    wall: Duration,
) -> Result<HashMap<String, (Duration, u64)>> {
    let limits = Limits {
        wall,
        memory_bytes: plan
            .iter()
            .map(|p| p.limits.memory_bytes)
            .max()
            .unwrap_or_default(),
        output_bytes: plan
            .iter()
            .map(|p| p.limits.output_bytes)
            .max()
            .unwrap_or_default(),
    };
    // Only the planned tests: a merged harness also holds the graded crate's own unit tests.
    let names: Vec<&str> = std::iter::once("--exact")
        .chain(plan.iter().map(|planned| planned.name.as_str()))
        .collect();
    let run = run_binary(binary, &names, parallel, limits, scratch, "all", RunTo::End)?;
    if run.flooded || run.has_forged_verdicts() {
        // Every test runs alone again, where the flood (or the printed verdict) is pinned on
        // the test that made it.
        return Ok(HashMap::new());
    }
    let share = run.finished.elapsed / run.passed.len().max(1) as u32;
    let peak = run.finished.peak_memory_kib;
    Ok(run
        .passed
        .into_iter()
        .map(|name| (name, (share, peak)))
        .collect())
}

/// One run of a libtest binary: how the process ended and which tests it reported.
#[derive(Debug)]
pub struct LibtestRun {
    pub finished: Finished,
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    /// It printed more than its output limit (and was stopped, or is judged as if it were).
    pub flooded: bool,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// How far a test binary runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTo {
    /// Every test runs.
    End,
    /// The run stops as soon as a test has failed: for a run that only asks whether every test
    /// passes (a learner's suite on a mutant), where a hung test would otherwise hold the
    /// answer until the time limit.
    FirstFailure,
}

/// Runs the libtest binary `binary` in the sandbox, in a fresh folder `scratch/<name>`, with
/// `extra` arguments (a filter, say) and `threads` test threads, and reads its results. The one
/// executor of the grader: hidden checks, visible tests and learner suites all run through it.
pub fn run_binary(
    binary: &Path,
    extra: &[&str],
    threads: usize,
    limits: Limits,
    scratch: &Path,
    name: &str,
    run_to: RunTo,
) -> Result<LibtestRun> {
    let workdir = fresh_dir(&scratch.join(name))?;
    let stdout = scratch.join(format!("{name}.stdout"));
    let stderr = scratch.join(format!("{name}.stderr"));
    let mut command = test_command(binary, &workdir);
    command.args(extra);
    // --nocapture: output goes to the capped file, so a flood stops the run instead of
    // piling up in memory and passing unseen.
    command.args([
        "--nocapture",
        "--test-threads",
        &threads.max(1).to_string(),
        "--color",
        "never",
    ]);
    let finished = match run_to {
        RunTo::End => sandbox::run(command, limits, &stdout, &stderr)?,
        RunTo::FirstFailure => {
            let mut watch = FailureWatch::default();
            sandbox::run_until(command, limits, &stdout, &stderr, &mut |stdout: &Path| {
                watch.saw_failure(stdout)
            })?
        }
    };
    let flooded = printed_too_much(&[&stdout, &stderr], limits);
    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    if !flooded {
        for line in read_head(&stdout, limits.output_bytes).lines() {
            match libtest_result(line) {
                Some((test, true)) => passed.push(test.to_owned()),
                Some((test, false)) => failed.push(test.to_owned()),
                None => {}
            }
        }
    }
    Ok(LibtestRun {
        finished,
        passed,
        failed,
        flooded,
        stdout,
        stderr,
    })
}

impl LibtestRun {
    /// True when some test has more than one verdict line. libtest prints one per test it runs,
    /// so the others were printed by the graded code (its output shares stdout with libtest's):
    /// a forged `test … ok` can then not be told from a real one.
    pub fn has_forged_verdicts(&self) -> bool {
        let mut seen = std::collections::HashSet::new();
        !self
            .passed
            .iter()
            .chain(&self.failed)
            .all(|test| seen.insert(test.as_str()))
    }
}

/// The test a libtest result line names (`test suite::a ... ok`), and whether it passed.
fn libtest_result(line: &str) -> Option<(&str, bool)> {
    let rest = line.strip_prefix("test ")?;
    if let Some(test) = rest.strip_suffix(" ... ok") {
        Some((test, true))
    } else {
        rest.strip_suffix(" ... FAILED").map(|test| (test, false))
    }
}

/// Reads a libtest binary's growing stdout a piece at a time (each look reads only what is new)
/// and tells when a test has been reported failed.
#[derive(Default)]
struct FailureWatch {
    /// How much of the file has been read.
    read: u64,
    /// The last line read, while it has no end yet.
    partial: Vec<u8>,
}

impl FailureWatch {
    fn saw_failure(&mut self, stdout: &Path) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut file) = std::fs::File::open(stdout) else {
            return false;
        };
        let before = self.partial.len();
        if file.seek(SeekFrom::Start(self.read)).is_err()
            || file.read_to_end(&mut self.partial).is_err()
        {
            self.partial.truncate(before);
            return false;
        }
        self.read += (self.partial.len() - before) as u64;
        let Some(end) = self.partial.iter().rposition(|&byte| byte == b'\n') else {
            return false;
        };
        let lines: Vec<u8> = self.partial.drain(..=end).collect();
        String::from_utf8_lossy(&lines)
            .lines()
            .any(|line| matches!(libtest_result(line), Some((_, false))))
    }
}

/// A test process's command, with the environment every test gets.
fn test_command(binary: &Path, workdir: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .current_dir(workdir)
        .env("RUST_BACKTRACE", "0")
        .env("INSTA_UPDATE", "no")
        .env("NO_COLOR", "1")
        // The temporary folder by its Unix and its Windows names.
        .env("TMPDIR", workdir)
        .env("TMP", workdir)
        .env("TEMP", workdir)
        .env_remove("RUSTC_BOOTSTRAP");
    command
}

/// An empty folder at `dir`.
fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

fn run_one(
    binary: &Path,
    planned: &Planned,
    index: usize,
    scratch: &Path,
    sources: &Sources,
) -> Result<TestRun> {
    let run = run_binary(
        binary,
        &["--exact", &planned.name],
        1,
        planned.limits,
        scratch,
        &format!("{index:03}"),
        RunTo::End,
    )?;
    let outcome = if run.flooded {
        Outcome::OutputFlood {
            limit_bytes: planned.limits.output_bytes,
        }
    } else if run.passed.len() + run.failed.len() > 1 {
        Outcome::Failed {
            message: t(Key::PrintedAVerdict).to_owned(),
            // Said as it is: the message names the learner's code itself.
            location: None,
            in_graded_code: false,
        }
    } else {
        let out = read_head(&run.stdout, 256 * 1024);
        let err = read_head(&run.stderr, 256 * 1024);
        interpret(&run.finished.ending, planned.limits, &out, &err, sources)
    };
    Ok(TestRun {
        name: planned.name.clone(),
        outcome,
        elapsed: run.finished.elapsed,
        peak_memory_kib: run.finished.peak_memory_kib,
        shared: false,
    })
}

/// True when any of the output files is over the output limit.
fn printed_too_much(files: &[&Path], limits: Limits) -> bool {
    files
        .iter()
        .any(|file| std::fs::metadata(file).is_ok_and(|meta| meta.len() > limits.output_bytes))
}

pub fn read_head(path: &Path, limit: u64) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(limit).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Turns how the process ended and what it printed into an outcome.
pub fn interpret(
    ending: &Ending,
    limits: Limits,
    stdout: &str,
    stderr: &str,
    sources: &Sources,
) -> Outcome {
    let status = match ending {
        Ending::TimedOut => {
            return Outcome::TimedOut {
                limit_ms: limits.wall.as_millis() as u64,
            };
        }
        // Stopped once it reported a failed test: the panic below says what failed.
        Ending::Settled => None,
        Ending::Exited(status) => Some(status),
    };
    if status.is_some_and(ExitStatus::success) {
        return if stdout.contains("1 passed") {
            Outcome::Passed
        } else {
            Outcome::Missing
        };
    }
    if let Some(cause) = status.and_then(sandbox::abnormal_end) {
        return match cause {
            Cause::FileTooLarge => Outcome::OutputFlood {
                limit_bytes: limits.output_bytes,
            },
            Cause::CpuTime => Outcome::TimedOut {
                limit_ms: limits.wall.as_millis() as u64,
            },
            _ if stderr.contains("has overflowed its stack") => Outcome::Crashed {
                reason: t(Key::StackOverflowed).to_owned(),
            },
            _ if stderr.contains("memory allocation of") => Outcome::Crashed {
                reason: tf(
                    Key::OutOfMemory,
                    &[
                        &first_line_containing(stderr, "memory allocation of"),
                        &(limits.memory_bytes / (1024 * 1024)),
                    ],
                ),
            },
            Cause::Abort => Outcome::Crashed {
                reason: t(Key::ProcessAborted).to_owned(),
            },
            Cause::Killed => Outcome::Crashed {
                reason: tf(
                    Key::ProcessKilledMemory,
                    &[&(limits.memory_bytes / (1024 * 1024))],
                ),
            },
            Cause::Other(description) => Outcome::Crashed {
                reason: tf(Key::ProcessKilledBy, &[&description]),
            },
        };
    }
    if let Some(panic) = first_panic(stderr) {
        let support = sources.support_file.display().to_string();
        let from_support = panic
            .location
            .as_ref()
            .is_some_and(|location| location.starts_with(&support));
        if from_support && let Some(reason) = panic.message.strip_prefix(SKIP_MARKER) {
            return Outcome::Skipped {
                reason: reason.trim().to_owned(),
            };
        }
        let in_graded_code = panic.location.as_ref().is_some_and(|location| {
            !sources
                .checks_dirs
                .iter()
                .any(|dir| Path::new(location).starts_with(dir))
        });
        return Outcome::Failed {
            message: panic.message,
            location: panic.location,
            in_graded_code,
        };
    }
    Outcome::Crashed {
        reason: match status.and_then(ExitStatus::code) {
            Some(code) => tf(Key::ProcessExited, &[&code]),
            None => t(Key::ProcessEndedWithoutResult).to_owned(),
        },
    }
}

fn first_line_containing<'a>(text: &'a str, needle: &'a str) -> &'a str {
    text.lines()
        .find(|line| line.contains(needle))
        .unwrap_or(needle)
        .trim()
}

/// A panic as the Rust runtime printed it.
#[derive(Debug, PartialEq)]
pub struct Panic {
    pub location: Option<String>,
    pub message: String,
}

/// The first panic report in `stderr`: `thread 'x' panicked at file:line:col:` then the message.
pub fn first_panic(stderr: &str) -> Option<Panic> {
    let start = stderr.find("thread '")?;
    let rest = &stderr[start..];
    let header_end = rest.find('\n').unwrap_or(rest.len());
    let header = &rest[..header_end];
    let location = header
        .split_once("panicked at ")
        .map(|(_, location)| location.trim_end_matches(':').to_owned());
    let body = rest.get(header_end + 1..).unwrap_or_default();
    let mut message = Vec::new();
    for line in body.lines() {
        if line.starts_with("note: run with `RUST_BACKTRACE")
            || line.starts_with("stack backtrace:")
            || line.starts_with("thread '")
        {
            break;
        }
        message.push(line);
    }
    let mut message = message.join("\n").trim().to_owned();
    if message.len() > 4_000 {
        let cut = (0..=4_000)
            .rev()
            .find(|&i| message.is_char_boundary(i))
            .unwrap_or(0);
        message.truncate(cut);
        message.push_str(" …");
    }
    Some(Panic { location, message })
}

/// Output any one check may write before it is stopped.
pub const OUTPUT_LIMIT_BYTES: u64 = 8 * 1024 * 1024;

/// Real time each visible test may take when it runs alone (the book's how-to-use page says so).
pub const VISIBLE_TEST_LIMIT: Duration = Duration::from_secs(10);

/// Address space of a process that runs the learner's own tests (visible tests, a suite).
pub const TESTS_MEMORY_BYTES: u64 = 1024 * 1024 * 1024;

#[cfg(test)]
mod tests {
    #[test]
    fn a_failure_is_seen_once_its_line_is_whole_and_each_look_reads_only_what_is_new() {
        let dir = std::env::temp_dir().join(format!("failure-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stdout = dir.join("stdout");
        let mut watch = super::FailureWatch::default();
        assert!(!watch.saw_failure(&stdout), "no file yet");
        std::fs::write(
            &stdout,
            "running 2 tests\ntest suite::a ... ok\ntest suite::b ... FAI",
        )
        .unwrap();
        assert!(!watch.saw_failure(&stdout), "the line has no end yet");
        let mut text = std::fs::read_to_string(&stdout).unwrap();
        text.push_str("LED\n");
        std::fs::write(&stdout, &text).unwrap();
        assert!(watch.saw_failure(&stdout));
        assert_eq!(watch.read, text.len() as u64);
        assert!(!watch.saw_failure(&stdout), "an old line is not read again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    use super::*;

    #[test]
    fn the_longest_schedule_gives_each_run_to_the_first_free_worker() {
        let two = Duration::from_secs(2);
        assert_eq!(longest_schedule(&[two; 6], 2), Duration::from_secs(6));
        assert_eq!(longest_schedule(&[two; 6], 1), Duration::from_secs(12));
        let ten = Duration::from_secs(10);
        assert_eq!(longest_schedule(&[ten, two, two, two], 2), ten);
        assert_eq!(longest_schedule(&[], 2), Duration::ZERO);
    }

    #[test]
    fn reads_a_panic_report() {
        let stderr = "noise\nthread 'jitter::uniform' panicked at /w/xtask/checks/ch08/jitter.rs:10:5:\nspread evenly\nsecond line\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let panic = first_panic(stderr).unwrap();
        assert_eq!(
            panic.location.as_deref(),
            Some("/w/xtask/checks/ch08/jitter.rs:10:5")
        );
        assert_eq!(panic.message, "spread evenly\nsecond line");
    }

    #[test]
    fn a_skip_from_support_is_skipped_and_a_lookalike_elsewhere_fails() {
        let sources = Sources {
            checks_dirs: vec![PathBuf::from("/w/xtask/checks")],
            support_file: PathBuf::from("/w/xtask/checks/support.rs"),
        };
        let limits = Limits {
            wall: Duration::from_secs(1),
            memory_bytes: 1 << 30,
            output_bytes: 1 << 20,
        };
        let status = sandbox::exited_with(101);
        let panic_at = |location: &str| {
            format!("thread 'pg::claims' panicked at {location}:\n{SKIP_MARKER}no server; set X\n")
        };
        let skipped = interpret(
            &Ending::Exited(status),
            limits,
            "",
            &panic_at("/w/xtask/checks/support.rs:90:5"),
            &sources,
        );
        assert_eq!(skipped.status(), "skipped");
        let faked = interpret(
            &Ending::Exited(status),
            limits,
            "",
            &panic_at("/w/exercises/ch18/src/lib.rs:3:5"),
            &sources,
        );
        assert_eq!(
            faked.status(),
            "failed",
            "only support::skip can skip a check"
        );
    }

    #[test]
    fn no_panic_no_report() {
        assert_eq!(first_panic("running 1 test\n"), None);
    }
}
