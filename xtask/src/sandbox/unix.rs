//! Linux and macOS: resource limits set in the child before `exec`, the check in its own process
//! group, and every process that carries the run's mark in its environment swept at the end
//! (how the sweep finds them differs: see `linux.rs` and `macos.rs`).

#![allow(unsafe_code)] // A platform file: the system calls the sandbox is built on.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use super::{Cause, FILE_SIZE_FACTOR, Limits};

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod family;
#[cfg(target_os = "macos")]
#[path = "macos.rs"]
mod family;

/// The kernel stops a file at its size limit (SIGXFSZ), so no watchdog on output is needed.
pub const KERNEL_CAPS_FILES: bool = true;

/// The environment variable that marks every process of one run, inherited by its children
/// whatever session or group they move to.
const MARK_VARIABLE: &str = "WORKBOOK_SANDBOX";

/// One running check and everything it started.
pub struct Tree {
    pid: libc::pid_t,
    /// `MARK_VARIABLE=value`, as it appears in the environment of each process of the run.
    mark: String,
    status: Option<ExitStatus>,
    peak_memory_kib: u64,
    family: family::Family,
}

impl Tree {
    pub fn spawn(mut command: Command, limits: Limits) -> io::Result<Self> {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        // Unique to this run, yet telling nothing of it: a suite that read a count here could
        // tell the correct code's run from a mutant's by its place in the grading.
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        let value = format!(
            "{:016x}{:016x}",
            crate::util::unpredictable(run),
            crate::util::unpredictable(u64::from(std::process::id()))
        );
        let mark = format!("{MARK_VARIABLE}={value}");
        family::adopt_orphans();
        command.env(MARK_VARIABLE, &value).process_group(0);
        let Limits {
            wall,
            memory_bytes,
            output_bytes,
        } = limits;
        let cpu_seconds = wall.as_secs() + 2;
        // SAFETY: the closure runs in the forked child before exec and only calls setrlimit and
        // prctl, which are async-signal-safe; it touches no memory shared with the parent.
        unsafe {
            command.pre_exec(move || {
                let limits = [
                    (libc::RLIMIT_FSIZE, output_bytes * FILE_SIZE_FACTOR),
                    (libc::RLIMIT_CPU, cpu_seconds),
                    (libc::RLIMIT_CORE, 0),
                    (libc::RLIMIT_AS, memory_bytes),
                ];
                // Where the kernel ignores the address-space limit, the watchdog holds memory.
                let kept = if family::ADDRESS_SPACE_LIMIT_HOLDS {
                    4
                } else {
                    3
                };
                for (resource, value) in limits.into_iter().take(kept) {
                    let limit = libc::rlimit {
                        rlim_cur: value,
                        rlim_max: value,
                    };
                    if libc::setrlimit(resource, &limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                family::in_child_before_exec()
            });
        }
        let child = command.spawn()?;
        let pid = child.id() as libc::pid_t;
        // The child is waited for with wait4 below, which also reports its peak memory.
        drop(child);
        Ok(Self {
            pid,
            mark,
            status: None,
            peak_memory_kib: 0,
            family: family::Family::new(pid),
        })
    }

    /// The check process's exit status once it has ended.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.wait(libc::WNOHANG)?;
        }
        Ok(self.status)
    }

    /// The tree's resident memory, where the kernel does not hold the memory limit itself.
    pub fn watched_memory_bytes(&mut self) -> Option<u64> {
        self.family.resident_bytes()
    }

    /// Kills every process of the run: the group, and whatever left it. The check process
    /// reads as killed by SIGKILL whatever the `_cause`.
    pub fn kill_all(&mut self, _cause: Cause) {
        // SAFETY: kill only sends a signal; a negative pid names the process group we created.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        self.family.sweep(self.pid, &self.mark);
    }

    /// Reaps the check process (already killed) and returns its peak resident memory in KiB.
    pub fn finish(mut self) -> u64 {
        while self.status.is_none() {
            if self.wait(0).is_err() {
                break;
            }
        }
        self.peak_memory_kib
    }

    fn wait(&mut self, options: libc::c_int) -> io::Result<()> {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: wait4 writes only into the two out-parameters we own.
            let waited = unsafe { libc::wait4(self.pid, &mut status, options, &mut usage) };
            if waited == self.pid {
                self.status = Some(ExitStatus::from_raw(status));
                let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0);
                self.peak_memory_kib = peak / family::MAXRSS_UNITS_PER_KIB;
                return Ok(());
            }
            if waited == 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

/// The signal that ended a process, in the grader's words.
pub fn abnormal_end(status: &ExitStatus) -> Option<Cause> {
    let signal = status.signal()?;
    Some(match signal {
        libc::SIGXFSZ => Cause::FileTooLarge,
        libc::SIGXCPU => Cause::CpuTime,
        libc::SIGABRT => Cause::Abort,
        libc::SIGKILL => Cause::Killed,
        _ => {
            let name = match signal {
                libc::SIGSEGV => "SIGSEGV",
                libc::SIGBUS => "SIGBUS",
                libc::SIGILL => "SIGILL",
                libc::SIGFPE => "SIGFPE",
                libc::SIGTERM => "SIGTERM",
                _ => "a signal",
            };
            Cause::Other(format!("{name} (signal {signal})"))
        }
    })
}

/// True when the grader runs as root (where installing system packages makes sense).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid only reads the process's user id.
    unsafe { libc::geteuid() == 0 }
}

