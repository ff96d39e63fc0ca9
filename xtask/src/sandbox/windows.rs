//! Windows: the check starts suspended, joins a Job Object, and only then runs, so every
//! process it ever starts is in the job. The job carries the memory limit and kill-on-close;
//! the grader terminates the job at the end and waits until no process of it is left. The
//! watchdog in `mod.rs` caps the output files, and sums the memory of the job's processes where
//! the job's own limit is not enforced (Wine).

#![allow(unsafe_code)] // A platform file: the system calls the sandbox is built on.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Console::{
    CONSOLE_MODE, CTRL_BREAK_EVENT, CTRL_C_EVENT, ENABLE_ECHO_INPUT, ENABLE_LINE_INPUT,
    ENABLE_PROCESSED_INPUT, GetConsoleMode, GetStdHandle, STD_INPUT_HANDLE, SetConsoleCtrlHandler,
    SetConsoleMode,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
    JOB_OBJECT_LIMIT_JOB_MEMORY, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOBOBJECTINFOCLASS, JobObjectBasicAccountingInformation, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    CREATE_SUSPENDED, OpenProcess, OpenThread, PROCESS_QUERY_LIMITED_INFORMATION, ResumeThread,
    THREAD_SUSPEND_RESUME, TerminateProcess,
};
use windows_sys::core::BOOL;

use super::interrupt::{self, Registered};
use super::{Cause, Limits};

/// Windows has no file-size limit: the watchdog caps the output files.
pub const KERNEL_CAPS_FILES: bool = false;

/// The exit codes the grader gives the processes it terminates: for memory, or at the end.
const KILLED_BY_GRADER: u32 = 0xE000_0009;
/// The exit code for a tree stopped because a file passed its limit.
const STOPPED_FOR_FILE_SIZE: u32 = 0xE000_0019;

/// How long the grader waits for a terminated job to empty.
const EMPTYING: Duration = Duration::from_secs(5);

/// An owned handle, closed on drop.
struct Handle(HANDLE);

impl Handle {
    fn new(raw: HANDLE) -> io::Result<Self> {
        if raw.is_null() || raw == INVALID_HANDLE_VALUE {
            Err(io::Error::last_os_error())
        } else {
            Ok(Self(raw))
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// One running check and its Job Object.
pub struct Tree {
    /// Keeps the job known to a stop (Ctrl-C) until the tree is done with; dropped before the
    /// job's handle, which it names.
    _registered: Registered,
    child: Child,
    job: Handle,
    status: Option<ExitStatus>,
    peak_memory_bytes: u64,
}

impl Tree {
    pub fn spawn(mut command: Command, limits: Limits) -> io::Result<Self> {
        // SAFETY: null attributes and name make an anonymous job with default security.
        let job = Handle::new(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) })?;
        // SAFETY: an all-zero limit structure is valid; the fields set below are the limits.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            | JOB_OBJECT_LIMIT_JOB_MEMORY
            | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        info.JobMemoryLimit = usize::try_from(limits.memory_bytes).unwrap_or(usize::MAX);
        // SAFETY: the pointer and size describe `info`, which outlives the call.
        let set = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const info).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        let (child, registered) = interrupt::start(|| {
            let child = spawn_in_job(&mut command, &job)?;
            Ok((child, Kill::Job(job.0 as isize)))
        })?;
        Ok(Self {
            _registered: registered,
            child,
            job,
            status: None,
            peak_memory_bytes: 0,
        })
    }

    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// The summed working sets of the job's processes.
    pub fn watched_memory_bytes(&mut self) -> Option<u64> {
        let total = job_processes(&self.job)
            .into_iter()
            .map(working_set_bytes)
            .sum();
        self.peak_memory_bytes = self.peak_memory_bytes.max(total);
        Some(total)
    }

