//! The output folder of a class run. Each student's result is written the moment it is known,
//! so an interrupted run loses at most the students in progress:
//!
//! ```text
//! OUT/reports/<student>.json        the student's grade report (retry-workbook/grade-report/v1)
//! OUT/reports/<student>.error.json  or why the student could not be graded
//! OUT/state/<student>.json          the fingerprint of what was graded, to skip it next time
//! OUT/gradebook.csv, class-report.json, class-report.html
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::class::reports::{self, Entry, Expected, GradingError};
use crate::class::roster::{Student, file_stem};

const STATE_SCHEMA: &str = "retry-workbook/class-state/v1";

/// What was graded for one student, and when.
#[derive(Debug, Serialize, Deserialize)]
pub struct State {
    pub schema: String,
    pub student: String,
    /// The fingerprint of the copy, the checks, the chapters and the grader together.
    pub fingerprint: String,
    /// When the grading finished (RFC 3339, UTC).
    pub graded_at: String,
    pub elapsed_ms: u64,
}

pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    pub fn open(dir: &Path) -> Result<Self> {
        for sub in ["reports", "state"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .with_context(|| format!("creating {}", path.display()))?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    pub fn reports_dir(&self) -> PathBuf {
        self.dir.join("reports")
    }

    fn report(&self, name: &str) -> PathBuf {
        self.reports_dir().join(format!("{}.json", file_stem(name)))
    }

    fn error(&self, name: &str) -> PathBuf {
        self.reports_dir()
            .join(format!("{}.error.json", file_stem(name)))
    }

    fn state(&self, name: &str) -> PathBuf {
        self.dir
            .join("state")
            .join(format!("{}.json", file_stem(name)))
    }

    /// The stored result of `student`, when it was graded from exactly `fingerprint`.
    pub fn reusable(
        &self,
        student: &Student,
        fingerprint: &str,
        expected: &Expected,
    ) -> Option<Entry> {
        let state: State =
            serde_json::from_str(&std::fs::read_to_string(self.state(&student.name)).ok()?).ok()?;
        if state.schema != STATE_SCHEMA || state.fingerprint != fingerprint {
            return None;
        }
        let file = [self.report(&student.name), self.error(&student.name)]
            .into_iter()
            .find(|file| file.is_file())?;
        reports::read(&file, &student.name, expected, true).ok()
    }

    /// Keeps a finished grading: the report (or the error), then the state that vouches for it.
    pub fn save(
        &self,
        student: &Student,
        fingerprint: &str,
        result: &Result<String, GradingError>,
        elapsed_ms: u64,
    ) -> Result<PathBuf> {
        let (file, stale) = match result {
            Ok(_) => (self.report(&student.name), self.error(&student.name)),
            Err(_) => (self.error(&student.name), self.report(&student.name)),
        };
        let text = match result {
            Ok(report) => report.clone(),
            Err(error) => serde_json::to_string_pretty(error)?,
        };
        // The state goes first: without it a kept report is never trusted to be current.
        let _ = std::fs::remove_file(self.state(&student.name));
        let _ = std::fs::remove_file(stale);
        write_atomically(&file, &text)?;
        let state = State {
            schema: STATE_SCHEMA.to_owned(),
            student: student.name.clone(),
            fingerprint: fingerprint.to_owned(),
            graded_at: crate::class::time::format_utc(crate::class::time::now()),
            elapsed_ms,
        };
        write_atomically(
            &self.state(&student.name),
            &serde_json::to_string_pretty(&state)?,
        )?;
        Ok(file)
    }
}

/// Writes then renames, so a killed run never leaves half a file.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}
