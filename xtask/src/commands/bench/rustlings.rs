//! The yardstick of the edit figure: rustlings 6 running a passing exercise of its own after the
//! same one-line edit. `rustlings run` asks cargo for the workspace's metadata, builds the
//! exercise, runs its tests, lints it with Clippy and runs it: what a learner there waits for.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use super::{Stopwatch, Timed};
use crate::curriculum::workbook::Workbook;
use crate::tools::Tool;

const RUSTLINGS: Tool = Tool {
    name: "rustlings",
    version: "6.5.0",
    install_time: "about three minutes",
    features: &[],
    folder: "tools",
    // The yardstick as its users install it.
    optimized: true,
};

/// The exercise timed: one with tests, so rustlings builds, tests, lints and runs it.
const EXERCISE: &str = "iterators2";
const EXERCISE_FILE: &str = "exercises/18_iterators/iterators2.rs";

/// What the exercise file holds while it is timed: a small program of ours with two passing
/// tests (their exercise's answer is theirs to give).
const PASSING_EXERCISE: &str = "\
// Written by `cargo xtask bench`: a passing exercise to time rustlings with.

fn initial_upper(word: &str) -> String {
    let mut letters = word.chars();
    match letters.next() {
        Some(first) => first.to_uppercase().chain(letters).collect(),
        None => String::new(),
    }
}

fn main() {
    println!(\"{}\", initial_upper(\"retry\"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_first_letter() {
        assert_eq!(initial_upper(\"retry\"), \"Retry\");
    }

    #[test]
    fn empty_word() {
        assert_eq!(initial_upper(\"\"), \"\");
    }
}
";

/// An initialised rustlings folder, ready to time.
pub struct Rustlings {
    binary: PathBuf,
    dir: PathBuf,
}

impl Rustlings {
    /// Installs rustlings if needed and initialises its exercises in the system's temporary
    /// folder: `rustlings init` joins any cargo workspace around it, so it must not run in ours.
    pub fn prepare(workbook: &Workbook) -> Result<Self> {
        let binary = RUSTLINGS.ensure(workbook)?;
        let parent = std::env::temp_dir().join("retry-workbook-bench");
        let dir = parent.join("rustlings");
        if !dir.join(EXERCISE_FILE).is_file() {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("clearing {}", dir.display()))?;
            }
            std::fs::create_dir_all(&parent)?;
            init(&binary, &parent)?;
        }
        let rustlings = Self { binary, dir };
        rustlings.write(PASSING_EXERCISE)?;
        Ok(rustlings)
    }

    /// The exercise with a line added that differs in each run.
    pub fn edit(&self, run: usize) -> Result<()> {
        self.write(&format!(
            "{PASSING_EXERCISE}\npub const BENCH_EDIT: u32 = {run};\n"
        ))
    }

    /// Times `rustlings run` of the exercise, which must pass.
    pub fn run(&self) -> Result<Timed> {
        let stopwatch = Stopwatch::start();
        let output = Command::new(&self.binary)
            .args(["run", EXERCISE])
            .current_dir(&self.dir)
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null())
            .output()
            .context("running rustlings")?;
        let timed = stopwatch.read();
        if !output.status.success() {
            bail!(
                "rustlings did not pass its exercise:\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(timed)
    }

    fn write(&self, text: &str) -> Result<()> {
        let file = self.dir.join(EXERCISE_FILE);
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))
    }
}

/// `rustlings init` in `parent`, answering its one prompt.
fn init(binary: &Path, parent: &Path) -> Result<()> {
    let mut child = Command::new(binary)
        .arg("init")
        .current_dir(parent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting rustlings init")?;
    child
        .stdin
        .take()
        .context("rustlings init's stdin")?
        .write_all(b"\n")?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "rustlings init failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
