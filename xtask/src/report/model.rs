//! The grading report's model: what grading one chapter produced ([`Report`], one
//! [`CheckResult`] per check, the [`Outcome`] of each, a [`CompileFailure`]), and what grading a
//! whole submission produced ([`GradeReport`], one [`ChapterGrade`] per chapter). Every renderer
//! and every consumer (`class/`, `commands/`) reads these types; the schemas name their layouts.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::report::chapter_status::ChapterStatus;

/// The version of the JSON report's layout; it changes when a field changes meaning.
pub const REPORT_SCHEMA: &str = "retry-workbook/check-report/v1";

/// The result of grading one chapter.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub chapter: String,
    pub title: String,
    /// What was graded, in words: "your exercise", "the solution", "mutant equal_jitter".
    pub graded: String,
    /// The graded folder, relative to the workspace when it is inside it.
    pub graded_path: String,
    /// The workspace whose checks graded it (absolute): which copy of the workbook this is.
    pub workspace: String,
    pub compiled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_failure: Option<CompileFailure>,
    pub results: Vec<CheckResult>,
    pub score: u32,
    pub max_score: u32,
    /// True when it compiled and no check or visible test failed: each passed, or was skipped.
    pub passed: bool,
    /// Checks that could not run here (they earn nothing); each result says how to run it.
    pub skipped: usize,
    pub compile_ms: u64,
    /// True when nothing the checks are built from had changed since the last build, so its
    /// binary ran without asking cargo.
    pub build_reused: bool,
    /// True when only sources had changed, so rustc compiled the checks without cargo, as cargo
    /// had run it for the last build.
    pub build_replayed: bool,
    pub run_ms: u64,
    /// Where the learner should look first, when something failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_here: Option<String>,
    /// Every test the compiled check binary holds (for `verify`'s rubric check).
    #[serde(skip)]
    pub available_tests: Vec<String>,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub id: String,
    pub kind: CheckKind,
    pub title: String,
    pub points: u32,
    pub earned: u32,
    #[serde(flatten)]
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<Section>,
    pub elapsed_ms: u64,
    /// Peak resident memory of the process the check ran in, in KiB.
    pub peak_memory_kib: u64,
    /// Whether `elapsed_ms` and `peak_memory_kib` are the check's own or shared with others.
    pub timing: Timing,
}

/// Whose time and memory a result shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// The check ran alone: its own time and its process's peak memory.
    Own,
    /// The check passed in a run with others: an equal share of that run's time, and its peak.
    Shared,
}

impl Timing {
    pub fn of(shared: bool) -> Self {
        if shared { Timing::Shared } else { Timing::Own }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A hidden check of the rubric.
    Check,
    /// A test from the graded crate's `tests/` folder.
    Visible,
}

/// A book section a check points to.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub number: String,
    pub title: Option<String>,
    /// `book/src/<page>.md#<anchor>`.
    pub link: String,
}

impl Section {
    /// The section's title after a space (" The formula"), or nothing when it has none: what
    /// follows "§8.3" in a report.
    pub fn spaced_title(&self) -> String {
        self.title
            .as_deref()
            .map(|title| format!(" {title}"))
            .unwrap_or_default()
    }
}

impl Report {
    pub fn hidden(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(|r| r.kind == CheckKind::Check)
    }

    pub fn visible(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(|r| r.kind == CheckKind::Visible)
    }

    /// The result of one check by id.
    pub fn result(&self, id: &str) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.id == id)
    }
}

impl Report {
    /// A report with nothing graded yet: not compiled, no results, no points.
    pub fn empty(
        chapter: &Chapter,
        graded: String,
        graded_path: String,
        workspace: String,
        max_score: u32,
    ) -> Self {
        Self {
            schema: REPORT_SCHEMA,
            chapter: chapter.id.clone(),
            title: chapter.title.clone(),
            graded,
            graded_path,
            workspace,
            compiled: false,
            compile_failure: None,
            results: Vec::new(),
            score: 0,
            max_score,
            passed: false,
            skipped: 0,
            compile_ms: 0,
            build_reused: false,
            build_replayed: false,
            run_ms: 0,
            start_here: None,
            available_tests: Vec::new(),
        }
    }

    /// Sets the score, the pass and the skip count from the results.
    pub fn total(&mut self) {
        self.score = self.results.iter().map(|r| r.earned).sum();
        self.skipped = self.results.iter().filter(|r| r.outcome.skipped()).count();
        self.passed = self.compiled && !self.results.iter().any(|r| r.outcome.failed());
    }

    /// The report of a chapter whose crate is not there at all: nothing compiled, no points.
    pub fn missing(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric, path: String) -> Self {
        let mut report = Self::empty(
            chapter,
            "a missing crate".to_owned(),
            path.clone(),
            workbook.root.display().to_string(),
            rubric.max_points(),
        );
        report.compile_failure = Some(CompileFailure {
            errors: Vec::new(),
            cargo_output: format!("{path} does not exist"),
        });
        report
    }
}

