//! The sandbox's guarantees, tried with hostile children on the platform the tests run on (CI
//! runs them on Linux and, cross-built, on Windows under Wine). The hostile processes are this
//! test binary itself, started again with `CHILD_MODE` set: see `child_behaviour`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Cause, Ending, Finished, Limits, abnormal_end, os, run, run_until};

/// Which misbehaviour `child_behaviour` acts out.
const CHILD_MODE: &str = "WORKBOOK_SANDBOX_TEST_MODE";
/// The file where a child writes the pid of the process it started.
const PID_FILE: &str = "WORKBOOK_SANDBOX_TEST_PID_FILE";

const MIB: u64 = 1024 * 1024;

fn limits(wall_ms: u64) -> Limits {
    Limits {
        wall: Duration::from_millis(wall_ms),
        memory_bytes: 512 * MIB,
        output_bytes: MIB,
    }
}

/// A folder of its own for one test.
fn scratch(name: &str) -> PathBuf {
    crate::util::scratch_dir(&format!("sandbox-{name}"))
}

/// This test binary, acting out `mode`.
fn hostile(mode: &str, dir: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "sandbox::tests::child_behaviour",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_MODE, mode)
        .env(PID_FILE, dir.join("pid"))
        .current_dir(dir);
    command
}

fn run_hostile(mode: &str, name: &str, limits: Limits) -> (Finished, PathBuf) {
    let dir = scratch(name);
    let finished = run(
        hostile(mode, &dir),
        limits,
        &dir.join("stdout"),
        &dir.join("stderr"),
    )
    .unwrap();
    (finished, dir)
}

/// The pid the child wrote, once it has written it.
fn written_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("pid")).expect("the child wrote its pid file");
    text.trim().parse().unwrap()
}

/// Starts this binary again in `mode` as a child of the current process and records its pid.
/// The child is left running on purpose: the sandbox must clean it up.
#[allow(clippy::zombie_processes)]
fn start_child(mode: &str, own_group: bool) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["sandbox::tests::child_behaviour", "--exact", "--nocapture"])
        .env(CHILD_MODE, mode);
    if own_group {
        os::leave_group(&mut command);
    }
    let child = command.spawn().unwrap();
    let file = std::env::var(PID_FILE).unwrap();
    std::fs::write(&file, child.id().to_string()).unwrap();
}

/// Not a test of its own: the body of every hostile child. Run without `CHILD_MODE`, as in a
/// plain `cargo test`, it does nothing.
#[test]
fn child_behaviour() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    match mode.as_str() {
        "spin" => loop {
            std::hint::spin_loop();
        },
        "sleep" => std::thread::sleep(Duration::from_secs(3_600)),
        "spin-with-a-spinning-child" => {
            start_child("spin", false);
            loop {
                std::hint::spin_loop();
            }
        }
        "leave-an-orphan" => start_child("sleep", true),
        "decide-then-spin-with-a-child" => {
            start_child("spin", false);
            println!("decided");
            loop {
                std::hint::spin_loop();
            }
        }
        "hog-memory" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1; 16 * MIB as usize]);
                std::hint::black_box(&hoard);
            }
        }
        "flood-output" => {
            let line = "x".repeat(1_023);
            loop {
                println!("{line}");
            }
        }
        "abort" => std::process::abort(),
        other => panic!("unknown mode {other}"),
    }
}

#[test]
fn a_runaway_check_and_its_child_are_killed_at_the_limit() {
    // Long enough for the child to start even under Wine on a busy machine.
    let wall_ms = 5_000;
    let (finished, dir) = run_hostile("spin-with-a-spinning-child", "runaway", limits(wall_ms));
    assert!(matches!(finished.ending, Ending::TimedOut), "{finished:?}");
    assert!(
        finished.elapsed < Duration::from_millis(wall_ms + 1_000),
        "{finished:?}"
    );
    let child = written_pid(&dir);
    assert!(
        !os::still_running(child),
        "the spinning child (pid {child}) outlived the check"
    );
}

#[test]
fn a_run_settled_by_its_output_stops_long_before_its_limit_and_takes_its_child() {
    let wall_ms = 60_000;
    let dir = scratch("settled");
    let finished = run_until(
        hostile("decide-then-spin-with-a-child", &dir),
        limits(wall_ms),
        &dir.join("stdout"),
        &dir.join("stderr"),
        &mut |stdout| std::fs::read_to_string(stdout).is_ok_and(|text| text.contains("decided\n")),
    )
    .unwrap();
    assert!(matches!(finished.ending, Ending::Settled), "{finished:?}");
    assert!(
        finished.elapsed < Duration::from_millis(wall_ms / 2),
        "{finished:?}"
    );
    let child = written_pid(&dir);
    assert!(
        !os::still_running(child),
        "the spinning child (pid {child}) outlived the run"
    );
}

#[test]
fn a_process_left_behind_outside_the_group_is_killed() {
    let (finished, dir) = run_hostile("leave-an-orphan", "orphan", limits(20_000));
    match &finished.ending {
        Ending::Exited(status) => assert!(status.success(), "{finished:?}"),
        Ending::TimedOut | Ending::Settled => {
            panic!("the check should have ended by itself: {finished:?}")
        }
    }
    let orphan = written_pid(&dir);
    assert!(
        !os::still_running(orphan),
        "the orphaned sleeper (pid {orphan}) outlived the check"
    );
}

#[test]
fn a_memory_hog_is_stopped() {
    let (finished, dir) = run_hostile("hog-memory", "hog", limits(30_000));
    let Ending::Exited(status) = &finished.ending else {
        panic!("the hog ran until the time limit: {finished:?}");
    };
    assert!(!status.success(), "{finished:?}");
    let stderr = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
    assert!(
        stderr.contains("memory allocation of") || abnormal_end(status) == Some(Cause::Killed),
        "neither a failed allocation nor a kill: {finished:?}, {stderr}"
    );
}

#[test]
fn an_output_flood_is_capped() {
    let limits = limits(30_000);
    let (finished, dir) = run_hostile("flood-output", "flood", limits);
    assert!(
        matches!(&finished.ending, Ending::Exited(status) if !status.success()),
        "{finished:?}"
    );
    let printed = std::fs::metadata(dir.join("stdout")).unwrap().len();
    assert!(
        printed > limits.output_bytes,
        "the flood stopped before the cap ({printed} bytes)"
    );
    assert!(
        printed <= limits.output_bytes * super::FILE_SIZE_FACTOR,
        "{printed} bytes printed"
    );
}

#[test]
fn an_abort_reads_as_an_abort() {
    let (finished, _) = run_hostile("abort", "abort", limits(20_000));
    let Ending::Exited(status) = &finished.ending else {
        panic!("{finished:?}");
    };
    assert_eq!(abnormal_end(status), Some(Cause::Abort), "{status:?}");
}
