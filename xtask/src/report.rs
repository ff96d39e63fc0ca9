//! Renders a grading report for people (a table) and for tools (JSON).

use std::fmt::{self, Write};

use crate::grading::{CheckKind, CheckResult, Report};
use crate::runner::Outcome;
use crate::term::Style;

/// The narrowest the id column gets, so short ids still line up with the header.
const MIN_ID_WIDTH: usize = 30;

/// The report as a table, with a failure's explanation under its row.
pub fn render_text(report: &Report, style: Style) -> String {
    TextReport { report, style }.to_string()
}

/// A report, displayed as the table.
struct TextReport<'a> {
    report: &'a Report,
    style: Style,
}

impl fmt::Display for TextReport<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_text(out, self.report, self.style)
    }
}

fn write_text(out: &mut impl Write, report: &Report, style: Style) -> fmt::Result {
    writeln!(
        out,
        "{} — {} ({})",
        style.bold(&format!("{} · {}", report.chapter, report.title)),
        report.graded,
        report.graded_path
    )?;
    writeln!(
        out,
        "{}",
        style.dim(&format!("workbook: {}", report.workspace))
    )?;
    if let Some(failure) = &report.compile_failure {
        render_compile_failure(out, failure, style)?;
        writeln!(
            out,
            "\n{} it does not compile, so no check could run (0/{} points).",
            style.red("✗"),
            report.max_score
        )?;
        if let Some(place) = &report.start_here {
            writeln!(
                out,
                "Start here: fix the first error, at {place}, then check again."
            )?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        style.dim(&format!(
            "{} · checks ran in {:.2} s",
            if report.build_reused {
                "unchanged since the last build".to_owned()
            } else {
                format!("compiled in {:.2} s", report.compile_ms as f64 / 1e3)
            },
            report.run_ms as f64 / 1e3
        ))
    )?;
    out.write_char('\n')?;
    // The id column fits the longest hidden check id, so the points always line up.
    let width = report
        .hidden()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0)
        .max(MIN_ID_WIDTH);
    writeln!(out, "  {:<3}{:<width$} {:>6}  rule", "", "check", "points")?;
    for result in report.hidden() {
        render_row(out, result, width, style)?;
    }
    render_skip_reasons(out, report, style)?;
    let visible: Vec<&CheckResult> = report.visible().collect();
    if !visible.is_empty() {
        writeln!(out, "\n     your visible tests")?;
        for result in &visible {
            render_row(out, result, width, style)?;
        }
    }
    let hidden_passed = report.hidden().filter(|r| r.outcome.passed()).count();
    let visible_passed = report.visible().filter(|r| r.outcome.passed()).count();
    let mut summary = format!(
        "Score {}/{} · {hidden_passed} of {} checks passed",
        report.score,
        report.max_score,
        report.hidden().count(),
    );
    if report.skipped > 0 {
        write!(
            summary,
            " · {} skipped (not run here, no points)",
            report.skipped
        )?;
    }
    if !visible.is_empty() {
        write!(
            summary,
            " · {visible_passed} of {} visible tests passed",
            report.visible().count()
        )?;
    }
    out.write_char('\n')?;
    writeln!(
        out,
        "{}",
        if report.passed {
            style.green(&summary)
        } else {
            style.bold(&summary)
        }
    )?;
    Ok(())
}

fn render_row(
    out: &mut impl Write,
    result: &CheckResult,
    width: usize,
    style: Style,
) -> fmt::Result {
    let mark = if result.outcome.passed() {
        style.green("✓")
    } else if result.outcome.skipped() {
        style.yellow("–")
    } else {
        style.red("✗")
    };
    let points = match result.kind {
        CheckKind::Check => format!("{}/{}", result.earned, result.points),
        CheckKind::Visible => String::new(),
    };
    let title = match result.kind {
        CheckKind::Check => result.title.as_str(),
        CheckKind::Visible => "",
    };
    let row = format!("  {mark}  {:<width$} {points:>6}  {title}", result.id);
    writeln!(out, "{}", row.trim_end())?;
    // A skip's reason is said once under the table, for all the checks it applies to.
    if result.outcome.passed() || result.outcome.skipped() {
        return Ok(());
    }
    for line in explain(&result.outcome).lines() {
        writeln!(out, "       {line}")?;
    }
    if let Some(section) = &result.section {
        let title = section
            .title
            .as_deref()
            .map(|t| format!(" {t}"))
            .unwrap_or_default();
        writeln!(
            out,
            "       {}",
            style.yellow(&format!(
                "→ book §{}{title} ({})",
                section.number, section.link
            ))
        )?;
    }
    Ok(())
}

