//! `cargo xtask grade`: grade several chapters at once, with weighted points and a total —
//! the instructor's command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use crate::curriculum::shipped::Shipped;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::grade::grader::{Grader, Target};
use crate::report::chapter_status::{ChapterStatus, round_points};
use crate::report::formats;
use crate::report::grade_text;
use crate::report::model::ChapterGrade;
use crate::report::model::GraderStamp;
use crate::report::model::Report;
use crate::report::model::{GRADE_SCHEMA, GradeReport, SkippedPolicy};
use crate::term::{self, Style};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum GradeFormat {
    /// For the instructor: each chapter's status, checks and points, the total, then what fails
    /// in each chapter the student began.
    #[default]
    Text,
    /// JSON (schema retry-workbook/grade-report/v1).
    Json,
    /// JUnit XML, for any CI's test report view.
    Junit,
    /// GitHub Classroom's autograding result (also written base64-encoded to $GITHUB_OUTPUT as
    /// `result=…` when that variable is set).
    Classroom,
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
    /// What a skipped check (one that could not run here, e.g. without a database) is worth.
    #[arg(long, value_enum, default_value_t)]
    pub skipped: SkippedPolicy,
}

pub fn run(args: GradeArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapters = workbook.ready_chapters_or(&args.chapters)?;
    let grader = Grader {
        checks_dir: args.checks_dir.clone(),
        ..Grader::new(&workbook)
    };
    let stamp = GraderStamp::new(
        &workbook,
        &chapters,
        args.checks_dir.as_deref(),
        args.workspace.as_deref(),
    )?;
    let mut grades = Vec::new();
    for chapter in chapters {
        grades.push(grade_chapter(&grader, chapter, &args)?);
    }
    let points = grades.iter().map(|g| g.points).sum();
    for grade in &mut grades {
        grade.points = round_points(grade.points);
    }
    let grade = GradeReport {
        schema: GRADE_SCHEMA,
        grader: stamp,
        points: round_points(points),
        max_points: grades.iter().map(|g| f64::from(g.weight)).sum(),
        passed: grades.iter().all(|g| g.report.passed),
        chapters: grades,
    };
    let copy = args.workspace.as_deref().unwrap_or(&workbook.root);
    print_grade(&grade, args.format, copy)?;
    Ok(if grade.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Grades one chapter of the submission: its report under the skipped policy, its weighted
/// points, the shipped files it changed, and its status.
fn grade_chapter(grader: &Grader, chapter: &Chapter, args: &GradeArgs) -> Result<ChapterGrade> {
    let workbook = grader.workbook;
    let exercise = match &args.workspace {
        Some(dir) => dir.join("exercises").join(chapter.stem()),
        None => workbook.exercise_dir(chapter),
    };
    let exercise_found = exercise.is_dir();
    let (mut report, tampered, as_shipped) = if exercise_found {
        let shipped = Shipped::load(workbook, chapter)?;
        let tampered = tampered_files(grader, chapter, &shipped, &exercise)?;
        let as_shipped = untouched(&shipped, &exercise);
        let report = grader.grade(chapter, &Target::Path(exercise))?;
        (report, tampered, as_shipped)
    } else {
        let rubric = grader.rubric(chapter)?;
        let missing = Report::missing(workbook, chapter, &rubric, exercise.display().to_string());
        (missing, Vec::new(), false)
    };
    args.skipped.apply(&mut report);
    // Every format speaks the grader's language in its prose (titles, messages: GitHub Classroom
    // shows them to the student); only the text also gets the edition's section headings and
    // links, as JSON, JUnit and Classroom keep the links that scripts follow.
    if args.format == GradeFormat::Text {
        crate::report::book_lang::localize(workbook, &mut report);
    }
    let fraction = if report.max_score == 0 {
        0.0
    } else {
        f64::from(report.score) / f64::from(report.max_score)
    };
    let status = ChapterStatus::of(
        !exercise_found,
        as_shipped,
        report.compiled,
        report.hidden().any(|r| r.outcome.failed()),
        report.score,
        report.max_score,
    );
    Ok(ChapterGrade {
        weight: chapter.weight,
        points: f64::from(chapter.weight) * fraction,
        tampered,
        status,
        report,
    })
}

/// Prints the grade of the copy at `copy` in `format`; Classroom's result also goes to
/// `$GITHUB_OUTPUT` when that is set.
fn print_grade(grade: &GradeReport, format: GradeFormat, copy: &Path) -> Result<()> {
    match format {
        GradeFormat::Text => {
            term::print(grade_text::render(
                &grade.chapters,
                grade.points,
                grade.max_points,
                &copy.display().to_string(),
                Style::for_stdout(),
            ));
        }
        GradeFormat::Json => println!("{}", serde_json::to_string_pretty(grade)?),
        GradeFormat::Junit => print!("{}", formats::junit(&grade.chapters)),
        GradeFormat::Classroom => {
            let result = serde_json::to_string(&formats::classroom(&grade.chapters))?;
            println!("{result}");
            if let Some(output) = std::env::var_os("GITHUB_OUTPUT") {
                let line = format!("result={}\n", formats::base64(result.as_bytes()));
                std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&output)
                    .and_then(|mut file| std::io::Write::write_all(&mut file, line.as_bytes()))
                    .context("writing the result to $GITHUB_OUTPUT")?;
            }
        }
    }
    Ok(())
}

/// Whether the student has not begun the exercise in `dir`: no shipped file changed, and none
/// that the build needs (the manifest, `src/`) is gone. A missing example or visible test is no
/// start.
fn untouched(shipped: &Shipped, dir: &Path) -> bool {
    shipped.files.keys().all(|file| {
        let needed = file == "Cargo.toml" || file.starts_with("src/");
        shipped.is_as_shipped(dir, file) || (!needed && !dir.join(file).exists())
    })
}

/// Files the submission must not change (the manifest, a build script, the visible tests and
/// the rubric's given files) that differ from the shipped exercise's record.
fn tampered_files(
    grader: &Grader,
    chapter: &Chapter,
    shipped: &Shipped,
    submitted: &Path,
) -> Result<Vec<String>> {
    let rubric = grader.rubric(chapter)?;
    Ok(shipped
        .protected(&rubric, true)
        .into_iter()
        .filter(|file| !shipped.is_as_shipped(submitted, file))
        .map(|file| format!("exercises/{}/{file}", chapter.stem()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exercise_is_untouched_until_its_code_or_manifest_changes() {
        let dir = crate::util::scratch_dir("untouched");
        let write = |file: &str, text: &str| {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("Cargo.toml", "[package]\nname = \"x\"\n");
        write("src/lib.rs", "pub fn f() { todo!() }\n");
        write("examples/predict.rs", "fn main() {}\n");
        let shipped = Shipped::of_folder(&dir).unwrap();
        assert!(untouched(&shipped, &dir));
        std::fs::remove_file(dir.join("examples/predict.rs")).unwrap();
        assert!(untouched(&shipped, &dir), "a missing example is no start");
        write("src/notes.rs", "// mine\n");
        assert!(untouched(&shipped, &dir), "an unused new file is no start");
        write("src/lib.rs", "pub fn f() {}\n");
        assert!(!untouched(&shipped, &dir), "the code changed");
        std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
        assert!(!untouched(&shipped, &dir), "the code is gone");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
