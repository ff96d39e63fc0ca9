//! Leaving nothing behind. A student's grader runs in a process group of its own, and its checks
//! in groups of their own again, so stopping a class run takes more than the default signal
//! action: on Ctrl-C, SIGTERM or SIGHUP every student's grading is killed with everything it
//! started before the run exits. The results written so far stay, and the next run continues
//! from them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::sandbox;

/// The slot folders this run grades in.
static SLOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Catches the requests that stop a run (Ctrl-C, SIGTERM, SIGHUP), and stops it cleanly when one
/// comes: every student's grading is killed with what it started, then the run exits.
#[allow(
    clippy::disallowed_methods,
    reason = "the watching thread ends the whole run, which main is still waiting on"
)]
pub fn on_stop_kill_everything() {
    sandbox::catch_stop_requests();
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if let Some(exit_code) = sandbox::stop_requested() {
                sandbox::kill_own_children();
                for slot in SLOTS.lock().map(|slots| slots.clone()).unwrap_or_default() {
                    kill_leftovers(&slot);
                }
                eprintln!(
                    "\n{}",
                    crate::lang::words::t(crate::lang::words::Key::StoppedClass)
                );
                std::process::exit(exit_code);
            }
        }
    });
}

/// True once a request asked the run to stop: a grading that ends now was killed by the stop,
/// and its result must not be kept.
pub fn stopping() -> bool {
    sandbox::stop_requested().is_some()
}

/// Notes a slot folder this run grades in, to clean up after it when stopped.
pub fn holding(slot: &Path) {
    if let Ok(mut slots) = SLOTS.lock() {
        slots.push(slot.to_path_buf());
    }
}

/// Kills every process whose command line names a file of the slot `dir` (a build, a check
/// binary) and waits until they are gone: nothing of one student may run on into the next
/// student's grading (a build finishing late could even make cargo take the next student's
/// files for already built).
pub fn kill_leftovers(dir: &Path) {
    sandbox::kill_processes_naming(dir);
}
