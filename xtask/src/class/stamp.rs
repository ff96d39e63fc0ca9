//! The grader's stamp on a grade report: which grader and checks produced it, and whether the
//! student controlled them. `grade-class --from-reports` reads it to decide what to merge and
//! what to trust.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::class::fingerprint;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::report::model::{GRADER_VERSION, GraderStamp};

impl GraderStamp {
    /// The stamp for grading `chapters` of the copy at `workspace` (this workbook when `None`)
    /// with the checks of `private` (or the public ones).
    pub fn new(
        workbook: &Workbook,
        chapters: &[&Chapter],
        private: Option<&Path>,
        workspace: Option<&Path>,
    ) -> Result<Self> {
        let graded = workspace.unwrap_or(&workbook.root);
        let own = graded.canonicalize().ok() == workbook.root.canonicalize().ok();
        let (commit, commit_time) = last_commit(graded).unzip();
        Ok(Self {
            version: GRADER_VERSION.to_owned(),
            build: grader_build(workbook)?,
            checks: fingerprint::checks(workbook, chapters, private)?,
            graded_own_copy: own,
            commit,
            commit_time,
            github_repository: std::env::var("GITHUB_REPOSITORY").ok(),
            github_run_id: std::env::var("GITHUB_RUN_ID").ok(),
        })
    }
}

/// The fingerprint of this grader's sources.
pub fn grader_build(workbook: &Workbook) -> Result<String> {
    let mut hash = fingerprint::Fingerprint::default();
    let xtask = workbook.root.join("xtask");
    hash.tree(&xtask, &xtask.join("src"))?;
    hash.file(&xtask, &xtask.join("Cargo.toml"))?;
    hash.file(&workbook.root, &workbook.root.join("Cargo.lock"))?;
    Ok(hash.finish())
}

/// The commit checked out in `dir` and its committer time, when `dir` is the top of a git
/// repository (a folder inside someone else's repository does not count).
pub fn last_commit(dir: &Path) -> Option<(String, i64)> {
    if !dir.join(".git").exists() {
        return None;
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["log", "-1", "--format=%H %ct"])
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (commit, time) = text.trim().split_once(' ')?;
    Some((commit.to_owned(), time.parse().ok()?))
}
