//! Stopping at once. A grading runs builds (cargo, a replayed rustc) and checks, each in a
//! process tree of its own that a Ctrl-C at the terminal does not reach. So the sandbox keeps
//! how to kill every tree it runs, and a thread of its own waits for a request to stop: Ctrl-C
//! (SIGINT, or the console's Ctrl-C on Windows), SIGTERM, SIGHUP, or a key reader's
//! [`interrupt`] or [`quit`]. When one comes, that thread kills every tree, restores the
//! terminal, lets the command say goodbye, and ends the process. After Ctrl-C the process
//! ends as Ctrl-C would have ended it (killed by SIGINT on Unix, so that a shell loop or a
//! script running the grader stops too; `STATUS_CONTROL_C_EXIT` on Windows).
//!
//! The signal handler itself only notes the request and wakes that thread (see the platform
//! files); everything else runs on the thread. Any process that starts a build or a check
//! through the sandbox watches for stops this way, unless it catches them itself
//! ([`catch_stop_requests`], the class run's own clean-up).

use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

use super::os;

/// What the process was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Ctrl-C: stop now.
    Interrupted,
    /// The learner's quit key: stop now, as a normal end.
    Quit,
    /// SIGTERM or SIGHUP: stop now, without a word (the terminal may be gone).
    Terminated,
}

/// The request code for a quit key; signals are their own numbers.
pub(super) const QUIT: i32 = -1;

/// Every tree the sandbox runs now, each with how to kill it.
struct Running {
    next: u64,
    trees: Vec<(u64, os::Kill)>,
    /// Set once a stop began: nothing new starts after it.
    stopping: bool,
}

static RUNNING: Mutex<Running> = Mutex::new(Running {
    next: 0,
    trees: Vec::new(),
    stopping: false,
});

fn running() -> MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the command says when it is stopped (see [`end_on_stop`]).
type Farewell = Box<dyn Fn() + Send>;
static FAREWELL: Mutex<Option<Farewell>> = Mutex::new(None);

/// Set when the caller handles stop requests itself.
static CALLER_HANDLES: AtomicBool = AtomicBool::new(false);

/// A tree the sandbox runs, registered until this is dropped.
pub(super) struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        running().trees.retain(|(id, _)| *id != self.0);
    }
}

/// Starts a tree with `spawn` (which returns it and how to kill it) and keeps it registered
/// until the returned guard is dropped. Once a stop has begun nothing new starts: the calling
/// thread waits for the process to end.
pub(super) fn start<T>(
    spawn: impl FnOnce() -> io::Result<(T, os::Kill)>,
) -> io::Result<(T, Registered)> {
    if !CALLER_HANDLES.load(Ordering::SeqCst) {
        watch_for_stops();
    }
    if running().stopping {
        wait_for_the_end();
    }
    // Started without the lock, so that checks starting side by side do not wait for each
    // other; a stop that came meanwhile has not seen this tree, which is killed here instead.
    let (tree, kill) = spawn()?;
    let mut running = running();
    if running.stopping {
        os::kill_tree(&kill);
        drop(running);
        wait_for_the_end();
    }
    let id = running.next;
    running.next += 1;
    running.trees.push((id, kill));
    Ok((tree, Registered(id)))
}

/// What a thread that would start a tree does once a stop has begun: nothing, until the stop
/// ends the process.
fn wait_for_the_end() -> ! {
    loop {
        std::thread::park();
    }
}

/// Ends this process at once on a request to stop, with every tree the sandbox runs (see the
/// module's documentation). After Ctrl-C or a quit key, `farewell` says goodbye, with the
/// terminal restored and every process of the grading gone.
pub fn end_on_stop(farewell: impl Fn() + Send + 'static) {
    *FAREWELL.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(farewell));
    watch_for_stops();
}

/// What the Ctrl-C key does where the terminal gives it as a key (a terminal in raw mode):
/// the same as Ctrl-C's signal.
pub fn interrupt() {
    os::request_stop(os::INTERRUPT);
}

/// What a quit key does: stop at once, as a normal end.
pub fn quit() {
    os::request_stop(QUIT);
}

/// Catches Ctrl-C, SIGTERM and SIGHUP for a caller that handles them itself, polling
/// [`super::stop_requested`]: the sandbox then only keeps its trees.
pub fn catch_stop_requests() {
    CALLER_HANDLES.store(true, Ordering::SeqCst);
    os::catch_stop_requests();
}

/// Starts the thread that waits for a request to stop (once per process).
fn watch_for_stops() {
    static WATCHING: Once = Once::new();
    WATCHING.call_once(|| {
        os::catch_stop_requests();
        let watcher = std::thread::Builder::new()
            .name("stop-watcher".to_owned())
            .spawn(|| end(os::wait_for_stop_request()));
        if watcher.is_err() {
            // Nobody would act on a request: Ctrl-C keeps its default action.
            os::release_stop_requests();
        }
    });
}

/// Kills every tree, restores the terminal, says goodbye, and ends the process as `request`
/// asks.
fn end(request: i32) -> ! {
    // The trees first: a writer blocked on a full pipe must not keep them running.
    {
        let mut running = running();
        running.stopping = true;
        for (_, kill) in &running.trees {
            os::kill_tree(kill);
        }
        for (_, kill) in &running.trees {
            os::sweep_tree(kill);
        }
    }
    // Nothing else the grader prints after this (the report of a grading cut short, a status
    // line) reaches the screen: the other threads wait on these locks until the process ends.
    let _stdout = std::io::stdout().lock();
    let _stderr = std::io::stderr().lock();
    os::restore_terminal();
    let stop = match request {
        QUIT => Stop::Quit,
        os::INTERRUPT => Stop::Interrupted,
        _ => Stop::Terminated,
    };
    let farewell = FAREWELL
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let (Some(farewell), false) = (farewell, stop == Stop::Terminated) {
        // A goodbye that cannot be printed (a closed pipe) panics; the process ends all the same.
        std::panic::catch_unwind(AssertUnwindSafe(farewell)).ok();
    }
    os::end_process(request)
}