    /// Terminates every process of the job and waits until the job is empty. The check process's
    /// exit code tells `abnormal_end` the `cause`.
    pub fn kill_all(&mut self, cause: Cause) {
        let code = match cause {
            Cause::FileTooLarge => STOPPED_FOR_FILE_SIZE,
            _ => KILLED_BY_GRADER,
        };
        // SAFETY: the job handle is valid.
        unsafe { TerminateJobObject(self.job.0, code) };
        let started = Instant::now();
        while active_processes(&self.job) > 0 && started.elapsed() < EMPTYING {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits for the check process and returns the job's peak memory in KiB. Dropping the job
    /// handle afterwards kills anything left (kill-on-close).
    pub fn finish(mut self) -> u64 {
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
        let recorded = peak_job_memory(&self.job);
        recorded.max(self.peak_memory_bytes) / 1024
    }
}

/// Starts `command` suspended, puts it in `job`, and only then lets it run.
fn spawn_in_job(command: &mut Command, job: &Handle) -> io::Result<Child> {
    let mut child = command.creation_flags(CREATE_SUSPENDED).spawn()?;
    // SAFETY: both handles are valid: the job's and the suspended child's.
    let assigned = unsafe { AssignProcessToJobObject(job.0, child.as_raw_handle()) };
    let started = if assigned == 0 {
        Err(io::Error::last_os_error())
    } else {
        resume_threads_of(child.id())
    };
    if let Err(error) = started {
        let _ = child.kill();
        let _ = child.wait();
        return Err(error);
    }
    Ok(child)
}

/// Resumes every thread of the suspended process `pid` (a new process has one).
fn resume_threads_of(pid: u32) -> io::Result<()> {
    // SAFETY: a thread snapshot of the whole system; the handle is closed by `Handle`.
    let snapshot = Handle::new(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) })?;
    // SAFETY: an all-zero entry with its size set is what Thread32First expects.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: the snapshot is valid and `entry` is ours to fill.
    let mut more = unsafe { Thread32First(snapshot.0, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread of our own child by id.
            let thread =
                Handle::new(unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) })?;
            // SAFETY: the thread handle is valid and allows resuming.
            if unsafe { ResumeThread(thread.0) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.0, &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(
            "the check process has no thread to resume",
        ));
    }
    Ok(())
}

/// One of the job's information structures, or `None` when the query fails.
///
/// # Safety
/// `T` must be the plain-data structure that `class` fills.
unsafe fn query_job<T>(job: &Handle, class: JOBOBJECTINFOCLASS) -> Option<T> {
    // SAFETY: the caller names a plain-data structure, for which all-zero is a valid value.
    let mut info: T = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer and size describe `info`.
    let queried = unsafe {
        QueryInformationJobObject(
            job.0,
            class,
            (&raw mut info).cast(),
            size_of::<T>() as u32,
            std::ptr::null_mut(),
        )
    };
    (queried != 0).then_some(info)
}

/// How many processes of the job are still running.
fn active_processes(job: &Handle) -> u32 {
    // SAFETY: this class fills the accounting structure.
    let info: Option<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION> =
        unsafe { query_job(job, JobObjectBasicAccountingInformation) };
    info.map_or(0, |info| info.ActiveProcesses)
}

/// The most memory the job's processes committed together, as the job recorded it.
fn peak_job_memory(job: &Handle) -> u64 {
    // SAFETY: this class fills the extended limit structure.
    let info: Option<JOBOBJECT_EXTENDED_LIMIT_INFORMATION> =
        unsafe { query_job(job, JobObjectExtendedLimitInformation) };
    info.map_or(0, |info| info.PeakJobMemoryUsed as u64)
}

