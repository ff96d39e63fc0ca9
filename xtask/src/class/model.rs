//! The class report (schema `retry-workbook/class-report/v2`): every student's status and points
//! per chapter, the distribution of totals, where the class stands in each chapter, and how much
//! of the class passes each check. The gradebook CSV and the HTML page are renderings of it.
//!
//! v2 changed from v1: a check's `share` counts only the students who attempted its chapter and
//! whose code compiles (`attempted`), with the others counted beside; chapters and students'
//! chapters gained a status and raw check counts; points have two decimals and shares four.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::class::reports::{Entry, Expected, Outcome, SectionView};
use crate::class::time;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::grade::grader;
use crate::report::chapter_status::{ChapterStatus, round_points, round_share};

/// The version of the class report's layout; it changes when a field changes meaning.
pub const CLASS_SCHEMA: &str = "retry-workbook/class-report/v2";

/// How many bars the distribution of totals has.
const BINS: usize = 10;

#[derive(Debug, Serialize, Deserialize)]
pub struct ClassReport {
    pub schema: String,
    /// When the report was made (RFC 3339, UTC).
    pub generated_at: String,
    pub grader: GraderInfo,
    /// The deadline late submissions are measured against, if one was given.
    pub due: Option<String>,
    pub chapters: Vec<ChapterInfo>,
    /// One row per student, in roster order.
    pub students: Vec<StudentRow>,
    pub totals: Distribution,
    /// Every check of every chapter with the share of the students who attempted its chapter
    /// that pass it, the checks most missed first.
    pub checks: Vec<CheckShare>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct GraderInfo {
    pub version: String,
    /// The fingerprint of the grader's sources.
    pub build: String,
    /// The fingerprint of the checks the class is graded with.
    pub checks: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ChapterInfo {
    pub id: String,
    pub title: String,
    pub weight: u32,
    pub max_score: u32,
    /// How many checks its rubric has.
    pub checks: usize,
    /// How many graded students are at each status in it.
    pub students: StatusCounts,
}

/// Graded students by their status in one chapter.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    pub missing: usize,
    pub not_started: usize,
    pub does_not_compile: usize,
    pub partial: usize,
    pub done: usize,
}

impl StatusCounts {
    /// The count of each status in `statuses`.
    pub fn of(statuses: impl IntoIterator<Item = ChapterStatus>) -> Self {
        let mut counts = Self::default();
        for status in statuses {
            *counts.count_mut(status) += 1;
        }
        counts
    }

    fn count_mut(&mut self, status: ChapterStatus) -> &mut usize {
        match status {
            ChapterStatus::Missing => &mut self.missing,
            ChapterStatus::NotStarted => &mut self.not_started,
            ChapterStatus::DoesNotCompile => &mut self.does_not_compile,
            ChapterStatus::Partial => &mut self.partial,
            ChapterStatus::Done => &mut self.done,
        }
    }

    /// How many students are at `status`.
    pub fn count(&self, status: ChapterStatus) -> usize {
        match status {
            ChapterStatus::Missing => self.missing,
            ChapterStatus::NotStarted => self.not_started,
            ChapterStatus::DoesNotCompile => self.does_not_compile,
            ChapterStatus::Partial => self.partial,
            ChapterStatus::Done => self.done,
        }
    }

    /// The students whose checks say something: they attempted the chapter and it compiles.
    pub fn attempted(&self) -> usize {
        self.partial + self.done
    }

    /// The students its checks leave out, in words: "2 not started, 1 does not compile"; empty
    /// when there are none.
    pub fn left_out(&self) -> String {
        self.describe(&[
            ChapterStatus::NotStarted,
            ChapterStatus::DoesNotCompile,
            ChapterStatus::Missing,
        ])
    }

