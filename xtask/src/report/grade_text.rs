//! The text `grade` prints, for the instructor who grades a student's copy: first where the
//! student stands in each chapter and the total, then what fails in each chapter the student
//! began, in words about the student's code. The learner's advice ("fix this, then check
//! again") belongs to `check`; here nobody is told to run anything.

use std::fmt::{self, Write};

use crate::lang::words::{self, Key, t, tf};
use crate::report::chapter_status::ChapterStatus;
use crate::report::model::ChapterGrade;
use crate::report::model::{CheckResult, Report};
use crate::report::text::{Reader, explain_to};
use crate::term::Style;

/// The grade of the copy at `copy`: a summary table, then the details of each chapter begun.
pub fn render(
    chapters: &[ChapterGrade],
    points: f64,
    max_points: f64,
    copy: &str,
    style: Style,
) -> String {
    let mut out = String::new();
    write_grade(&mut out, chapters, points, max_points, copy, style)
        .expect("writing to a String cannot fail");
    out
}

fn write_grade(
    out: &mut String,
    chapters: &[ChapterGrade],
    points: f64,
    max_points: f64,
    copy: &str,
    style: Style,
) -> fmt::Result {
    writeln!(out, "{}\n", style.bold(&tf(Key::GradeOfCopy, &[&copy])))?;
    summary(out, chapters, points, max_points)?;
    for chapter in chapters {
        details(out, chapter, style)?;
    }
    Ok(())
}

fn summary(
    out: &mut String,
    chapters: &[ChapterGrade],
    points: f64,
    max_points: f64,
) -> fmt::Result {
    row(
        out,
        t(Key::ColumnChapter),
        t(Key::ColumnStatus),
        t(Key::Checks),
        t(Key::ColumnPoints),
    )?;
    for chapter in chapters {
        let report = &chapter.report;
        let checks = match chapter.status {
            ChapterStatus::Missing | ChapterStatus::DoesNotCompile => "—".to_owned(),
            _ => tf(
                Key::OfTotal,
                &[
                    &report.hidden().filter(|r| r.outcome.passed()).count(),
                    &report.hidden().count(),
                ],
            ),
        };
        let earned = format!("{:.2}", chapter.points);
        let weight = format!("{:.2}", f64::from(chapter.weight));
        row(
            out,
            &report.chapter,
            chapter.status.label(),
            &checks,
            &tf(Key::OfTotal, &[&earned, &weight]),
        )?;
    }
    let points = format!("{points:.2}");
    let max_points = format!("{max_points:.2}");
    row(
        out,
        t(Key::ColumnTotal),
        "",
        "",
        &tf(Key::OfTotal, &[&points, &max_points]),
    )
}

/// One line of the summary table, its columns padded by display width (a Japanese character is
/// two columns wide).
fn row(out: &mut String, chapter: &str, status: &str, checks: &str, points: &str) -> fmt::Result {
    writeln!(
        out,
        "  {} {} {}  {}",
        words::pad(chapter, 8),
        words::pad(status, 17),
        words::pad_left(checks, 9),
        words::pad_left(points, 13)
    )
}

/// What fails in a chapter the student began; nothing for one missing or not started, nor for
/// one done with its shipped files as shipped.
fn details(out: &mut String, chapter: &ChapterGrade, style: Style) -> fmt::Result {
    let report = &chapter.report;
    let heading = style.bold(&format!("{} · {}", report.chapter, report.title));
    match chapter.status {
        ChapterStatus::Missing | ChapterStatus::NotStarted => {}
        // The table says it all, unless a shipped file changed.
        ChapterStatus::Done if chapter.tampered.is_empty() => {}
        ChapterStatus::DoesNotCompile => {
            writeln!(
                out,
                "\n{}",
                tf(Key::StudentDoesNotCompile, &[&heading, &report.max_score])
            )?;
            compile_errors(out, report, style)?;
        }
        ChapterStatus::Partial | ChapterStatus::Done => {
            let passed = report.hidden().filter(|r| r.outcome.passed()).count();
            let args: [&dyn std::fmt::Display; 5] = [
                &heading,
                &passed,
                &report.hidden().count(),
                &report.score,
                &report.max_score,
            ];
            writeln!(out, "\n{}", tf(Key::StudentPasses, &args))?;
            for result in report.hidden().filter(|r| !r.outcome.passed()) {
                unpassed_check(out, result, style)?;
            }
            visible_tests(out, report)?;
        }
    }
    for file in &chapter.tampered {
        writeln!(
            out,
            "  {}",
            style.yellow(&tf(Key::StudentChangedFile, &[file]))
        )?;
    }
    Ok(())
}

