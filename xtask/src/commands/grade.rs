//! `cargo xtask grade`: grade several chapters at once, with weighted points and a total —
//! the instructor's command.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::commands::check::{TargetArgs, grade_chapter};
use crate::grading::Report;
use crate::report;
use crate::term::{self, Style};
use crate::workbook::{Chapter, Workbook};

/// The version of the grade report's JSON layout.
pub const GRADE_SCHEMA: &str = "retry-workbook/grade-report/v1";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum GradeFormat {
    /// A table per chapter and a total.
    #[default]
    Text,
    /// JSON (schema retry-workbook/grade-report/v1).
    Json,
}

/// Grade every chapter (or a list) with weighted points: for instructors and CI.
#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Chapters to grade (default: every ready chapter).
    pub chapters: Vec<String>,
    /// A student's copy of the workbook to grade (default: this one). Its exercises are graded
    /// in place and never written to.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Private checks: DIR/<chapter>/chapter.toml and check files replace the public ones.
    #[arg(long, value_name = "DIR")]
    pub checks_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: GradeFormat,
}

/// The grade of a whole submission.
#[derive(Debug, Serialize)]
pub struct GradeReport {
    pub schema: &'static str,
    pub chapters: Vec<ChapterGrade>,
    /// Sum over chapters of weight × earned / max.
    pub points: f64,
    pub max_points: f64,
    pub passed: bool,
}

#[derive(Debug, Serialize)]
pub struct ChapterGrade {
    pub weight: u32,
    /// weight × score / max_score: partial credit per check.
    pub points: f64,
    pub report: Report,
}

pub fn run(args: GradeArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapters: Vec<&Chapter> = if args.chapters.is_empty() {
        workbook.ready_chapters().collect()
    } else {
        args.chapters
            .iter()
            .map(|id| workbook.ready_chapter(id))
            .collect::<Result<_>>()?
    };
    let mut grades = Vec::new();
    for chapter in chapters {
        let exercise = match &args.workspace {
            Some(dir) => dir.join("exercises").join(chapter.stem()),
            None => workbook.exercise_dir(chapter),
        };
        let target = TargetArgs {
            path: Some(exercise),
            checks_dir: args.checks_dir.clone(),
            ..TargetArgs::default()
        };
        let report = grade_chapter(&workbook, chapter, &target, false)?;
        let fraction = if report.max_score == 0 {
            0.0
        } else {
            f64::from(report.score) / f64::from(report.max_score)
        };
        grades.push(ChapterGrade {
            weight: chapter.weight,
            points: f64::from(chapter.weight) * fraction,
            report,
        });
    }
    let grade = GradeReport {
        schema: GRADE_SCHEMA,
        points: grades.iter().map(|g| g.points).sum(),
        max_points: grades.iter().map(|g| f64::from(g.weight)).sum(),
        passed: grades.iter().all(|g| g.report.passed),
        chapters: grades,
    };
    match args.format {
        GradeFormat::Text => {
            let style = Style {
                color: term::color_enabled(),
            };
            for chapter in &grade.chapters {
                println!("{}", report::render_text(&chapter.report, style));
            }
            println!(
                "Total: {:.2} of {:.2} points",
                grade.points, grade.max_points
            );
        }
        GradeFormat::Json => println!("{}", serde_json::to_string_pretty(&grade)?),
    }
    Ok(if grade.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