/// The command that opens `file` in the desktop's default application.
pub fn opener(file: &std::path::Path) -> Command {
    let mut command = Command::new(family::OPENER);
    command.arg(file);
    command
}

/// Makes `link` a link to the folder `folder` (a symbolic link).
pub fn link_folder(folder: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(folder, link)
}

/// Removes a link [`link_folder`] made, leaving the folder it leads to.
pub fn remove_folder_link(link: &Path) -> io::Result<()> {
    std::fs::remove_file(link)
}

/// The width of the terminal stderr writes to, when it is one.
pub fn terminal_columns() -> Option<usize> {
    use std::os::fd::AsRawFd;
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ only writes a `winsize` into the one it is given; it fails harmlessly
    // when stderr is not a terminal.
    let read = unsafe { libc::ioctl(std::io::stderr().as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
    (read == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// Unix terminals understand ANSI colour and cursor codes.
pub fn terminal_understands_ansi() -> bool {
    true
}

/// The terminal in non-canonical, no-echo mode while it lives, so a key acts without Enter.
pub struct RawTerminal {
    saved: Option<libc::termios>,
}

impl RawTerminal {
    /// Switches stdin's terminal to single keys; does nothing when stdin is not a terminal.
    pub fn enable() -> Self {
        use std::io::IsTerminal;
        if !io::stdin().is_terminal() {
            return Self { saved: None };
        }
        // SAFETY: a zeroed termios is a valid value for tcgetattr to fill.
        let mut settings: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: tcgetattr fills the struct we own.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut settings) } != 0 {
            return Self { saved: None };
        }
        let saved = settings;
        // ISIG off too: Ctrl-C arrives as a key and quits cleanly, restoring the terminal.
        settings.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
        settings.c_cc[libc::VMIN] = 1;
        settings.c_cc[libc::VTIME] = 0;
        // SAFETY: tcsetattr reads the struct we pass.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &settings) };
        Self { saved: Some(saved) }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restores the settings read in `enable`.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved) };
        }
    }
}

/// For the tests: the status of a process that exited with `code`.
#[cfg(test)]
pub fn exited_with(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

/// For the tests: starts the command in a process group of its own.
#[cfg(test)]
pub fn leave_group(command: &mut Command) {
    command.process_group(0);
}

/// For the tests: whether process `pid` is still running (a zombie has ended).
#[cfg(test)]
pub fn still_running(pid: u32) -> bool {
    family::still_running(pid as libc::pid_t)
}

/// The signal that asked this process to stop, or 0.
static STOP_REQUEST: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember_stop_request(signal: libc::c_int) {
    STOP_REQUEST.store(signal, Ordering::SeqCst);
}

/// Catches Ctrl-C, SIGTERM and SIGHUP: instead of dying at once, the process notes the request
/// for [`stop_requested`] to report.
pub fn catch_stop_requests() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(
                signal,
                remember_stop_request as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// The exit code a process asked to stop should end with (128 + the signal), once asked.
pub fn stop_requested() -> Option<i32> {
    match STOP_REQUEST.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(128 + signal),
    }
}

/// Kills this process's children, each with the process group it leads.
pub fn kill_own_children() {
    for child in family::children_of(std::process::id() as libc::pid_t) {
        // SAFETY: kill only sends signals: to the child's process group and to the child.
        unsafe {
            libc::kill(-child, libc::SIGKILL);
            libc::kill(child, libc::SIGKILL);
        }
    }
}

/// Kills every process of this user whose command line names a file under `dir`, and waits
/// until they are gone.
pub fn kill_processes_naming(dir: &Path) {
    family::kill_processes_naming(dir);
}

/// Makes the command's process die with this one, where the system can (Linux).
pub fn die_with_parent(command: &mut Command) {
    family::die_with_parent(command);
}

/// Processor time (user and system) of this process and every child it has waited for.
pub fn processor_time() -> std::time::Duration {
    use std::time::Duration;
    let of = |who| {
        // SAFETY: getrusage fills the zeroed struct we own.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut usage) } != 0 {
            return Duration::ZERO;
        }
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        time(usage.ru_utime) + time(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}
