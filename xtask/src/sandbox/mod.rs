//! Running one untrusted test process: limits on memory, output and CPU, a real-time limit, and
//! no process of its tree left behind. This module is the grader's one platform layer: the rest
//! of the grader calls [`run`], [`abnormal_end`], [`RawTerminal`], [`terminal_understands_ansi`],
//! [`opener`], [`running_as_root`], [`processor_time`] (for the benchmark), [`link_folder`] and
//! [`remove_folder_link`] (for `cargo xtask`'s fast way in), [`BuildChild`] for a build's
//! cargo or rustc, [`end_on_stop`], [`interrupt`] and [`quit`] (for `watch`: see `interrupt.rs`,
//! how Ctrl-C ends a grading at once) and, for a class run, [`catch_stop_requests`],
//! [`stop_requested`], [`kill_own_children`], [`kill_processes_naming`] and [`die_with_parent`],
//! and never asks which system it is on.
//!
//! What holds each guarantee, by platform:
//! - Linux: `setrlimit` (address space, file size, CPU time), the check's own process group, and
//!   the grader as child subreaper: every descendant, even one that left the group with `setsid`
//!   or double-forked, is found by the mark in its environment and killed.
//! - macOS: the file-size and CPU-time limits and the process group as on Linux, but the kernel
//!   ignores the address-space limit, so a watchdog sums the resident memory of the process tree
//!   and kills the tree above the limit; cleanup kills the tree it saw, the group, and orphans
//!   that carry the mark.
//! - Windows: a Job Object holds the whole tree from its first instruction: a memory limit on
//!   the job, and the job is killed (and closed with kill-on-close) at the end. Files have no
//!   kernel cap there; the watchdog below stops the tree once an output file passes the cap or
//!   a file in the check's working folder passes `FILE_SIZE_FACTOR` times it.

use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

#[cfg(unix)]
#[path = "unix.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

mod interrupt;

pub use interrupt::{catch_stop_requests, end_on_stop, interrupt, quit};
pub use os::{
    RawTerminal, die_with_parent, kill_own_children, kill_processes_naming, link_folder, opener,
    processor_time, remove_folder_link, running_as_root, stop_requested, terminal_columns,
    terminal_understands_ansi,
};

/// A build's process (cargo, or rustc replayed), which a stop (Ctrl-C) kills with every
/// process it started. It is the [`Child`] it derefs to.
pub struct BuildChild {
    /// Dropped first: the registration may refer to the child's handle.
    _registered: interrupt::Registered,
    child: Child,
}

impl BuildChild {
    /// Starts `command` as a build's process.
    pub fn spawn(command: &mut Command) -> std::io::Result<Self> {
        let (child, registered) = os::spawn_build(command)?;
        Ok(Self {
            _registered: registered,
            child,
        })
    }
}

impl Deref for BuildChild {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for BuildChild {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

/// What a sandboxed process may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub wall: Duration,
    pub memory_bytes: u64,
    /// The most a check may print (stdout and stderr each). Any file the process writes (a
    /// check's SQLite database, say) may grow to `FILE_SIZE_FACTOR` times this before the
    /// kernel stops it; the grader compares the output files with the limit itself.
    pub output_bytes: u64,
}

/// How much larger than the output limit any one file of a check may grow.
pub const FILE_SIZE_FACTOR: u64 = 8;

/// How the process ended.
#[derive(Debug)]
pub enum Ending {
    Exited(ExitStatus),
    /// Killed by the grader after its real-time limit.
    TimedOut,
    /// Stopped by the grader once what it had written decided the run (see [`run_until`]).
    Settled,
}

/// The result of one run.
#[derive(Debug)]
pub struct Finished {
    pub ending: Ending,
    pub elapsed: Duration,
    /// The largest resident set the process reached, in KiB.
    pub peak_memory_kib: u64,
}

/// Why the system (or the grader) ended a process abnormally, in the same words on every
/// platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A file grew past its limit (SIGXFSZ, or the watchdog where the kernel has no limit).
    FileTooLarge,
    /// The CPU-time limit ran out (SIGXCPU). Windows has no such limit: the time limit holds.
    #[cfg_attr(windows, expect(dead_code, reason = "only Unix limits CPU time"))]
    CpuTime,
    /// The process aborted (`std::process::abort`, a failed allocation, a panic in a panic).
    Abort,
    /// Killed from outside: by the grader's memory watchdog, or by the system for want of memory.
    Killed,
    /// Anything else, described for the learner ("SIGSEGV (signal 11)").
    Other(String),
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::FileTooLarge => write!(f, "a file grew past its size limit"),
            Cause::CpuTime => write!(f, "its CPU time ran out"),
            Cause::Abort => write!(f, "it aborted"),
            Cause::Killed => write!(f, "it was killed (out of memory, or from outside)"),
            Cause::Other(description) => write!(f, "{description}"),
        }
    }
}