/// Why checks were skipped and how to run them: each reason once, with how many checks it kept out.
fn render_skip_reasons(out: &mut impl Write, report: &Report, style: Style) -> fmt::Result {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for result in report.hidden() {
        if let Outcome::Skipped { reason } = &result.outcome {
            match reasons.iter_mut().find(|(seen, _)| seen == reason) {
                Some((_, count)) => *count += 1,
                None => reasons.push((reason, 1)),
            }
        }
    }
    for (reason, count) in reasons {
        let checks = if count == 1 { "check" } else { "checks" };
        writeln!(
            out,
            "\n  {} {count} {checks} skipped, no points: {reason}",
            style.yellow("–")
        )?;
    }
    Ok(())
}

/// What went wrong, in the learner's terms.
pub fn explain(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Passed => "passed".to_owned(),
        Outcome::Failed {
            message,
            location,
            in_graded_code,
        } => {
            let message = message.trim();
            if let Some((_, what)) = message.split_once("not yet implemented") {
                let what = what.trim_start_matches(':').trim();
                let place = location
                    .as_deref()
                    .filter(|_| *in_graded_code)
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default();
                format!("still a todo!(): {what}{place}")
            } else if *in_graded_code {
                let place = location.as_deref().unwrap_or("an unknown place");
                format!("your code panicked at {place}: {message}")
            } else {
                message.to_owned()
            }
        }
        Outcome::TimedOut { limit_ms } => format!(
            "did not finish within {:.1} s of real time and was stopped: an endless loop, a retry \
             that never gives up, a future that never completes, or a blocking \
             std::thread::sleep are the usual causes (checks run on a paused tokio clock, where \
             tokio sleeps cost no real time)",
            *limit_ms as f64 / 1e3
        ),
        Outcome::Crashed { reason } => format!("crashed: {reason}"),
        Outcome::OutputFlood { limit_bytes } => format!(
            "printed more than {} MiB of output (a check may print at most that much); remove the printing from the loop",
            limit_bytes / (1024 * 1024)
        ),
        Outcome::Missing => {
            "this check is missing from the check binary: the chapter's rubric and its check \
             files disagree (an author's error, not yours)"
                .to_owned()
        }
        Outcome::Skipped { reason } => format!("skipped, no points: {reason}"),
    }
}

fn render_compile_failure(
    out: &mut impl Write,
    failure: &crate::harness::CompileFailure,
    style: Style,
) -> fmt::Result {
    writeln!(out)?;
    let shown = 3;
    let mut warned = false;
    for error in failure.errors.iter().take(shown) {
        if !error.in_graded_crate && !warned {
            warned = true;
            writeln!(
                out,
                "{}",
                style.yellow(
                    "The hidden checks do not compile against your crate: its public API (names, \
                     parameters, types) must stay as the exercise gives it."
                )
            )?;
        }
        writeln!(out, "{}", error.rendered.trim_end())?;
        writeln!(out)?;
    }
    if failure.errors.len() > shown {
        writeln!(out, "… and {} more errors.", failure.errors.len() - shown)?;
    }
    if failure.errors.is_empty() {
        writeln!(out, "{}", failure.cargo_output.trim_end())?;
    }
    Ok(())
}

/// The report as pretty JSON, schema `retry-workbook/check-report/v1`.
pub fn render_json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("a report always serializes")
}