/// The first compiler error, and how many more there are.
fn compile_errors(out: &mut String, report: &Report, style: Style) -> fmt::Result {
    let Some(failure) = &report.compile_failure else {
        return Ok(());
    };
    let Some(first) = failure.errors.first() else {
        for line in failure.cargo_output.trim_end().lines() {
            writeln!(out, "  {line}")?;
        }
        return Ok(());
    };
    if !first.in_graded_crate {
        writeln!(out, "  {}", style.yellow(t(Key::StudentApiChanged)))?;
    }
    for line in first.rendered.trim_end().lines() {
        writeln!(out, "  {line}")?;
    }
    let more = failure.errors.len() - 1;
    if more > 0 {
        writeln!(out, "  {}", tf(Key::MoreErrorsCount, &[&more]))?;
    }
    Ok(())
}

/// A check that did not pass: its row, why, and the book section of its rule.
fn unpassed_check(out: &mut String, result: &CheckResult, style: Style) -> fmt::Result {
    let mark = if result.outcome.skipped() {
        style.yellow("–")
    } else {
        style.red("✗")
    };
    writeln!(
        out,
        "  {mark} {}  {}/{}  {}",
        result.id, result.earned, result.points, result.title
    )?;
    for line in explain_to(&result.outcome, Reader::Instructor).lines() {
        writeln!(out, "      {line}")?;
    }
    if let Some(section) = &result.section {
        let title = section.spaced_title();
        writeln!(
            out,
            "      {}",
            style.dim(&tf(Key::TheRule, &[&section.number, &title, &section.link]))
        )?;
    }
    Ok(())
}

/// How many of the student's visible tests pass, and which do not.
fn visible_tests(out: &mut String, report: &Report) -> fmt::Result {
    let visible: Vec<&CheckResult> = report.visible().collect();
    if visible.is_empty() {
        return Ok(());
    }
    let failing: Vec<&str> = visible
        .iter()
        .filter(|r| r.outcome.failed())
        .map(|r| r.id.as_str())
        .collect();
    let passing = visible.len() - failing.len();
    let line = if failing.is_empty() {
        tf(Key::StudentVisibleTests, &[&passing, &visible.len()])
    } else {
        tf(
            Key::StudentVisibleTestsFailing,
            &[&passing, &visible.len(), &failing.join(", ")],
        )
    };
    writeln!(out, "  {line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructor_text_snapshot() {
        let chapters = crate::report::formats::tests::sample();
        let text = render(
            &chapters,
            0.5,
            3.0,
            "/home/teacher/submissions/alice",
            Style::PLAIN,
        );
        for learner_words in ["check again", "cargo xtask", "your code", "you "] {
            assert!(!text.contains(learner_words), "{learner_words}: {text}");
        }
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_instructors_text_speaks_japanese_with_its_table_aligned() {
        let chapters = crate::report::formats::tests::sample();
        let text = crate::lang::speaking(crate::lang::Lang::Ja, || {
            render(
                &chapters,
                0.5,
                3.0,
                "/home/teacher/submissions/alice",
                Style::PLAIN,
            )
        });
        // Every row of the table ends in the same column, counted as a terminal shows it.
        let table: Vec<&str> = text.lines().skip(2).take(4).collect();
        let ends: Vec<usize> = table.iter().map(|line| words::columns(line)).collect();
        assert!(ends.iter().all(|end| *end == ends[0]), "{ends:?}\n{text}");
        for japanese in [
            "/home/teacher/submissions/alice にあるコピーの成績",
            "  章       状態",
            "コンパイル不可",
            "学生のコードはチェック 4 件中 1 件に合格しています",
            "学生のコードがコンパイルできないため",
            "警告: 学生が exercises/ch01-strong-medicine/tests/visible.rs を変更しています",
            "ルール: 本書 §8.3",
            "このマシンではスキップ（0 点）",
            "実時間 2.0 秒以内に終わらなかった",
        ] {
            assert!(text.contains(japanese), "{japanese}: {text}");
        }
        // The sample's titles and the checks' evidence are English, as the hidden checks write them.
        for english in [
            "Grade of",
            "chapter",
            "status",
            "total",
            " of 4",
            "the student",
            "rubric points",
            "does not compile",
            "partial",
            "warning",
            "the rule:",
            "skipped",
            "did not finish",
            "the check reported",
        ] {
            assert!(!text.contains(english), "{english}: {text}");
        }
    }
}
