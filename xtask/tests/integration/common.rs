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

/// The grader binary, to run in the repository: English texts whatever the machine's locale, no
/// colour, and none of the GitHub Actions variables that make it write a step's outputs.
pub fn xtask() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("WORKBOOK_LANG", "en")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_REPOSITORY");
    command
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

/// An empty folder of one test's own. A test that passes removes it; a test that fails keeps it,
/// and says where, to be looked into.
pub struct Scratch {
    path: PathBuf,
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
        Scratch { path }
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
        if std::thread::panicking() {
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
