//! Running one untrusted test process: its own process group, limits on memory, output and CPU,
//! a real-time limit, and no process left behind.

use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

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
}

/// The result of one run.
#[derive(Debug)]
pub struct Finished {
    pub ending: Ending,
    pub elapsed: Duration,
    /// The largest resident set the process reached, in KiB.
    pub peak_memory_kib: u64,
}

/// Runs `command` with `limits`, its stdout and stderr going to the two files.
/// Every process of its group is killed before this returns.
pub fn run(mut command: Command, limits: Limits, stdout: &Path, stderr: &Path) -> Result<Finished> {
    let out = File::create(stdout).with_context(|| format!("creating {}", stdout.display()))?;
    let err = File::create(stderr).with_context(|| format!("creating {}", stderr.display()))?;
    command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let Limits {
        wall,
        memory_bytes,
        output_bytes,
    } = limits;
    let cpu_seconds = wall.as_secs() + 2;
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit,
    // which is async-signal-safe; it touches no memory shared with the parent.
    unsafe {
        command.pre_exec(move || {
            set_limit(libc::RLIMIT_AS, memory_bytes)?;
            set_limit(libc::RLIMIT_FSIZE, output_bytes * FILE_SIZE_FACTOR)?;
            set_limit(libc::RLIMIT_CPU, cpu_seconds)?;
            set_limit(libc::RLIMIT_CORE, 0)?;
            Ok(())
        });
    }
    let started = Instant::now();
    let child = command.spawn().context("starting the check process")?;
    let group = child.id() as libc::pid_t;
    let (sender, receiver) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = sender.send(wait_with_usage(group));
    });
    let (ending, peak_memory_kib) = match receiver.recv_timeout(wall) {
        Ok(waited) => {
            let (status, peak) = waited.context("waiting for the check process")?;
            (Ending::Exited(status), peak)
        }
        Err(_) => {
            kill_group(group);
            let peak = receiver
                .recv()
                .ok()
                .and_then(Result::ok)
                .map_or(0, |(_, peak)| peak);
            (Ending::TimedOut, peak)
        }
    };
    let elapsed = started.elapsed();
    // Children the test left running (a forked sleeper, say) go too.
    kill_group(group);
    let _ = waiter.join();
    drop(child);
    Ok(Finished {
        ending,
        elapsed,
        peak_memory_kib,
    })
}

/// Waits for the process `pid` and returns its exit status and peak resident memory (KiB).
fn wait_with_usage(pid: libc::pid_t) -> std::io::Result<(ExitStatus, u64)> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 writes only into the two out-parameters we own.
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0);
            return Ok((ExitStatus::from_raw(status), peak));
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads the struct we pass and nothing else.
    if unsafe { libc::setrlimit(resource, &limit) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn kill_group(group: libc::pid_t) {
    // SAFETY: kill only sends a signal; a negative pid names the process group we created.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// A readable name for the signal that ended a process.
pub fn signal_name(status: &ExitStatus) -> Option<(i32, &'static str)> {
    let signal = status.signal()?;
    let name = match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    };
    Some((signal, name))
}