/// Why the process that ended with `status` was stopped, or `None` for an ordinary exit.
pub fn abnormal_end(status: &ExitStatus) -> Option<Cause> {
    os::abnormal_end(status)
}

/// The shortest pause between two looks at a running process; it doubles up to `POLL_MAX`.
/// A look costs one non-blocking wait, and a check that ends is seen within `POLL_MAX`.
const POLL_MIN: Duration = Duration::from_micros(250);
const POLL_MAX: Duration = Duration::from_millis(2);

/// How often the watchdog looks at the output files and the tree's memory (where the kernel
/// does not cap them itself): it reads files and, on macOS, every process of the tree.
const WATCH_EVERY: Duration = Duration::from_millis(20);

/// Runs `command` with `limits`, its stdout and stderr going to the two files.
/// Every process of its tree is killed before this returns.
pub fn run(command: Command, limits: Limits, stdout: &Path, stderr: &Path) -> Result<Finished> {
    run_until(command, limits, stdout, stderr, &mut |_| false)
}

/// Runs `command` as [`run`] does, and stops it early, as [`Ending::Settled`], once `settled`
/// says that its stdout so far decides the run. `settled` reads the file each time the watchdog
/// looks, so the process is stopped within `WATCH_EVERY` of the deciding line.
pub fn run_until(
    mut command: Command,
    limits: Limits,
    stdout: &Path,
    stderr: &Path,
    settled: &mut dyn FnMut(&Path) -> bool,
) -> Result<Finished> {
    let out = File::create(stdout).with_context(|| format!("creating {}", stdout.display()))?;
    let err = File::create(stderr).with_context(|| format!("creating {}", stderr.display()))?;
    command.stdin(Stdio::null()).stdout(out).stderr(err);
    let workdir = command.get_current_dir().map(Path::to_path_buf);
    let started = Instant::now();
    let mut tree = os::Tree::spawn(command, limits).context("starting the check process")?;
    let mut pause = POLL_MIN;
    let mut stopped = false;
    let mut watched = started;
    let ending = loop {
        if let Some(status) = tree.try_wait().context("waiting for the check process")? {
            break Ending::Exited(status);
        }
        let elapsed = started.elapsed();
        if elapsed >= limits.wall {
            break Ending::TimedOut;
        }
        if !stopped && watched.elapsed() >= WATCH_EVERY {
            watched = Instant::now();
            if settled(stdout) {
                break Ending::Settled;
            }
            let over = if files_over(&[stdout, stderr], workdir.as_deref(), limits) {
                Some(Cause::FileTooLarge)
            } else if memory_over(&mut tree, limits) {
                Some(Cause::Killed)
            } else {
                None
            };
            if let Some(cause) = over {
                // The tree ends now; its exit status is read on the next turn.
                tree.kill_all(cause);
                stopped = true;
            }
        }
        std::thread::sleep(pause.min(limits.wall - elapsed));
        pause = (pause * 2).min(POLL_MAX);
    };
    let elapsed = started.elapsed();
    // Children the test left running (a forked sleeper, say) go too.
    tree.kill_all(Cause::Killed);
    let peak_memory_kib = tree.finish();
    Ok(Finished {
        ending,
        elapsed,
        peak_memory_kib,
    })
}

/// Where the kernel has no file-size limit: true when an output file passed the output cap, or
/// a file in the working folder passed `FILE_SIZE_FACTOR` times it.
fn files_over(outputs: &[&Path], workdir: Option<&Path>, limits: Limits) -> bool {
    if os::KERNEL_CAPS_FILES {
        return false;
    }
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let file_limit = limits.output_bytes * FILE_SIZE_FACTOR;
    outputs.iter().any(|file| size(file) > limits.output_bytes)
        || workdir
            .and_then(|dir| std::fs::read_dir(dir).ok())
            .is_some_and(|entries| {
                entries
                    .flatten()
                    .any(|entry| size(&entry.path()) > file_limit)
            })
}

/// True when the tree's memory passed the limit where the kernel does not enforce it.
fn memory_over(tree: &mut os::Tree, limits: Limits) -> bool {
    tree.watched_memory_bytes()
        .is_some_and(|bytes| bytes > limits.memory_bytes)
}

/// For tests elsewhere in the grader: the status of a process that exited with `code`.
#[cfg(test)]
pub fn exited_with(code: i32) -> ExitStatus {
    os::exited_with(code)
}

#[cfg(test)]
mod tests;