    /// The counts of `statuses` that are not zero, in words, in that order.
    pub fn describe(&self, statuses: &[ChapterStatus]) -> String {
        statuses
            .iter()
            .filter(|&&status| self.count(status) > 0)
            .map(|&status| format!("{} {}", self.count(status), status.label()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct StudentRow {
    pub student: String,
    /// `graded`, `failed` (the grading produced no report), `missing` (no copy), or `rejected`
    /// (a report that could not be merged).
    pub status: String,
    /// Why there is no grade, for `failed` and `rejected`.
    pub reason: Option<String>,
    /// False when the result is feedback rather than a grade; `untrusted_because` says why.
    pub trusted: bool,
    pub untrusted_because: Vec<String>,
    /// The report file the result came from.
    pub source: String,
    /// When the graded work was committed (RFC 3339, UTC), when known.
    pub submitted_at: Option<String>,
    /// Whether it was committed after the deadline; `null` when there is no deadline or no
    /// commit time.
    pub late: Option<bool>,
    /// Weighted points: the sum over chapters of weight × score / max score.
    pub total: f64,
    pub max_total: f64,
    pub chapters: Vec<StudentChapter>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct StudentChapter {
    pub id: String,
    pub status: ChapterStatus,
    pub points: f64,
    pub score: u32,
    pub max_score: u32,
    /// Checks passed, of `checks`.
    pub checks_passed: usize,
    pub checks: usize,
    /// The student's copy has no folder for this chapter.
    pub missing: bool,
    pub compiled: bool,
    /// Shipped files the student changed.
    pub tampered: Vec<String>,
    /// The ids of the checks that did not pass.
    pub failed_checks: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Distribution {
    /// How many students have a total (status `graded`).
    pub graded: usize,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Counts of totals in equal ranges from 0 to the maximum; the last range includes it.
    pub bins: Vec<Bin>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Bin {
    pub from: f64,
    pub to: f64,
    pub count: usize,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CheckShare {
    pub chapter: String,
    pub id: String,
    pub title: String,
    pub points: u32,
    pub section: Option<SectionView>,
    /// Students who pass it, of `attempted`: the graded students who attempted the chapter and
    /// whose code compiles (status `partial` or `done`).
    pub passed: usize,
    pub attempted: usize,
    /// passed / attempted; `null` when nobody attempted the chapter.
    pub share: Option<f64>,
    /// Graded students left out of the share, by their status in the chapter.
    pub not_started: usize,
    pub does_not_compile: usize,
    pub missing: usize,
    /// Every graded student.
    pub graded: usize,
}

impl CheckShare {
    /// The graded students its share leaves out, by status.
    pub fn left_out(&self) -> StatusCounts {
        StatusCounts {
            missing: self.missing,
            not_started: self.not_started,
            does_not_compile: self.does_not_compile,
            ..StatusCounts::default()
        }
    }
}

/// Builds the class report from every student's entry.
pub fn build(
    workbook: &Workbook,
    chapters: &[Chapter],
    checks_dir: Option<&std::path::Path>,
    expected: &Expected,
    due: Option<i64>,
    entries: &[Entry],
) -> anyhow::Result<ClassReport> {
    let rubrics: Vec<Rubric> = chapters
        .iter()
        .map(|chapter| {
            crate::curriculum::translation::learners_rubric(workbook, chapter, checks_dir)
        })
        .collect::<anyhow::Result<_>>()?;
    let max_total: f64 = chapters.iter().map(|c| f64::from(c.weight)).sum();
    let students: Vec<StudentRow> = entries
        .iter()
        .map(|entry| student_row(entry, chapters, &rubrics, max_total, due))
        .collect();
    let infos: Vec<ChapterInfo> = chapters
        .iter()
        .zip(&rubrics)
        .map(|(chapter, rubric)| ChapterInfo {
            id: chapter.id.clone(),
            title: chapter.title.clone(),
            weight: chapter.weight,
            max_score: rubric.max_points(),
            checks: rubric.checks.len(),
            students: status_counts(&students, &chapter.id),
        })
        .collect();
    let checks = check_shares(workbook, chapters, &rubrics, entries, &infos);
    Ok(ClassReport {
        schema: CLASS_SCHEMA.to_owned(),
        generated_at: time::format_utc(time::now()),
        grader: GraderInfo {
            version: crate::report::model::GRADER_VERSION.to_owned(),
            build: expected.build.clone(),
            checks: expected.checks.clone(),
        },
        due: due.map(time::format_utc),
        chapters: infos,
        totals: distribution(&students, max_total),
        students,
        checks,
    })
}

fn student_row(
    entry: &Entry,
    chapters: &[Chapter],
    rubrics: &[Rubric],
    max_total: f64,
    due: Option<i64>,
) -> StudentRow {
    let due = entry.due.or(due);
    let mut row = StudentRow {
        student: entry.student.clone(),
        status: String::new(),
        reason: None,
        trusted: entry.untrusted.is_empty(),
        untrusted_because: entry.untrusted.clone(),
        source: entry.source.clone(),
        submitted_at: entry.submitted_at.map(time::format_utc),
        late: due.zip(entry.submitted_at).map(|(due, at)| at > due),
        total: 0.0,
        max_total: round_points(max_total),
        chapters: Vec::new(),
    };
    match &entry.outcome {
        Outcome::Graded(grade) => {
            row.status = "graded".to_owned();
            row.total = round_points(grade.points);
            for (chapter, rubric) in chapters.iter().zip(rubrics) {
                let Some(graded) = grade
                    .chapters
                    .iter()
                    .find(|c| c.report.chapter == chapter.id)
                else {
                    continue;
                };
                let report = &graded.report;
                row.chapters.push(StudentChapter {
                    id: chapter.id.clone(),
                    status: graded.status(),
                    points: round_points(graded.points),
                    score: report.score,
                    max_score: report.max_score,
                    checks_passed: report.checks().filter(|r| r.passed()).count(),
                    // A chapter that did not compile has no results: none of its checks passed.
                    checks: match report.checks().count() {
                        0 => rubric.checks.len(),
                        ran => ran,
                    },
                    missing: report.missing(),
                    compiled: report.compiled,
                    tampered: graded.tampered.clone(),
                    failed_checks: report
                        .checks()
                        .filter(|r| !r.passed())
                        .map(|r| r.id.clone())
                        .collect(),
                });
            }
        }
        Outcome::Failed(error) => {
            row.status = "failed".to_owned();
            row.reason = Some(error.reason.clone());
        }
        Outcome::Missing => {
            row.status = "missing".to_owned();
            row.reason = Some("no copy of the student's work".to_owned());
        }
        Outcome::Rejected(reason) => {
            row.status = "rejected".to_owned();
            row.reason = Some(reason.clone());
        }
    }
    row
}

/// The graded students of `chapter` by their status in it.
fn status_counts(students: &[StudentRow], chapter: &str) -> StatusCounts {
    StatusCounts::of(
        students
            .iter()
            .filter(|s| s.status == "graded")
            .flat_map(|s| s.chapters.iter().filter(|c| c.id == chapter))
            .map(|c| c.status),
    )
}

fn distribution(students: &[StudentRow], max_total: f64) -> Distribution {
    let mut totals: Vec<f64> = students
        .iter()
        .filter(|s| s.status == "graded")
        .map(|s| s.total)
        .collect();
    totals.sort_by(f64::total_cmp);
    let width = max_total / BINS as f64;
    let mut bins: Vec<Bin> = (0..BINS)
        .map(|i| Bin {
            from: round_points(width * i as f64),
            to: round_points(width * (i + 1) as f64),
            count: 0,
        })
        .collect();
    for total in &totals {
        let index = if width > 0.0 {
            ((total / width) as usize).min(BINS - 1)
        } else {
            0
        };
        bins[index].count += 1;
    }
    let count = totals.len();
    let median = match count {
        0 => None,
        n if n % 2 == 1 => Some(totals[n / 2]),
        n => Some((totals[n / 2 - 1] + totals[n / 2]) / 2.0),
    };
    Distribution {
        graded: count,
        mean: (count > 0).then(|| round_points(totals.iter().sum::<f64>() / count as f64)),
        median: median.map(round_points),
        min: totals.first().copied(),
        max: totals.last().copied(),
        bins,
    }
}

/// Each rubric check with the share of the students who attempted its chapter (and whose code
/// compiles) that pass it, most missed first; checks of chapters nobody attempted come last.
fn check_shares(
    workbook: &Workbook,
    chapters: &[Chapter],
    rubrics: &[Rubric],
    entries: &[Entry],
    infos: &[ChapterInfo],
) -> Vec<CheckShare> {
    let mut passes: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut sections: BTreeMap<(&str, &str), SectionView> = BTreeMap::new();
    let graded_chapters = entries
        .iter()
        .filter_map(|entry| match &entry.outcome {
            Outcome::Graded(grade) => Some(grade),
            _ => None,
        })
        .flat_map(|grade| &grade.chapters);
    for chapter in graded_chapters {
        let attempted = chapter.status().attempted();
        for result in chapter.report.checks() {
            let key = (chapter.report.chapter.as_str(), result.id.as_str());
            if attempted {
                *passes.entry(key).or_default() += usize::from(result.passed());
            }
            if let Some(section) = &result.section {
                sections.entry(key).or_insert_with(|| section.clone());
            }
        }
    }
    let mut shares = Vec::new();
    for ((chapter, info), rubric) in chapters.iter().zip(infos).zip(rubrics) {
        let counts = &info.students;
        for check in &rubric.checks {
            let key = (chapter.id.as_str(), check.id.as_str());
            let passed = passes.get(&key).copied().unwrap_or(0);
            let section = sections.get(&key).cloned().or_else(|| {
                check.section.as_deref().map(|number| {
                    let section = grader::chapter_section(workbook, chapter, number);
                    SectionView {
                        number: section.number,
                        title: section.title,
                        link: section.link,
                    }
                })
            });
            let attempted = counts.attempted();
            shares.push(CheckShare {
                chapter: chapter.id.clone(),
                id: check.id.clone(),
                title: check.title.clone(),
                points: check.points,
                section,
                passed,
                attempted,
                share: (attempted > 0).then(|| round_share(passed as f64 / attempted as f64)),
                not_started: counts.not_started,
                does_not_compile: counts.does_not_compile,
                missing: counts.missing,
                graded: attempted + counts.not_started + counts.does_not_compile + counts.missing,
            });
        }
    }
    // Most missed first, checks nobody attempted last; ties keep the book's order.
    shares.sort_by(|a, b| match (a.share, b.share) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (a, b) => a.is_none().cmp(&b.is_none()),
    });
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_left_out_are_named_by_status() {
        let counts = StatusCounts {
            missing: 0,
            not_started: 2,
            does_not_compile: 1,
            partial: 1,
            done: 3,
        };
        assert_eq!(counts.attempted(), 4);
        assert_eq!(counts.left_out(), "2 not started, 1 does not compile");
        assert_eq!(StatusCounts::default().left_out(), "");
        let student = StatusCounts::of([ChapterStatus::NotStarted, ChapterStatus::Done]);
        assert_eq!(
            student.describe(&ChapterStatus::ALL),
            "1 not started, 1 done"
        );
    }
}