/// How one test ended, as the learner will read it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    /// A failed assertion or a panic. `location` is where it happened; `in_graded_code` tells
    /// whether that was the learner's code rather than the check.
    Failed {
        message: String,
        location: Option<String>,
        in_graded_code: bool,
    },
    TimedOut {
        limit_ms: u64,
    },
    Crashed {
        reason: String,
    },
    OutputFlood {
        limit_bytes: u64,
    },
    /// The rubric names a test the binary does not have.
    Missing,
    /// The check could not run here (no database, an unsupported platform) and said so with
    /// `support::skip`: it earns nothing, and `reason` says how to run it.
    Skipped {
        reason: String,
    },
}

impl Outcome {
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }

    pub fn skipped(&self) -> bool {
        matches!(self, Outcome::Skipped { .. })
    }

    /// Neither passed nor skipped: something the graded code (or an author) must fix.
    pub fn failed(&self) -> bool {
        !self.passed() && !self.skipped()
    }

    /// The outcome's name, as the JSON report spells it.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed { .. } => "failed",
            Outcome::TimedOut { .. } => "timed_out",
            Outcome::Crashed { .. } => "crashed",
            Outcome::OutputFlood { .. } => "output_flood",
            Outcome::Missing => "missing",
            Outcome::Skipped { .. } => "skipped",
        }
    }
}

/// One compiler error, reduced to what a learner needs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompileError {
    /// The file, relative to the graded crate when it is the learner's, else to the workspace.
    pub file: Option<String>,
    pub line: Option<u64>,
    pub message: String,
    /// The compiler's own rendering, with paths shortened.
    pub rendered: String,
    /// True when the error is in the graded crate itself, false when it is in the checks (which
    /// then usually means the crate's public API differs from the chapter's).
    pub in_graded_crate: bool,
}

/// Why the harness did not compile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompileFailure {
    pub errors: Vec<CompileError>,
    /// Cargo's own complaint when no compiler error explains the failure.
    pub cargo_output: String,
}

impl CompileFailure {
    /// The first error as the compiler rendered it, or cargo's complaint when there is none.
    pub fn first_message(&self) -> String {
        self.errors
            .first()
            .map_or_else(|| self.cargo_output.clone(), |e| e.rendered.clone())
    }

    /// `file:line` of the first error, where the learner should start.
    pub fn first_location(&self) -> Option<String> {
        let error = self.errors.first()?;
        Some(format!("{}:{}", error.file.as_ref()?, error.line?))
    }
}

/// One graded chapter inside a whole grade.
#[derive(Debug, Serialize)]
pub struct ChapterGrade {
    pub weight: u32,
    /// weight × score / max_score: partial credit per check.
    pub points: f64,
    /// Shipped files (visible tests, given code) that the submission changed.
    pub tampered: Vec<String>,
    /// Missing, not started (as shipped), does not compile, partial or done.
    pub status: ChapterStatus,
    pub report: Report,
}

/// The version of the grade report's JSON layout.
pub const GRADE_SCHEMA: &str = "retry-workbook/grade-report/v1";

/// How `grade` scores a check that was skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum SkippedPolicy {
    /// Its points count in the maximum and are not earned.
    #[default]
    NotEarned,
    /// It is left out: its points count neither as earned nor in the maximum.
    Excluded,
    /// Its points are earned as if it had passed (only when you know the code is right).
    Earned,
}

impl SkippedPolicy {
    /// Rescores `report`'s skipped checks under this policy.
    pub fn apply(self, report: &mut Report) {
        for result in report.results.iter_mut().filter(|r| r.outcome.skipped()) {
            match self {
                SkippedPolicy::NotEarned => {}
                SkippedPolicy::Excluded => report.max_score -= result.points,
                SkippedPolicy::Earned => result.earned = result.points,
            }
        }
        report.total();
    }
}

/// The grade of a whole submission.
#[derive(Debug, Serialize)]
pub struct GradeReport {
    pub schema: &'static str,
    /// Which grader and checks produced the report, and whether the student controlled them.
    pub grader: GraderStamp,
    pub chapters: Vec<ChapterGrade>,
    /// Sum over chapters of weight × earned / max.
    pub points: f64,
    pub max_points: f64,
    pub passed: bool,
}

/// This grader's version: the xtask crate's.
pub const GRADER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Who graded a report, and with what.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GraderStamp {
    /// The grader's version.
    pub version: String,
    /// A fingerprint of the grader's own sources (`xtask/src`, its manifest and the lockfile):
    /// two graders of one version built from different code differ here.
    #[serde(default)]
    pub build: String,
    /// A fingerprint of the checks used (rubrics, check files, mutants of learner-tests
    /// chapters, shared helpers, chapter weights): equal fingerprints mean equal checks.
    pub checks: String,
    /// True when the grader graded the copy of the workbook it is part of: a student's own
    /// machine or Classroom workflow, where the student controls the grader and the checks
    /// too. Such a score is feedback, not a grade.
    pub graded_own_copy: bool,
    /// The graded copy's commit and its committer time (Unix seconds), when it is a git
    /// repository.
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub commit_time: Option<i64>,
    /// `GITHUB_REPOSITORY` and `GITHUB_RUN_ID`, when graded in GitHub Actions.
    #[serde(default)]
    pub github_repository: Option<String>,
    #[serde(default)]
    pub github_run_id: Option<String>,
}