/// The ids of the job's processes.
fn job_processes(job: &Handle) -> Vec<u32> {
    // The list's header (two u32 counts, in one usize on 64-bit Windows) then one usize per
    // process; the second count, in the upper half, is how many ids were written.
    let mut buffer = vec![0usize; 2 + 1024];
    // SAFETY: the pointer and size describe `buffer`.
    let queried = unsafe {
        QueryInformationJobObject(
            job.0,
            JobObjectBasicProcessIdList,
            buffer.as_mut_ptr().cast(),
            (buffer.len() * size_of::<usize>()) as u32,
            std::ptr::null_mut(),
        )
    };
    if queried == 0 {
        return Vec::new();
    }
    let listed = (buffer[0] >> 32) as usize;
    buffer[1..]
        .iter()
        .take(listed)
        .map(|&pid| pid as u32)
        .collect()
}

/// The working set of process `pid`, or 0 when it cannot be read.
fn working_set_bytes(pid: u32) -> u64 {
    // SAFETY: opening a process of the job by id, for queries only.
    let Ok(process) =
        Handle::new(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) })
    else {
        return 0;
    };
    // SAFETY: an all-zero counters structure with its size set is what the call expects.
    let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    counters.cb = size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    // SAFETY: the handle is valid and the pointer and size describe `counters`.
    if unsafe { K32GetProcessMemoryInfo(process.0, &mut counters, counters.cb) } == 0 {
        return 0;
    }
    counters.WorkingSetSize as u64
}

/// How a process ended abnormally, read from its NTSTATUS exit code.
pub fn abnormal_end(status: &ExitStatus) -> Option<Cause> {
    let code = status.code()? as u32;
    Some(match code {
        // __fastfail, which std::process::abort uses, and STATUS_STACK_BUFFER_OVERRUN.
        0xC000_0409 => Cause::Abort,
        KILLED_BY_GRADER | 0xC000_0017 => Cause::Killed,
        STOPPED_FOR_FILE_SIZE => Cause::FileTooLarge,
        0xC000_00FD => Cause::Other("a stack overflow (STATUS_STACK_OVERFLOW)".to_owned()),
        0xC000_0005 => Cause::Other("an access violation (STATUS_ACCESS_VIOLATION)".to_owned()),
        0xC000_001D => {
            Cause::Other("an illegal instruction (STATUS_ILLEGAL_INSTRUCTION)".to_owned())
        }
        0xC000_0094 => Cause::Other("an integer division by zero".to_owned()),
        // Other NTSTATUS errors: severity bits 11.
        code if code >= 0xC000_0000 => Cause::Other(format!("exception 0x{code:08X}")),
        _ => return None,
    })
}

/// Windows has no root in the sense the grader cares about (installing packages with apt-get).
pub fn running_as_root() -> bool {
    false
}

/// The command that opens `file` in the default application (`start`, a command of `cmd`; the
/// empty argument is the window title `start` expects first).
pub fn opener(file: &std::path::Path) -> Command {
    let mut command = Command::new("cmd");
    command.args(["/C", "start", ""]).arg(file);
    command
}

/// Makes `link` a link to the folder `folder`: a symbolic link where this user may make one,
/// else a junction, which needs no privilege.
pub fn link_folder(folder: &std::path::Path, link: &std::path::Path) -> io::Result<()> {
    if std::os::windows::fs::symlink_dir(folder, link).is_ok() {
        return Ok(());
    }
    let status = Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(link)
        .arg(folder)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "mklink /J {} failed",
            link.display()
        )))
    }
}

/// Removes a link [`link_folder`] made, leaving the folder it leads to (a folder link is
/// removed as a folder on Windows).
pub fn remove_folder_link(link: &std::path::Path) -> io::Result<()> {
    std::fs::remove_dir(link)
}

/// The width of the terminal stderr writes to: unknown here, so callers assume 80 columns.
pub fn terminal_columns() -> Option<usize> {
    None
}

