//! Leaving nothing behind. A student's grader runs in a process group of its own, and its checks
//! in groups of their own again, so stopping a class run takes more than the default signal
//! action: on Ctrl-C, SIGTERM or SIGHUP every student's grading is killed with everything it
//! started before the run exits. The results written so far stay, and the next run continues
//! from them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The signal that asked the run to stop, or 0.
static STOP: AtomicI32 = AtomicI32::new(0);

/// The slot folders this run grades in.
static SLOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remember(signal: libc::c_int) {
    STOP.store(signal, Ordering::SeqCst);
}

/// Catches the signals that stop a run, and stops it cleanly when one comes.
pub fn on_stop_kill_everything() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(
                signal,
                remember as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let signal = STOP.load(Ordering::SeqCst);
            if signal != 0 {
                for child in children_of(std::process::id()) {
                    // SAFETY: kill only sends signals: to the child's process group (each
                    // student's grader leads one) and to the child itself.
                    unsafe {
                        libc::kill(-child, libc::SIGKILL);
                        libc::kill(child, libc::SIGKILL);
                    }
                }
                for slot in SLOTS.lock().map(|slots| slots.clone()).unwrap_or_default() {
                    kill_leftovers(&slot);
                }
                eprintln!(
                    "\nStopped. The students graded so far are kept; run the same command again to \
                     grade the others."
                );
                std::process::exit(128 + signal);
            }
        }
    });
}

/// True once a signal asked the run to stop: a grading that ends now was killed by the stop, and
/// its result must not be kept.
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst) != 0
}

/// Notes a slot folder this run grades in, to clean up after it when stopped.
pub fn holding(slot: &Path) {
    if let Ok(mut slots) = SLOTS.lock() {
        slots.push(slot.to_path_buf());
    }
}

/// The processes whose parent is `parent`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<libc::pid_t> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (name) state ppid …`: the name may hold spaces, so read after the last ')'.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if ppid == Some(parent) {
            children.push(pid);
        }
    }
    children
}

#[cfg(not(target_os = "linux"))]
fn children_of(_parent: u32) -> Vec<libc::pid_t> {
    Vec::new()
}

/// Kills every process whose command line names a file of the slot `dir` — a build, a check
/// binary — and waits until they are gone: nothing of one student may run on into the next
/// student's grading (a build finishing late could even make cargo take the next student's
/// files for already built).
#[cfg(target_os = "linux")]
pub fn kill_leftovers(dir: &Path) {
    // With the separator, so that slot-1 does not match slot-10.
    let needle = dir.join("").into_os_string().into_encoded_bytes();
    let own = std::process::id();
    for _ in 0..100 {
        let mut found = false;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            if pid != own
                && cmdline
                    .windows(needle.len())
                    .any(|w| w == needle.as_slice())
            {
                found = true;
                // SAFETY: kill only sends a signal to the process we just found.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            }
        }
        if !found {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(not(target_os = "linux"))]
pub fn kill_leftovers(_dir: &Path) {}
