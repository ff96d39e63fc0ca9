//! Ctrl-C stops a grading at once and leaves nothing running, through the real binary: `check`
//! and `watch` are interrupted while a check that forked a sleeper sleeps, and must end within
//! two seconds, killed by SIGINT as the shell expects (it shows 130), with the check and its
//! sleeper gone.
//!
//! Unix only: the test interrupts with `kill -INT`, as a terminal's Ctrl-C does, and reads
//! `/proc` to tell that the processes are gone.
#![cfg(target_os = "linux")]

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{process_is_gone, root};

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

/// A folder of the test's own, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("workbook-{name}-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::fs::remove_dir_all(&self.0).is_err() {
            eprintln!("note: {} is left behind", self.0.display());
        }
    }
}

/// Copies the folder `from` to `to`, build output left out.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&path, &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

/// The grader, started as a shell starts a job: in a process group of its own, with no keys.
fn start(args: &[&str], dir: &Path, scratch: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(dir)
        .env("WORKBOOK_STATE_DIR", scratch.join("state"))
        .env("SLEEPER_PID_FILE", scratch.join("sleeper.pid"))
        .env("NO_COLOR", "1")
        .env("WORKBOOK_LANG", "en")
        .env_remove("CARGO_MANIFEST_DIR")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(scratch.join("stdout")).unwrap())
        .stderr(std::fs::File::create(scratch.join("stderr")).unwrap())
        .spawn()
        .unwrap()
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

/// Waits until the check runs, interrupts the grader's process group as Ctrl-C does, and
/// checks how the grader ended: returns its output.
fn interrupt_while_the_check_sleeps(mut grader: Child, scratch: &Path) -> String {
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
    let kill = Command::new("kill")
        .args(["-INT", "--", &format!("-{}", grader.id())])
        .status()
        .unwrap();
    assert!(kill.success());
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
    assert_eq!(
        status.signal(),
        Some(2),
        "the grader ends killed by SIGINT, as the shell expects (it shows 130), not {status}"
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
    let checks = scratch.0.join("checks/ch08");
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(checks.join("chapter.toml"), SLEEPING_RUBRIC).unwrap();
    std::fs::write(checks.join("jitter.rs"), SLEEPING_CHECK).unwrap();
    let grader = start(
        &[
            "check",
            "ch08",
            "--solution",
            "--checks-dir",
            scratch.0.join("checks").to_str().unwrap(),
        ],
        &root(),
        &scratch.0,
    );
    interrupt_while_the_check_sleeps(grader, &scratch.0);
}

#[test]
fn ctrl_c_stops_watch_at_once_and_leaves_nothing_running() {
    let scratch = Scratch::new("interrupt-watch");
    // Watch grades the exercise of the workbook it runs in: a copy whose ch08 has the check.
    let copy = scratch
        .0
        .join(format!("interrupted-copy-{}", std::process::id()));
    for entry in ["Cargo.toml", "Cargo.lock"] {
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::copy(root().join(entry), copy.join(entry)).unwrap();
    }
    for entry in ["book", "exercises", "solutions", "xtask"] {
        copy_tree(&root().join(entry), &copy.join(entry));
    }
    let checks = copy.join("xtask/checks/ch08");
    std::fs::remove_dir_all(&checks).unwrap();
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(checks.join("chapter.toml"), SLEEPING_RUBRIC).unwrap();
    std::fs::write(checks.join("jitter.rs"), SLEEPING_CHECK).unwrap();
    let grader = start(&["watch", "ch08"], &copy, &scratch.0);
    let said = interrupt_while_the_check_sleeps(grader, &scratch.0);
    assert!(
        said.contains("Stopped. Your work on ch08 is saved in your files; run `cargo xtask watch ch08` to go on."),
        "watch says goodbye: {said}"
    );
    // The grader's folder for the copy (`target/workbook/<copy>-<hash>`) goes too.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let prefix = format!("{}-", copy.file_name().unwrap().to_string_lossy());
    for entry in std::fs::read_dir(target.join("workbook"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
}
