//! What the integration tests share: where the workbook is, the grader binary, the fixtures, the
//! reports it prints, and scratch folders that clean themselves up.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// The workspace root: the folder above the xtask crate.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The fixture `name` of `xtask/tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    root().join("xtask/tests/fixtures").join(name)
}

/// The grader binary, to run in the repository, with [`grader_env`].
pub fn xtask() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.current_dir(root());
    grader_env(&mut command);
    command
}

/// What every test's grader runs with, whatever starts it (the binary, or `script` around it):
/// English texts whatever the machine's locale, no colour, and none of the GitHub Actions
/// variables that make it write a step's outputs or annotations.
pub fn grader_env(command: &mut Command) {
    command
        .env("NO_COLOR", "1")
        .env("WORKBOOK_LANG", "en")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_REPOSITORY");
}

/// `cargo xtask <args>` in the repository, with its progress kept in `state`.
pub fn xtask_with_state(args: &[&str], state: &Path) -> Output {
    xtask()
        .args(args)
        .env("WORKBOOK_STATE_DIR", state)
        .output()
        .expect("the xtask binary runs")
}

/// A JSON report printed on stdout; a test that gets anything else fails with what was printed.
pub fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The row of check `id` in a chapter's JSON report.
pub fn result<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {report:#}"))
}

/// Whether process `pid` has ended. A zombie has ended; only its exit status is left for a
/// parent to collect.
#[cfg(target_os = "linux")]
pub fn process_is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The target folder the tests build in; copies of the workbook share it, as a user's
/// `CARGO_TARGET_DIR` would make them.
pub fn shared_target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// A copy of this repository's sources (no build output, no git history) at `dir`, made as a
/// learner's `cp -a` would.
pub fn copy_of_the_workbook(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for entry in [
        "Cargo.toml",
        "Cargo.lock",
        "book",
        "exercises",
        "solutions",
        "xtask",
    ] {
        let from = root().join(entry);
        if from.is_dir() {
            copy_tree(&from, &dir.join(entry));
        } else if from.is_file() {
            copy_file(&from, &dir.join(entry));
        }
    }
}

/// Copies the folder `from` to `to` as `cp -a` does (contents and modification times; build
/// output left out).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&path, &to.join(entry.file_name()));
            }
        } else {
            copy_file(&path, &to.join(entry.file_name()));
        }
    }
}

pub fn copy_file(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
    let modified = std::fs::metadata(from).unwrap().modified().unwrap();
    std::fs::File::options()
        .write(true)
        .open(to)
        .unwrap()
        .set_modified(modified)
        .unwrap();
}

/// Removes the grader's folders (`target/workbook/<copy>-<hash>`) of copies that are gone.
fn forget_work_dirs(copies: &[&Path]) {
    let Ok(entries) = std::fs::read_dir(shared_target().join("workbook")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let of_a_copy = copies.iter().any(|copy| {
            let copy_name = copy.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("{copy_name}-"))
        });
        if of_a_copy {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes, when dropped, the grader's folders of the copies of the workbook it names (after a
/// test that passed; a failed test keeps them, with its scratch folder).
pub struct WorkDirs(pub Vec<PathBuf>);

impl Drop for WorkDirs {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            forget_work_dirs(&self.0.iter().map(PathBuf::as_path).collect::<Vec<_>>());
        }
    }
}

/// An empty folder of one test's own. A test that passes removes it; a test that fails keeps it,
/// and says where, to be looked into.
pub struct Scratch {
    path: PathBuf,
    /// Kept when its test fails (every folder but one in the repository itself).
    keep_on_failure: bool,
}

impl Scratch {
    /// A folder under the system's temporary folder, in `retry-workbook-tests`.
    pub fn new(name: &str) -> Scratch {
        Scratch::under(&std::env::temp_dir().join("retry-workbook-tests"), name)
    }

    /// A folder under `target/grader-tests`, where a copied crate's manifest still finds the
    /// workspace it inherits from.
    pub fn in_target(name: &str) -> Scratch {
        Scratch::under(&root().join("target/grader-tests"), name)
    }

    /// A folder in `parent`, named after `name`, this test run and a number no other scratch
    /// folder of the run has.
    pub fn under(parent: &Path, name: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let number = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("{name}-{}-{number}", std::process::id()));
        // A folder of the same name was left by a failed run whose process had the same id.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch {
            path,
            keep_on_failure: true,
        }
    }

    /// A folder in the repository itself, removed even when its test fails: what it holds
    /// (students' grades) must not stay in a clone where git would see it. Only the class
    /// report's tests (Linux) use one.
    #[cfg(target_os = "linux")]
    pub fn in_repository(name: &str) -> Scratch {
        let mut scratch = Scratch::under(&root(), name);
        scratch.keep_on_failure = false;
        scratch
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() && self.keep_on_failure {
            eprintln!(
                "the failed test's files are kept in {}",
                self.path.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[test]
fn a_scratch_folder_is_removed_when_its_test_passes_and_kept_when_it_fails() {
    let passed = Scratch::new("scratch-passed");
    let path = passed.to_path_buf();
    assert!(path.is_dir());
    drop(passed);
    assert!(!path.exists(), "{} is left behind", path.display());

    // A test that fails unwinds its thread and drops its scratch folder on the way.
    let failed = std::thread::spawn(|| {
        let scratch = Scratch::new("scratch-failed");
        std::panic::panic_any(scratch.to_path_buf());
    })
    .join()
    .expect_err("the thread panicked");
    let path = failed.downcast::<PathBuf>().unwrap();
    assert!(path.is_dir(), "{} is gone", path.display());
    std::fs::remove_dir_all(*path).unwrap();
}
