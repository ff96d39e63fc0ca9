//! Ctrl-C stops a grading at once and leaves nothing running, through the real binary: `check`
//! is interrupted by SIGINT to its process group (a terminal's Ctrl-C), and `watch`, which puts
//! its terminal in raw mode, by the Ctrl-C key on a terminal (`script` gives it one), each while
//! a check that forked a sleeper sleeps. Each must end within two seconds as Ctrl-C ends a
//! program (the shell shows 130), with the check and its sleeper gone.
//!
//! Linux only: the test reads `/proc` to tell that the processes are gone, and starts `kill`
//! and util-linux's `script`.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Scratch, WorkDirs, copy_of_the_workbook, grader_env, process_is_gone, root};

/// How often the test looks at what it waits for.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The most the grading may take to reach the sleeping check (a cold build included).
const REACHING_THE_CHECK: Duration = Duration::from_secs(300);

/// The most an interrupted grading may take to end.
const ENDING: Duration = Duration::from_secs(2);

/// A check that starts a sleeper, writes its pid to `$SLEEPER_PID_FILE`, then sleeps itself.
const SLEEPING_CHECK: &str = r#"
#[test]
fn sleeps() {
    let sleeper = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
    let file = std::env::var("SLEEPER_PID_FILE").unwrap();
    std::fs::write(format!("{file}.tmp"), sleeper.id().to_string()).unwrap();
    std::fs::rename(format!("{file}.tmp"), file).unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3_600));
}
"#;

/// A rubric of that one check, with a time limit far beyond the test's.
const SLEEPING_RUBRIC: &str = r#"
given = ["src/stubs.rs"]
hints = ["This rubric only tests Ctrl-C."]

[[check]]
id = "jitter.sleeps"
points = 1
title = "a check that sleeps"
section = "8.3"
timeout-ms = 600000
"#;

/// The grader with `args`, started as a shell starts a job: in a process group of its own. On
/// a terminal (`script`'s), or with no input at all.
fn start(args: &[&str], dir: &Path, scratch: &Path, on_a_terminal: bool) -> Child {
    let grader = env!("CARGO_BIN_EXE_xtask");
    let mut command = if on_a_terminal {
        let mut script = Command::new("script");
        // Quiet, flushing at once, with the grader's exit status, and no typescript file.
        script
            .args(["--quiet", "--flush", "--return", "--command"])
            .arg(format!("exec '{grader}' {}", args.join(" ")))
            .arg("/dev/null")
            .stdin(Stdio::piped());
        script
    } else {
        let mut command = Command::new(grader);
        command.args(args).stdin(Stdio::null());
        command
    };
    grader_env(&mut command);
    command
        .current_dir(dir)
        .env("WORKBOOK_STATE_DIR", scratch.join("state"))
        .env("SLEEPER_PID_FILE", scratch.join("sleeper.pid"))
        .env_remove("CARGO_MANIFEST_DIR")
        .process_group(0)
        .stdout(std::fs::File::create(scratch.join("stdout")).unwrap())
        .stderr(std::fs::File::create(scratch.join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// Ctrl-C as a terminal sends it to the job: SIGINT to its process group.
fn sigint_to_the_group(grader: &mut Child) {
    let kill = Command::new("kill")
        .args(["-INT", "--", &format!("-{}", grader.id())])
        .status()
        .unwrap();
    assert!(kill.success());
}

/// Ctrl-C typed on the grader's terminal.
fn ctrl_c_key(grader: &mut Child) {
    let keys = grader.stdin.as_mut().unwrap();
    keys.write_all(b"\x03").unwrap();
    keys.flush().unwrap();
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = stat.rsplit_once(')').unwrap().1;
    after_name
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

/// Waits until the check runs, interrupts the grader with `ctrl_c`, and checks how the grader
/// ended: returns its output.
fn interrupt_while_the_check_sleeps(
    mut grader: Child,
    scratch: &Path,
    ctrl_c: fn(&mut Child),
) -> String {
    let pid_file = scratch.join("sleeper.pid");
    let started = Instant::now();
    let sleeper: u32 = loop {
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            break pid.trim().parse().unwrap();
        }
        if let Some(status) = grader.try_wait().unwrap() {
            panic!(
                "the grader ended ({status}) before the check ran: {}",
                output(scratch)
            );
        }
        assert!(
            started.elapsed() < REACHING_THE_CHECK,
            "the check never ran: {}",
            output(scratch)
        );
        std::thread::sleep(LOOK_EVERY);
    };
    let check = parent_of(sleeper);
    let sent = Instant::now();
    ctrl_c(&mut grader);
    let status: ExitStatus = loop {
        if let Some(status) = grader.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > ENDING {
            grader.kill().unwrap();
            grader.wait().unwrap();
            panic!("the grader still ran {ENDING:?} after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let took = sent.elapsed();
    assert!(took < ENDING, "the grader took {took:?} to end");
    // Killed by SIGINT (2), or, through `script`, its report of that: 130.
    assert!(
        status.signal() == Some(2) || status.code() == Some(130),
        "the grader ends as Ctrl-C ends a program, not with {status}: {}",
        output(scratch)
    );
    // The killed processes are the grader's children: gone once the grader is.
    for (pid, what) in [(check, "the check"), (sleeper, "the check's sleeper")] {
        let gone_by = Instant::now() + Duration::from_millis(500);
        while !process_is_gone(pid) && Instant::now() < gone_by {
            std::thread::sleep(LOOK_EVERY);
        }
        assert!(process_is_gone(pid), "{what} (pid {pid}) is still running");
    }
    output(scratch)
}

fn output(scratch: &Path) -> String {
    let read = |name| std::fs::read_to_string(scratch.join(name)).unwrap_or_default();
    format!("{}{}", read("stdout"), read("stderr"))
}

#[test]
fn ctrl_c_stops_check_at_once_and_leaves_nothing_running() {
    let scratch = Scratch::new("interrupt-check");
    let checks = scratch.join("checks/ch08");
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(checks.join("chapter.toml"), SLEEPING_RUBRIC).unwrap();
    std::fs::write(checks.join("jitter.rs"), SLEEPING_CHECK).unwrap();
    let grader = start(
        &[
            "check",
            "ch08",
            "--solution",
            "--checks-dir",
            scratch.join("checks").to_str().unwrap(),
        ],
        &root(),
        &scratch,
        false,
    );
    interrupt_while_the_check_sleeps(grader, &scratch, sigint_to_the_group);
}

#[test]
fn ctrl_c_stops_watch_at_once_and_leaves_nothing_running() {
    let scratch = Scratch::new("interrupt-watch");
    // Watch grades the exercise of the workbook it runs in: a copy whose ch08 has the check.
    let copy = scratch.join(format!("interrupted-copy-{}", std::process::id()));
    let _work_dirs = WorkDirs(vec![copy.clone()]);
    copy_of_the_workbook(&copy);
    let checks = copy.join("xtask/checks/ch08");
    std::fs::remove_dir_all(&checks).unwrap();
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(checks.join("chapter.toml"), SLEEPING_RUBRIC).unwrap();
    std::fs::write(checks.join("jitter.rs"), SLEEPING_CHECK).unwrap();
    let grader = start(&["watch", "ch08"], &copy, &scratch, true);
    let said = interrupt_while_the_check_sleeps(grader, &scratch, ctrl_c_key);
    assert!(
        said.contains("Stopped. Your work on ch08 is saved in your files; run `cargo xtask watch ch08` to go on."),
        "watch says goodbye: {said}"
    );
}
