//! Reading grade reports back: what `grade --format json` writes (schema
//! `retry-workbook/grade-report/v1`), checked against what this class is graded on before it is
//! merged, and judged trusted or not.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::report::chapter_status::ChapterStatus;
use crate::report::model::GRADE_SCHEMA;
use crate::report::model::{GRADER_VERSION, GraderStamp};

/// A student who could not be graded (the grading hung, crashed or printed no report).
pub const ERROR_SCHEMA: &str = "retry-workbook/class-error/v1";

/// The parts of a grade report the class report uses; other fields are ignored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradeView {
    pub schema: String,
    #[serde(default)]
    pub grader: Option<GraderStamp>,
    pub chapters: Vec<ChapterView>,
    pub points: f64,
    pub max_points: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChapterView {
    pub weight: u32,
    pub points: f64,
    #[serde(default)]
    pub tampered: Vec<String>,
    /// Absent from the reports of graders older than the status.
    #[serde(default)]
    pub status: Option<ChapterStatus>,
    pub report: ChapterReportView,
}

impl ChapterView {
    /// The status the grader gave, or for an older report the nearest it tells (it cannot tell
    /// an untouched exercise from a started one).
    pub fn status(&self) -> ChapterStatus {
        self.status.unwrap_or_else(|| {
            let report = &self.report;
            ChapterStatus::of(
                report.missing(),
                false,
                report.compiled,
                report
                    .checks()
                    .any(|r| !r.passed() && r.status != "skipped"),
                report.score,
                report.max_score,
            )
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChapterReportView {
    pub chapter: String,
    pub title: String,
    #[serde(default)]
    pub graded: String,
    pub compiled: bool,
    #[serde(default)]
    pub compile_failure: Option<serde_json::Value>,
    #[serde(default)]
    pub results: Vec<ResultView>,
    pub score: u32,
    pub max_score: u32,
}

impl ChapterReportView {
    /// The hidden checks' results, without the visible tests.
    pub fn checks(&self) -> impl Iterator<Item = &ResultView> {
        self.results.iter().filter(|r| r.kind == "check")
    }

    /// True when the student's copy had no folder for this chapter.
    pub fn missing(&self) -> bool {
        !self.compiled
            && (self.graded == "a missing crate"
                || self
                    .compile_failure
                    .as_ref()
                    .and_then(|f| f["cargo_output"].as_str())
                    .is_some_and(|text| text.ends_with("does not exist")))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultView {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub points: u32,
    pub earned: u32,
    /// `passed`, `failed`, `timed_out`, `crashed`, `output_flood`, `missing`, `skipped`…: only
    /// `passed` earns.
    pub status: String,
    #[serde(default)]
    pub section: Option<SectionView>,
}

impl ResultView {
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SectionView {
    pub number: String,
    #[serde(default)]
    pub title: Option<String>,
    /// `book/src/<page>.md#<anchor>`.
    pub link: String,
}

/// The record of a student who could not be graded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradingError {
    pub schema: String,
    pub student: String,
    pub reason: String,
    /// The end of the grader's own output, to see why.
    #[serde(default)]
    pub log: String,
}

/// What the class is graded on: a report must match it to be merged.
#[derive(Debug, Clone)]
pub struct Expected {
    pub chapters: Vec<String>,
    pub checks: String,
    /// The fingerprint of this grader's sources.
    pub build: String,
}

/// How one student's result came to be.
#[derive(Debug, Clone)]
pub enum Outcome {
    Graded(GradeView),
    /// The grading did not produce a report.
    Failed(GradingError),
    /// No copy of the student's work.
    Missing,
    /// A report that cannot be merged: wrong schema, chapter set or grader version.
    Rejected(String),
}

/// One student's result, ready for the class report.
#[derive(Debug, Clone)]
pub struct Entry {
    pub student: String,
    pub outcome: Outcome,
    /// Why the result is not to be trusted as a grade; empty when it is.
    pub untrusted: Vec<String>,
    /// The report file it came from, relative to where it was found, or "graded here".
    pub source: String,
    /// When the graded work was committed (Unix seconds), if known.
    pub submitted_at: Option<i64>,
    pub due: Option<i64>,
}

/// Why a folder's reports are distrusted, when they are.
pub const UNTRUSTED_FOLDER: &str = "it came from a folder given as --untrusted-reports";
pub const OWN_COPY: &str = "the student's own copy of the grader produced it (their own \
                            workflow or machine): feedback, not a grade";
pub const OTHER_CHECKS: &str = "it was graded with checks that differ from yours";
pub const OTHER_GRADER: &str =
    "it was graded by a grader of the same version built from other sources than yours";

/// Reads the report or error record in `file` for `student` and checks it against `expected`.
pub fn read(
    file: &Path,
    student: &str,
    expected: &Expected,
    trusted_folder: bool,
) -> Result<Entry> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let mut entry = Entry {
        student: student.to_owned(),
        outcome: Outcome::Missing,
        untrusted: Vec::new(),
        source: file.display().to_string(),
        submitted_at: None,
        due: None,
    };
    if !trusted_folder {
        entry.untrusted.push(UNTRUSTED_FOLDER.to_owned());
    }
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            entry.outcome = Outcome::Rejected(format!("not JSON: {error}"));
            return Ok(entry);
        }
    };
    let schema = value["schema"].as_str().unwrap_or("none");
    if schema == ERROR_SCHEMA {
        entry.outcome = match serde_json::from_value(value) {
            Ok(error) => Outcome::Failed(error),
            Err(error) => Outcome::Rejected(format!("an unreadable error record: {error}")),
        };
        return Ok(entry);
    }
    if schema != GRADE_SCHEMA {
        entry.outcome = Outcome::Rejected(format!(
            "its schema is `{schema}`, not `{GRADE_SCHEMA}` (the output of `cargo xtask grade --format json`)"
        ));
        return Ok(entry);
    }
    let grade: GradeView = match serde_json::from_value(value) {
        Ok(grade) => grade,
        Err(error) => {
            entry.outcome =
                Outcome::Rejected(format!("it does not follow {GRADE_SCHEMA}: {error}"));
            return Ok(entry);
        }
    };
    entry.outcome = match judge(&grade, expected, &mut entry.untrusted) {
        Some(reason) => Outcome::Rejected(reason),
        None => {
            entry.submitted_at = grade.grader.as_ref().and_then(|g| g.commit_time);
            Outcome::Graded(grade)
        }
    };
    Ok(entry)
}

/// A reason to reject the report, or `None`; reasons to distrust it go to `untrusted`.
fn judge(grade: &GradeView, expected: &Expected, untrusted: &mut Vec<String>) -> Option<String> {
    let Some(stamp) = &grade.grader else {
        return Some(format!(
            "it has no grader stamp (a grader older than {GRADER_VERSION} made it), so nothing \
             says which grader and checks produced it"
        ));
    };
    if stamp.version != GRADER_VERSION {
        return Some(format!(
            "grader {} produced it; this is grader {GRADER_VERSION}",
            stamp.version
        ));
    }
    let mut chapters: Vec<&str> = grade
        .chapters
        .iter()
        .map(|c| c.report.chapter.as_str())
        .collect();
    chapters.sort_unstable();
    let mut wanted: Vec<&str> = expected.chapters.iter().map(String::as_str).collect();
    wanted.sort_unstable();
    if chapters != wanted {
        let lacking: Vec<&str> = wanted
            .iter()
            .filter(|c| !chapters.contains(c))
            .copied()
            .collect();
        let extra: Vec<&str> = chapters
            .iter()
            .filter(|c| !wanted.contains(c))
            .copied()
            .collect();
        return Some(format!(
            "it grades other chapters than this class (lacking: {}; extra: {})",
            list_or_none(&lacking),
            list_or_none(&extra)
        ));
    }
    if stamp.graded_own_copy {
        untrusted.push(OWN_COPY.to_owned());
    }
    if stamp.checks != expected.checks {
        untrusted.push(OTHER_CHECKS.to_owned());
    }
    if stamp.build != expected.build {
        untrusted.push(OTHER_GRADER.to_owned());
    }
    None
}

fn list_or_none(items: &[&str]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// Every `.json` file under `dir`, recursively (a downloaded artifact is a folder of its own),
/// with the student each names: the file's stem, less `.error` for an error record.
pub fn files_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for file in crate::util::files_under(dir, &crate::util::NOT_SOURCE_FOLDERS)? {
        if file.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let student = stem.strip_suffix(".error").unwrap_or(&stem).to_owned();
        found.push((student, file));
    }
    Ok(found)
}