/// Turns on the console's handling of ANSI colour and cursor codes (Windows 10 and newer; on by
/// default in Windows Terminal); false when the console cannot.
pub fn terminal_understands_ansi() -> bool {
    use windows_sys::Win32::System::Console::{
        ENABLE_VIRTUAL_TERMINAL_PROCESSING, STD_OUTPUT_HANDLE,
    };
    // SAFETY: GetStdHandle only returns this process's stdout handle.
    let output = unsafe { GetStdHandle(STD_OUTPUT_HANDLE) };
    let mut mode: CONSOLE_MODE = 0;
    // SAFETY: GetConsoleMode fails harmlessly when stdout is not a console.
    if unsafe { GetConsoleMode(output, &mut mode) } == 0 {
        return false;
    }
    // SAFETY: the handle is the console's output.
    mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
        || unsafe { SetConsoleMode(output, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) } != 0
}

/// The console's input mode before a [`RawTerminal`] changed it, for a stop to restore.
static SAVED_MODE: Mutex<Option<CONSOLE_MODE>> = Mutex::new(None);

/// The console in single-key, no-echo mode while it lives. A stop (Ctrl-C) restores it too
/// ([`restore_terminal`]).
pub struct RawTerminal {
    saved: Option<CONSOLE_MODE>,
}

impl RawTerminal {
    /// Switches the console to single keys; does nothing when stdin is not a console.
    pub fn enable() -> Self {
        // SAFETY: GetStdHandle only returns this process's stdin handle.
        let input = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
        let mut mode: CONSOLE_MODE = 0;
        // SAFETY: GetConsoleMode fails harmlessly when stdin is not a console.
        if unsafe { GetConsoleMode(input, &mut mode) } == 0 {
            return Self { saved: None };
        }
        *SAVED_MODE.lock().unwrap_or_else(PoisonError::into_inner) = Some(mode);
        // Processed input off too: Ctrl-C arrives as a key, which the key reader turns into a
        // stop (`interrupt::interrupt`).
        let raw = mode & !(ENABLE_LINE_INPUT | ENABLE_ECHO_INPUT | ENABLE_PROCESSED_INPUT);
        // SAFETY: the handle is the console's input.
        unsafe { SetConsoleMode(input, raw) };
        Self { saved: Some(mode) }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if self.saved.is_some() {
            restore_terminal();
        }
    }
}

/// Puts the console back as it was before a [`RawTerminal`] changed it, if one did.
pub fn restore_terminal() {
    if let Some(mode) = SAVED_MODE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        // SAFETY: restores the mode read in `RawTerminal::enable`.
        unsafe { SetConsoleMode(GetStdHandle(STD_INPUT_HANDLE), mode) };
    }
}

/// The request code of Ctrl-C (Unix's SIGINT, for the same meaning everywhere).
pub const INTERRUPT: i32 = 2;

/// The exit code of a console process that Ctrl-C ended.
const STATUS_CONTROL_C_EXIT: u32 = 0xC000_013A;

/// The request to stop (`INTERRUPT` or `interrupt::QUIT`), or 0, and what wakes its waiter.
static STOP_REQUEST: Mutex<i32> = Mutex::new(0);
static STOP_REQUESTED: Condvar = Condvar::new();

/// The console's handler, which Windows runs on a thread of its own: Ctrl-C and Ctrl-Break
/// become a request; any other event (the console closing) keeps its default action.
unsafe extern "system" fn on_console_event(event: u32) -> BOOL {
    if event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT {
        request_stop(INTERRUPT);
        1
    } else {
        0
    }
}

/// Catches the console's Ctrl-C and Ctrl-Break: the process notes the request instead of
/// ending at once.
pub fn catch_stop_requests() {
    // SAFETY: registers a handler that only notes the request.
    unsafe { SetConsoleCtrlHandler(Some(on_console_event), 1) };
}

/// Gives Ctrl-C its default action back.
pub fn release_stop_requests() {
    // SAFETY: removes the handler `catch_stop_requests` registered.
    unsafe { SetConsoleCtrlHandler(Some(on_console_event), 0) };
}

