//! Linux: the grader is the child subreaper of everything it starts, so a process that leaves
//! the check's group (`setsid`, a double fork) is re-parented to the grader instead of init;
//! `/proc` shows each process's environment, where the run's mark finds it.

#![allow(unsafe_code)] // A platform file: the system calls the sandbox is built on.

use std::collections::BTreeSet;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::Once;
use std::time::Duration;

/// What opens a file in the desktop's default application.
pub const OPENER: &str = "xdg-open";

/// The kernel enforces `RLIMIT_AS`.
pub const ADDRESS_SPACE_LIMIT_HOLDS: bool = true;

/// `ru_maxrss` is in KiB on Linux.
pub const MAXRSS_UNITS_PER_KIB: u64 = 1;

/// How many times the sweep looks again before it gives up on a process that will not die.
const SWEEP_ROUNDS: u32 = 500;

/// Makes the grader the subreaper of its descendants (once per grader process).
pub fn adopt_orphans() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    });
}

/// In the forked child: die with the grader, should the grader itself be killed.
pub fn in_child_before_exec() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Nothing to track while the check runs: `/proc` answers at the end.
pub struct Family;

impl Family {
    pub fn new(_root: libc::pid_t) -> Self {
        Self
    }

    /// The kernel holds the address-space limit; no watchdog needed.
    pub fn resident_bytes(&mut self) -> Option<u64> {
        None
    }

    /// Kills every process whose environment carries `mark` (except `root`, which the caller
    /// reaps), then reaps those that became the grader's children, until none is left.
    pub fn sweep(&mut self, root: libc::pid_t, mark: &str) {
        // SAFETY: getpid only reads this process's id.
        let grader = unsafe { libc::getpid() };
        let mut dying: BTreeSet<libc::pid_t> = BTreeSet::new();
        for _ in 0..SWEEP_ROUNDS {
            let marked: Vec<libc::pid_t> = marked_processes(mark)
                .into_iter()
                .filter(|&pid| pid != root)
                .collect();
            for &pid in &marked {
                // SAFETY: kill only sends a signal to a process of this run.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                dying.insert(pid);
            }
            dying.retain(|&pid| match parent_of(pid) {
                None => false,
                Some(parent) if parent == grader => {
                    let mut status = 0;
                    // SAFETY: waitpid reaps our own child, killed above, and writes `status`.
                    unsafe { libc::waitpid(pid, &mut status, 0) };
                    false
                }
                // Still the child of a dying process: it comes to the grader next.
                Some(_) => true,
            });
            if marked.is_empty() && dying.is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The processes (of this user: others' environments are unreadable) that carry `mark`.
fn marked_processes(mark: &str) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environment| {
                environment
                    .split(|&byte| byte == 0)
                    .any(|entry| entry == mark.as_bytes())
            })
        })
        .collect()
}

/// The parent of `pid`, or `None` when it is gone.
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name in parentheses: the state, then the parent's pid.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Whether `pid` is running: it exists and is not a zombie.
#[cfg(test)]
pub fn still_running(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// The processes whose parent is `parent`.
pub fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| parent_of(pid) == Some(parent))
        .collect()
}

/// Kills every process whose command line names a file under `dir`, and waits until they are
/// gone (up to two seconds).
pub fn kill_processes_naming(dir: &Path) {
    // With the separator, so that slot-1 does not match slot-10.
    let needle = dir.join("").into_os_string().into_encoded_bytes();
    let own = std::process::id() as libc::pid_t;
    for _ in 0..100 {
        let mut found = false;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            if pid != own
                && command_line
                    .windows(needle.len())
                    .any(|window| window == needle.as_slice())
            {
                found = true;
                // SAFETY: kill only sends a signal to the process just found.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        if !found {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The command's process gets SIGKILL when this one dies.
pub fn die_with_parent(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls prctl, which is
    // async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
}
