//! macOS: no subreaper and no enforced address-space limit. While the check runs, the grader
//! keeps the set of its descendants (from the kernel's process list, looked at on every poll)
//! and sums their resident memory, which is the memory limit here. At the end it kills that set,
//! the group, and any orphan whose environment carries the run's mark.

#![allow(unsafe_code)] // A platform file: the system calls the sandbox is built on.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::io;
use std::time::Duration;

/// What opens a file in the desktop's default application.
pub const OPENER: &str = "open";

/// macOS accepts `RLIMIT_AS` but does not enforce it: the watchdog holds memory instead.
pub const ADDRESS_SPACE_LIMIT_HOLDS: bool = false;

/// `ru_maxrss` is in bytes on macOS.
pub const MAXRSS_UNITS_PER_KIB: u64 = 1024;

/// How many times the sweep looks again before it gives up.
const SWEEP_ROUNDS: u32 = 200;

/// Nothing to set up in the grader.
pub fn adopt_orphans() {}

/// Nothing to set in the child.
pub fn in_child_before_exec() -> io::Result<()> {
    Ok(())
}

/// The check's process tree as last seen.
pub struct Family {
    known: BTreeSet<libc::pid_t>,
}

/// One process as the kernel lists it.
struct Process {
    parent: libc::pid_t,
    group: libc::pid_t,
    user: libc::uid_t,
}

impl Family {
    pub fn new(root: libc::pid_t) -> Self {
        Self {
            known: BTreeSet::from([root]),
        }
    }

    /// The summed resident memory of every process of the tree.
    pub fn resident_bytes(&mut self) -> Option<u64> {
        let processes = all_processes();
        self.grow(&processes);
        Some(self.known.iter().map(|&pid| resident_bytes(pid)).sum())
    }

    /// Adds every process whose parent is already in the tree.
    fn grow(&mut self, processes: &BTreeMap<libc::pid_t, Process>) {
        loop {
            let before = self.known.len();
            for (&pid, process) in processes {
                if self.known.contains(&process.parent) {
                    self.known.insert(pid);
                }
            }
            if self.known.len() == before {
                break;
            }
        }
        self.known.retain(|pid| processes.contains_key(pid));
    }

    /// Kills the tree, the group, and every orphan of this user that carries `mark`, until
    /// none is left. The check process itself (`root`) is left for the caller to reap.
    pub fn sweep(&mut self, root: libc::pid_t, mark: &str) {
        // SAFETY: getuid only reads this process's user id.
        let user = unsafe { libc::getuid() };
        for _ in 0..SWEEP_ROUNDS {
            let processes = all_processes();
            self.grow(&processes);
            let targets: Vec<libc::pid_t> = processes
                .iter()
                .filter(|(pid, process)| {
                    **pid != root
                        && process.user == user
                        && (self.known.contains(pid)
                            || process.group == root
                            || (process.parent == 1 && carries(**pid, mark)))
                })
                .map(|(&pid, _)| pid)
                .collect();
            if targets.is_empty() {
                return;
            }
            for pid in targets {
                // SAFETY: kill only sends a signal to a process of this run.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// One of `proc_pidinfo`'s structures for `pid`, or `None` when it cannot be read.
///
/// # Safety
/// `T` must be the plain-data structure that `flavor` fills.
unsafe fn pid_info<T>(pid: libc::pid_t, flavor: libc::c_int) -> Option<T> {
    // SAFETY: the caller names a plain-data structure, for which all-zero is a valid value.
    let mut info: T = unsafe { std::mem::zeroed() };
    let size = size_of::<T>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `info`.
    let filled =
        unsafe { libc::proc_pidinfo(pid, flavor, 0, (&raw mut info).cast::<c_void>(), size) };
    (filled == size).then_some(info)
}

/// Every process the kernel lists, by pid.
fn all_processes() -> BTreeMap<libc::pid_t, Process> {
    // SAFETY: a null buffer asks only for the number of processes.
    let count = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    let mut pids: Vec<libc::pid_t> = vec![0; count.max(0) as usize + 64];
    let bytes = (pids.len() * size_of::<libc::pid_t>()) as libc::c_int;
    // SAFETY: the buffer holds `bytes` bytes of pids.
    let listed = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast::<c_void>(), bytes) };
    pids.truncate(listed.max(0) as usize);
    pids.into_iter()
        .filter_map(|pid| {
            // SAFETY: this flavor fills a proc_bsdinfo.
            let info: libc::proc_bsdinfo = unsafe { pid_info(pid, libc::PROC_PIDTBSDINFO) }?;
            let process = Process {
                parent: info.pbi_ppid as libc::pid_t,
                group: info.pbi_pgid as libc::pid_t,
                user: info.pbi_uid,
            };
            Some((pid, process))
        })
        .collect()
}

/// The resident memory of `pid`, or 0 when it is gone.
fn resident_bytes(pid: libc::pid_t) -> u64 {
    // SAFETY: this flavor fills a proc_taskinfo.
    let info: Option<libc::proc_taskinfo> = unsafe { pid_info(pid, libc::PROC_PIDTASKINFO) };
    info.map_or(0, |info| info.pti_resident_size)
}

/// True when the environment `pid` started with contains `mark`.
fn carries(pid: libc::pid_t, mark: &str) -> bool {
    let mut name = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut arguments = vec![0u8; 256 * 1024];
    let mut length = arguments.len();
    // SAFETY: sysctl writes at most `length` bytes into the buffer and updates `length`.
    let read = unsafe {
        libc::sysctl(
            name.as_mut_ptr(),
            name.len() as libc::c_uint,
            arguments.as_mut_ptr().cast::<c_void>(),
            &mut length,
            std::ptr::null_mut(),
            0,
        )
    };
    read == 0
        && arguments[..length.min(arguments.len())]
            .split(|&byte| byte == 0)
            .any(|entry| entry == mark.as_bytes())
}

/// Whether `pid` is running: it exists and is not a zombie.
#[cfg(test)]
pub fn still_running(pid: libc::pid_t) -> bool {
    all_processes().contains_key(&pid) && resident_bytes(pid) > 0
}

/// This process's children. macOS has no `/proc`; the class run relies on each student's
/// sandbox cleaning up its own tree instead.
pub fn children_of(_parent: libc::pid_t) -> Vec<libc::pid_t> {
    Vec::new()
}

/// Nothing to sweep by command line on macOS: each run's sandbox already swept its tree.
pub fn kill_processes_naming(_dir: &std::path::Path) {}

/// macOS has no parent-death signal; the sandbox's sweep covers a grader that ends normally.
pub fn die_with_parent(_command: &mut std::process::Command) {}
