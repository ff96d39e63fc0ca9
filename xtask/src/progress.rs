//! The learner's progress, kept in `.workbook/progress.json` at the workspace root. A missing
//! or corrupt file is rebuilt from scratch; it only ever holds what the learner earned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::curriculum::shipped::Shipped;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::report::model::Report;
use crate::util::stable_hash;

/// Progress in every chapter the learner has touched.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Progress {
    #[serde(default)]
    pub chapters: BTreeMap<String, ChapterProgress>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct ChapterProgress {
    /// Every check and visible test passed at least once.
    #[serde(default)]
    pub passed: bool,
    #[serde(default)]
    pub best_score: u32,
    #[serde(default)]
    pub max_score: u32,
    /// How many hints the learner has seen.
    #[serde(default)]
    pub hints_seen: usize,
    /// When the exercise last passed, in seconds since 1970.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_at: Option<u64>,
    /// The [`fingerprint`] of the exercise's files when it last passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_fingerprint: Option<String>,
    /// The last check's result, pass or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_check: Option<LastCheck>,
}

/// One check's result, as the list shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LastCheck {
    /// In seconds since 1970.
    pub at: u64,
    pub score: u32,
    pub max_score: u32,
    pub passed: bool,
}

impl ChapterProgress {
    /// Whether the exercise's files are no longer those it last passed with (false when it
    /// never passed, or passed before the grader kept fingerprints).
    pub fn changed_since_pass(&self, exercise: &Path) -> bool {
        self.passed_fingerprint
            .as_ref()
            .is_some_and(|at_pass| fingerprint(exercise).as_ref() != Some(at_pass))
    }
}

/// A digest of the name and text of every file of the exercise at `dir` (build output left
/// out): it changes with any edit, and only with one.
pub fn fingerprint(dir: &Path) -> Option<String> {
    let files = Shipped::of_folder(dir).ok()?.files;
    let listing: String = files
        .iter()
        .map(|(file, id)| format!("{id} {file}\n"))
        .collect();
    Some(format!("{:016x}", stable_hash(&listing)))
}

/// Now, in seconds since 1970.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A folder for `progress.json` in place of `.workbook/` (tests and the bench use it to keep the
/// learner's real progress untouched).
pub const STATE_DIR_VAR: &str = "WORKBOOK_STATE_DIR";

impl Progress {
    /// `.workbook/progress.json`, or `$WORKBOOK_STATE_DIR/progress.json` when that is set.
    fn path(workbook: &Workbook) -> PathBuf {
        match std::env::var_os(STATE_DIR_VAR) {
            Some(dir) => PathBuf::from(dir).join("progress.json"),
            None => workbook.root.join(".workbook/progress.json"),
        }
    }

    /// Reads the progress file; a missing or unreadable one counts as no progress.
    pub fn load(workbook: &Workbook) -> Self {
        let path = Self::path(workbook);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Self::default();
        };
        serde_json::from_str(&text).unwrap_or_else(|_| {
            eprintln!(
                "{}",
                crate::lang::words::tf(
                    crate::lang::words::Key::ProgressUnreadable,
                    &[&path.display()]
                )
            );
            Self::default()
        })
    }

    pub fn save(&self, workbook: &Workbook) -> Result<()> {
        let path = Self::path(workbook);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let text = serde_json::to_string_pretty(self).expect("progress always serializes");
        // Write then rename, so an interrupted save never leaves a torn file.
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))
    }

    /// Saves the learner's result for `chapter`.
    pub fn record(workbook: &Workbook, chapter: &Chapter, report: &Report) -> Result<()> {
        let mut progress = Self::load(workbook);
        let entry = progress.chapter(&chapter.id);
        let at = now();
        entry.passed |= report.passed;
        entry.best_score = entry.best_score.max(report.score);
        entry.max_score = report.max_score;
        if report.passed {
            entry.passed_at = Some(at);
            entry.passed_fingerprint = fingerprint(&workbook.exercise_dir(chapter));
        }
        entry.last_check = Some(LastCheck {
            at,
            score: report.score,
            max_score: report.max_score,
            passed: report.passed,
        });
        progress.save(workbook)
    }

    pub fn chapter(&mut self, id: &str) -> &mut ChapterProgress {
        self.chapters.entry(id.to_owned()).or_default()
    }

    pub fn passed(&self, id: &str) -> bool {
        self.chapters.get(id).is_some_and(|chapter| chapter.passed)
    }

    /// The first ready chapter the learner has not passed yet.
    pub fn next_chapter<'a>(&self, workbook: &'a Workbook) -> Option<&'a Chapter> {
        workbook
            .ready_chapters()
            .find(|chapter| !self.passed(&chapter.id))
    }
}