/// Asks for a stop (from the console's handler or a key reader).
pub fn request_stop(request: i32) {
    *STOP_REQUEST.lock().unwrap_or_else(PoisonError::into_inner) = request;
    STOP_REQUESTED.notify_all();
}

/// Waits until a stop is requested, and returns the request.
pub fn wait_for_stop_request() -> i32 {
    let mut request = STOP_REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
    while *request == 0 {
        request = STOP_REQUESTED
            .wait(request)
            .unwrap_or_else(PoisonError::into_inner);
    }
    *request
}

/// The exit code a process asked to stop should end with, once asked.
pub fn stop_requested() -> Option<i32> {
    let request = *STOP_REQUEST.lock().unwrap_or_else(PoisonError::into_inner);
    (request == INTERRUPT).then_some(STATUS_CONTROL_C_EXIT as i32)
}

/// Ends the process as `request` asks: after Ctrl-C with the code Ctrl-C gives a console
/// process; after a quit key, with success.
#[allow(
    clippy::disallowed_methods,
    reason = "the stop watcher ends the process while other threads are still in a grading"
)]
pub fn end_process(request: i32) -> ! {
    if request == INTERRUPT {
        std::process::exit(STATUS_CONTROL_C_EXIT as i32);
    }
    std::process::exit(0)
}

/// How a stop kills one tree: a check's Job Object, or a build's process (cargo puts itself and
/// every rustc in a job of its own, killed with it).
pub enum Kill {
    Job(isize),
    Process(isize),
}

/// Terminates the job's processes, or the process.
pub fn kill_tree(kill: &Kill) {
    // SAFETY: the handle is valid while the tree is registered, and the registry is locked.
    unsafe {
        match *kill {
            Kill::Job(job) => TerminateJobObject(job as HANDLE, KILLED_BY_GRADER),
            Kill::Process(process) => TerminateProcess(process as HANDLE, KILLED_BY_GRADER),
        };
    }
}

/// Nothing leaves a job: terminating it was enough.
pub fn sweep_tree(_kill: &Kill) {}

/// Starts a build's process (cargo, rustc), known to a stop until its guard is dropped.
pub fn spawn_build(command: &mut Command) -> io::Result<(Child, Registered)> {
    interrupt::start(|| {
        let child = command.spawn()?;
        let kill = Kill::Process(child.as_raw_handle() as isize);
        Ok((child, kill))
    })
}

/// The children of this process are sandboxed in Job Objects, which die with it.
pub fn kill_own_children() {}

/// Nothing to sweep: each run's Job Object held its whole tree.
pub fn kill_processes_naming(_dir: &std::path::Path) {}

/// A Job Object already ends the tree with the run; nothing more to set.
pub fn die_with_parent(_command: &mut Command) {}

/// Processor time of this process and its waited-for children: Windows keeps no total for
/// children, so the benchmark reports none (zero) there.
pub fn processor_time() -> std::time::Duration {
    std::time::Duration::ZERO
}

/// For the tests: the status of a process that exited with `code`.
#[cfg(test)]
pub fn exited_with(code: i32) -> ExitStatus {
    use std::os::windows::process::ExitStatusExt;
    ExitStatus::from_raw(code as u32)
}

/// For the tests: starts the command in a process group of its own (it stays in the job).
#[cfg(test)]
pub fn leave_group(command: &mut Command) {
    use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// For the tests: whether process `pid` is still running.
#[cfg(test)]
pub fn still_running(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::WAIT_TIMEOUT;
    use windows_sys::Win32::System::Threading::{PROCESS_SYNCHRONIZE, WaitForSingleObject};
    // SAFETY: opening a process by id only to wait on it.
    let Ok(process) = Handle::new(unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) }) else {
        return false;
    };
    // SAFETY: the handle is valid; a zero timeout only asks whether it has ended.
    unsafe { WaitForSingleObject(process.0, 0) == WAIT_TIMEOUT }
}
