//! The class report (schema `retry-workbook/class-report/v1`): every student's points per
//! chapter, the distribution of totals, and how much of the class passes each check. The
//! gradebook CSV and the HTML page are renderings of it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::class::reports::{Entry, Expected, Outcome, SectionView};
use crate::class::time;
use crate::grading;
use crate::workbook::{Chapter, Rubric, Workbook};

/// The version of the class report's layout; it changes when a field changes meaning.
pub const CLASS_SCHEMA: &str = "retry-workbook/class-report/v1";

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
    /// Every check of every chapter with the share of the class that passes it, the checks most
    /// missed first.
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
    pub points: f64,
    pub score: u32,
    pub max_score: u32,
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
    /// Graded students who pass it, out of `graded`; a chapter that is missing or does not
    /// compile passes none of its checks.
    pub passed: usize,
    pub graded: usize,
    /// passed / graded (0 when nobody was graded).
    pub share: f64,
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
    let infos: Vec<ChapterInfo> = chapters
        .iter()
        .map(|chapter| {
            let rubric = Rubric::for_chapter(workbook, chapter, checks_dir)?;
            Ok(ChapterInfo {
                id: chapter.id.clone(),
                title: chapter.title.clone(),
                weight: chapter.weight,
                max_score: rubric.max_points(),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let max_total: f64 = chapters.iter().map(|c| f64::from(c.weight)).sum();
    let students: Vec<StudentRow> = entries
        .iter()
        .map(|entry| student_row(entry, chapters, max_total, due))
        .collect();
    let checks = check_shares(workbook, chapters, checks_dir, entries)?;
    Ok(ClassReport {
        schema: CLASS_SCHEMA.to_owned(),
        generated_at: time::format_utc(time::now()),
        grader: GraderInfo {
            version: crate::class::stamp::GRADER_VERSION.to_owned(),
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
        max_total,
        chapters: Vec::new(),
    };
    match &entry.outcome {
        Outcome::Graded(grade) => {
            row.status = "graded".to_owned();
            row.total = grade.points;
            for chapter in chapters {
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
                    points: graded.points,
                    score: report.score,
                    max_score: report.max_score,
                    missing: report.missing(),
                    compiled: report.compiled,
                    tampered: graded.tampered.clone(),
                    failed_checks: report
                        .results
                        .iter()
                        .filter(|r| r.kind == "check" && !r.passed())
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
            from: width * i as f64,
            to: width * (i + 1) as f64,
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
        mean: (count > 0).then(|| totals.iter().sum::<f64>() / count as f64),
        median,
        min: totals.first().copied(),
        max: totals.last().copied(),
        bins,
    }
}

/// Each rubric check with the share of graded students who pass it, most missed first.
fn check_shares(
    workbook: &Workbook,
    chapters: &[Chapter],
    checks_dir: Option<&std::path::Path>,
    entries: &[Entry],
) -> anyhow::Result<Vec<CheckShare>> {
    let grades: Vec<_> = entries
        .iter()
        .filter_map(|entry| match &entry.outcome {
            Outcome::Graded(grade) => Some(grade),
            _ => None,
        })
        .collect();
    let mut passes: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut sections: BTreeMap<(&str, &str), SectionView> = BTreeMap::new();
    for grade in &grades {
        for chapter in &grade.chapters {
            for result in chapter.report.results.iter().filter(|r| r.kind == "check") {
                let key = (chapter.report.chapter.as_str(), result.id.as_str());
                *passes.entry(key).or_default() += usize::from(result.passed());
                if let Some(section) = &result.section {
                    sections.entry(key).or_insert_with(|| section.clone());
                }
            }
        }
    }
    let mut shares = Vec::new();
    for chapter in chapters {
        let rubric = Rubric::for_chapter(workbook, chapter, checks_dir)?;
        for check in &rubric.checks {
            let key = (chapter.id.as_str(), check.id.as_str());
            let passed = passes.get(&key).copied().unwrap_or(0);
            let section = sections.get(&key).cloned().or_else(|| {
                check.section.as_deref().map(|number| {
                    let section = grading::chapter_section(workbook, chapter, number);
                    SectionView {
                        number: section.number,
                        title: section.title,
                        link: section.link,
                    }
                })
            });
            shares.push(CheckShare {
                chapter: chapter.id.clone(),
                id: check.id.clone(),
                title: check.title.clone(),
                points: check.points,
                section,
                passed,
                graded: grades.len(),
                share: if grades.is_empty() {
                    0.0
                } else {
                    passed as f64 / grades.len() as f64
                },
            });
        }
    }
    // Most missed first; ties keep the book's order.
    shares.sort_by(|a, b| a.share.total_cmp(&b.share));
    Ok(shares)
}
