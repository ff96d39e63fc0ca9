//! Renders a grading report for people (a table) and for tools (JSON).

use std::fmt::{self, Display, Write};

use crate::lang::words::{self, Key, t, tf};
use crate::report::model::Outcome;
use crate::report::model::{CheckKind, CheckResult, Report};
use crate::term::Style;

/// The narrowest the id column gets, so short ids still line up with the header.
const MIN_ID_WIDTH: usize = 30;

/// How a brief report shows its failures: this many in full, with their explanation and book
/// link…
const FULL_FAILURES: usize = 3;
/// …and up to this many failed checks in all, and this many failed visible tests, the rest one
/// line each; it says how many more there are.
const LISTED_CHECKS: usize = 13;
const LISTED_VISIBLE_TESTS: usize = 5;
/// A brief report shows this many compiler errors in full, and lists the next few by their
/// first line.
const FULL_ERRORS: usize = 2;
const LISTED_ERRORS: usize = 8;

/// How a report is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The point first, for a learner: the score and where to start at the top, then the first
    /// few failures in full and the rest one line each (`check`, `watch`).
    Brief,
    /// The point first, then every row and every failure in full (`check --verbose`).
    Verbose,
}

impl Layout {
    fn brief(self) -> bool {
        self == Layout::Brief
    }
}

/// The report laid out as `layout` says.
pub fn render(report: &Report, style: Style, layout: Layout) -> String {
    TextReport {
        report,
        style,
        layout,
    }
    .to_string()
}

/// A report, displayed as the table.
struct TextReport<'a> {
    report: &'a Report,
    style: Style,
    layout: Layout,
}

impl fmt::Display for TextReport<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_text(out, self.report, self.style, self.layout)
    }
}

/// How many failures a brief report still shows in full, and on one line.
struct Budget {
    full: usize,
    listed: usize,
    /// Passed rows are counted on one line, not listed (a brief report with failures).
    fold_passed: bool,
}

impl Budget {
    /// No limits outside a brief layout.
    fn new(layout: Layout, report: &Report) -> Self {
        let full = if layout.brief() {
            FULL_FAILURES
        } else {
            usize::MAX
        };
        Self {
            full,
            listed: usize::MAX,
            fold_passed: layout.brief() && report.results.iter().any(|r| r.outcome.failed()),
        }
    }

    /// Lists up to `listed` failures of the next section, in a brief layout, and at least
    /// `full` of them in full.
    fn section(&mut self, layout: Layout, listed: usize, full: usize) -> &mut Self {
        if layout.brief() {
            self.listed = listed;
            self.full = self.full.max(full);
        }
        self
    }
}

fn write_text(out: &mut impl Write, report: &Report, style: Style, layout: Layout) -> fmt::Result {
    writeln!(
        out,
        "{} — {} ({})",
        style.bold(&format!("{} · {}", report.chapter, report.title)),
        graded_words(&report.graded),
        report.graded_path
    )?;
    if let Some(failure) = &report.compile_failure {
        let verdict = tf(Key::DoesNotCompile, &[&style.red("✗"), &report.max_score]);
        let start = report.start_here.as_ref().map(|place| {
            format!(
                "{} {}",
                style.bold(t(Key::StartHere)),
                tf(Key::FixFirstError, &[place])
            )
        });
        writeln!(out, "{verdict}")?;
        if let Some(start) = &start {
            writeln!(out, "{start}")?;
        }
        writeln!(
            out,
            "{}",
            style.dim(&tf(Key::WorkbookAt, &[&report.workspace]))
        )?;
        render_compile_failure(out, failure, style, layout)?;
        return Ok(());
    }
    let compiled = if report.build_reused {
        t(Key::UnchangedBuild).to_owned()
    } else {
        tf(
            Key::CompiledIn,
            &[&format!("{:.2}", report.compile_ms as f64 / 1e3)],
        )
    };
    let ran = tf(
        Key::ChecksRanIn,
        &[&format!("{:.2}", report.run_ms as f64 / 1e3)],
    );
    let timing = format!("{compiled} · {ran}");
    writeln!(out, "{}", summary(report, style)?)?;
    if let Some(place) = &report.start_here {
        writeln!(out, "{} {place}", style.bold(t(Key::StartHere)))?;
    }
    writeln!(
        out,
        "{}",
        style.dim(&format!(
            "{} · {timing}",
            tf(Key::WorkbookAt, &[&report.workspace])
        ))
    )?;
    out.write_char('\n')?;
    // The id column fits the longest hidden check id, so the points always line up.
    let width = report
        .hidden()
        .map(|r| words::columns(&r.id))
        .max()
        .unwrap_or(0)
        .max(MIN_ID_WIDTH);
    writeln!(
        out,
        "     {} {}  {}",
        words::pad(t(Key::ColumnCheck), width),
        words::pad_left(t(Key::ColumnPoints), 6),
        t(Key::ColumnRule)
    )?;
    let mut budget = Budget::new(layout, report);
    let hidden: Vec<&CheckResult> = report.hidden().collect();
    let checks = budget.section(layout, LISTED_CHECKS, 0);
    render_rows(out, &hidden, t(Key::Checks), width, style, checks)?;
    render_skip_reasons(out, report, style)?;
    let visible: Vec<&CheckResult> = report.visible().collect();
    if !visible.is_empty() {
        writeln!(out, "\n     {}", t(Key::YourVisibleTests))?;
        // The learner's own tests: the first failure in full, whatever the checks showed.
        let tests = budget.section(layout, LISTED_VISIBLE_TESTS, 1);
        render_rows(out, &visible, t(Key::VisibleTests), width, style, tests)?;
    }
    Ok(())
}

/// The score line: points, and how many checks and visible tests passed.
fn summary(report: &Report, style: Style) -> Result<String, fmt::Error> {
    let hidden_passed = report.hidden().filter(|r| r.outcome.passed()).count();
    let visible_passed = report.visible().filter(|r| r.outcome.passed()).count();
    let hidden = report.hidden().count();
    let mut summary = format!(
        "{} · {}",
        tf(Key::Score, &[&report.score, &report.max_score]),
        tf(
            Key::OfPassed,
            &[&hidden_passed, &hidden, &plural_of(hidden, t(Key::Checks))]
        ),
    );
    if report.skipped > 0 {
        summary.push_str(&tf(Key::SkippedCount, &[&report.skipped]));
    }
    let visible = report.visible().count();
    if visible > 0 {
        write!(
            summary,
            " · {}",
            tf(
                Key::OfPassed,
                &[
                    &visible_passed,
                    &visible,
                    &plural_of(visible, t(Key::VisibleTests))
                ]
            )
        )?;
    }
    Ok(if report.passed {
        style.green(&summary)
    } else {
        style.bold(&summary)
    })
}

/// Rows of one section. A brief layout with failures folds the passed rows into one line,
/// shows failures while the budget lasts, and counts the rest.
fn render_rows(
    out: &mut impl Write,
    rows: &[&CheckResult],
    what: &str,
    width: usize,
    style: Style,
    budget: &mut Budget,
) -> fmt::Result {
    let fold_passed = budget.fold_passed;
    let (mut listed, mut unlisted) = (0, 0);
    for result in rows {
        if fold_passed && result.outcome.passed() {
            continue;
        }
        if !result.outcome.failed() {
            render_row(out, result, width, style, false)?;
        } else if budget.listed == 0 {
            unlisted += 1;
        } else {
            budget.listed -= 1;
            listed += 1;
            let full = budget.full > 0;
            budget.full = budget.full.saturating_sub(1);
            render_row(out, result, width, style, full)?;
        }
    }
    if unlisted > 0 {
        let key = if listed > 0 {
            Key::UnlistedMoreFailed
        } else {
            Key::UnlistedFailed
        };
        writeln!(
            out,
            "  {}  {}",
            style.red("…"),
            tf(key, &[&unlisted, &plural_of(unlisted, what)])
        )?;
    }
    let passed = rows.iter().filter(|r| r.outcome.passed()).count();
    if fold_passed && passed > 0 {
        writeln!(
            out,
            "  {}  {}",
            style.green("✓"),
            tf(Key::FoldedPassed, &[&passed, &plural_of(passed, what)])
        )?;
    }
    Ok(())
}

/// A plural noun (`checks`, `visible tests`, `errors`) for `count` of them: without its last
/// `s` for one (a Japanese noun has no plural, and no such `s`).
fn plural_of(count: usize, what: &str) -> &str {
    if count == 1 {
        what.strip_suffix('s').unwrap_or(what)
    } else {
        what
    }
}

/// One row; `full` adds a failure's explanation and its book section under it.
fn render_row(
    out: &mut impl Write,
    result: &CheckResult,
    width: usize,
    style: Style,
    full: bool,
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
    let row = format!(
        "  {mark}  {} {points:>6}  {title}",
        words::pad(&result.id, width)
    );
    writeln!(out, "{}", row.trim_end())?;
    // A skip's reason is said once under the table, for all the checks it applies to.
    if !full || result.outcome.passed() || result.outcome.skipped() {
        return Ok(());
    }
    for line in explain(&result.outcome).lines() {
        writeln!(out, "       {line}")?;
    }
    if let Some(section) = &result.section {
        let title = section.spaced_title();
        writeln!(
            out,
            "       {}",
            style.yellow(&tf(
                Key::BookSection,
                &[&section.number, &title, &section.link]
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
        let checks = plural_of(count, t(Key::Checks));
        writeln!(
            out,
            "\n  {} {}",
            style.yellow("–"),
            tf(Key::SkipReason, &[&count, &checks, &reason])
        )?;
    }
    Ok(())
}

/// What was graded, in the learner's language: the grader names it in English ("your
/// exercise", "the solution", "mutant NAME", "the crate in DIR").
fn graded_words(graded: &str) -> String {
    match graded {
        "your exercise" => t(Key::YourExercise).to_owned(),
        "the solution" => t(Key::TheSolution).to_owned(),
        _ => {
            if let Some(name) = graded.strip_prefix("mutant ") {
                tf(Key::Mutant, &[&name])
            } else if let Some(dir) = graded.strip_prefix("the crate in ") {
                tf(Key::TheCrateIn, &[&dir])
            } else {
                graded.to_owned()
            }
        }
    }
}

/// What went wrong, in the learner's terms.
pub fn explain(outcome: &Outcome) -> String {
    explain_to(outcome, Reader::Learner)
}

/// Who is told why a check did not pass: the cases are the same for both, the words are the
/// reader's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The learner (`check`, `watch`), told about "your code" in the learner's language; a
    /// `todo!()` left and a visible test's own assertion are told apart from other panics.
    Learner,
    /// The instructor (`grade`), told about "the student's code" in the instructor's language.
    Instructor,
}

/// One thing [`explain_to`] says, with `{n}` in its words for its arguments.
#[derive(Debug, Clone, Copy)]
enum Phrase {
    Passed,
    /// A panic in the graded code: the place (`{0}`) and the message (`{1}`).
    PanickedAt,
    /// A panic in the graded code at no known place: the unknown place's words (`{0}`) and the
    /// message (`{1}`).
    PanickedSomewhere,
    UnknownPlace,
    /// A check's own message (`{0}`), for a failure outside the graded code.
    CheckSays,
    /// The time limit in seconds (`{0}`).
    TimedOut,
    /// Why (`{0}`).
    Crashed,
    /// The output limit in MiB (`{0}`).
    OutputFlood,
    Missing,
    /// Why (`{0}`).
    Skipped,
}

impl Reader {
    /// `phrase` in this reader's words.
    fn words(self, phrase: Phrase) -> &'static str {
        match self {
            Reader::Learner => match phrase {
                Phrase::Passed => t(Key::Passed),
                Phrase::PanickedAt | Phrase::PanickedSomewhere => t(Key::YourCodePanicked),
                Phrase::UnknownPlace => t(Key::UnknownPlace),
                // A check's message stays as the check wrote it.
                Phrase::CheckSays => "{0}",
                Phrase::TimedOut => t(Key::TimedOut),
                Phrase::Crashed => t(Key::Crashed),
                Phrase::OutputFlood => t(Key::OutputFlood),
                Phrase::Missing => t(Key::MissingCheck),
                Phrase::Skipped => t(Key::SkippedNoPoints),
            },
            Reader::Instructor => match phrase {
                Phrase::Passed => t(Key::Passed),
                Phrase::PanickedAt => t(Key::StudentPanickedAt),
                Phrase::PanickedSomewhere => t(Key::StudentPanicked),
                Phrase::UnknownPlace => t(Key::UnknownPlace),
                Phrase::CheckSays => t(Key::CheckReported),
                Phrase::TimedOut => t(Key::StudentTimedOut),
                Phrase::Crashed => t(Key::Crashed),
                Phrase::OutputFlood => t(Key::StudentOutputFlood),
                Phrase::Missing => t(Key::MissingCheckForInstructor),
                Phrase::Skipped => t(Key::SkippedOnThisMachine),
            },
        }
    }
}

/// Why a check did not pass (or that it passed), told to `reader`.
pub fn explain_to(outcome: &Outcome, reader: Reader) -> String {
    let say = |phrase, args: &[&dyn Display]| words::fill(reader.words(phrase), args);
    match outcome {
        Outcome::Passed => say(Phrase::Passed, &[]),
        Outcome::Failed {
            message,
            location,
            in_graded_code,
        } => {
            let message = message.trim();
            if reader == Reader::Learner
                && let Some(verdict) =
                    learners_verdict(message, location.as_deref(), *in_graded_code)
            {
                return verdict;
            }
            match location.as_deref().filter(|_| *in_graded_code) {
                Some(place) => say(Phrase::PanickedAt, &[&place, &message]),
                None if *in_graded_code => {
                    let place = say(Phrase::UnknownPlace, &[]);
                    say(Phrase::PanickedSomewhere, &[&place, &message])
                }
                None => say(Phrase::CheckSays, &[&message]),
            }
        }
        Outcome::TimedOut { limit_ms } => say(
            Phrase::TimedOut,
            &[&format!("{:.1}", *limit_ms as f64 / 1e3)],
        ),
        Outcome::Crashed { reason } => say(Phrase::Crashed, &[reason]),
        Outcome::OutputFlood { limit_bytes } => {
            say(Phrase::OutputFlood, &[&(limit_bytes / (1024 * 1024))])
        }
        Outcome::Missing => say(Phrase::Missing, &[]),
        Outcome::Skipped { reason } => say(Phrase::Skipped, &[reason]),
    }
}

/// What the learner is told of a `todo!()` left (wherever it panicked) and of a visible test's
/// own assertion or panic; None for any other failure.
fn learners_verdict(message: &str, location: Option<&str>, in_graded_code: bool) -> Option<String> {
    if let Some((_, what)) = message.split_once("not yet implemented") {
        let what = what.trim_start_matches(':').trim();
        let place = location
            .filter(|_| in_graded_code)
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        return Some(tf(Key::StillTodo, &[&what, &place]));
    }
    // A visible test's own assertion (or panic): the test's verdict, not a panic in the
    // learner's code.
    let place = location.filter(|l| in_graded_code && in_tests_folder(l))?;
    Some(match assertion(message) {
        Some("") => tf(Key::AssertionFailed, &[&place]),
        Some(rest) => tf(Key::AssertionFailedWith, &[&place, &rest]),
        None => tf(Key::TestPanicked, &[&place, &message]),
    })
}

/// Whether a panic's `file:line:column` is in a crate's `tests/` folder: a visible test's own
/// code.
fn in_tests_folder(location: &str) -> bool {
    let file = location.rsplitn(3, ':').nth(2).unwrap_or(location);
    // By both separators: a location keeps the separators of the system that ran the test.
    file.rsplit(['/', '\\']).nth(1) == Some("tests")
}

/// What an assertion's panic message says after `assertion … failed`: its own message and the
/// values (`left: …`, `right: …`). None for a message that is not an assertion's.
fn assertion(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("assertion")?;
    let (_, after) = rest.split_once("failed")?;
    Some(after.trim_start_matches(':').trim())
}

fn render_compile_failure(
    out: &mut impl Write,
    failure: &crate::report::model::CompileFailure,
    style: Style,
    layout: Layout,
) -> fmt::Result {
    writeln!(out)?;
    // A brief report shows two errors in full and a few more by their first line; a verbose
    // one all of them.
    let (full, listed) = match layout {
        Layout::Brief => (FULL_ERRORS, FULL_ERRORS + LISTED_ERRORS),
        Layout::Verbose => (usize::MAX, usize::MAX),
    };
    let mut warned = false;
    for (index, error) in failure.errors.iter().take(listed).enumerate() {
        if !error.in_graded_crate && !warned {
            warned = true;
            writeln!(out, "{}", style.yellow(t(Key::ApiChanged)))?;
        }
        if index < full {
            writeln!(out, "{}", error.rendered.trim_end())?;
            writeln!(out)?;
        } else {
            let place = match (&error.file, error.line) {
                (Some(file), Some(line)) => format!(" ({file}:{line})"),
                _ => String::new(),
            };
            let first = error.rendered.lines().next().unwrap_or(&error.message);
            writeln!(out, "{}{place}", first.trim_end())?;
        }
    }
    let more = failure.errors.len().saturating_sub(listed);
    if more > 0 {
        write!(
            out,
            "{}",
            tf(Key::MoreErrors, &[&more, &plural_of(more, t(Key::Errors))])
        )?;
        if layout.brief() {
            write!(out, "{}", t(Key::AddVerboseErrors))?;
        }
        writeln!(out)?;
    } else if listed > full && failure.errors.len() > full {
        writeln!(out)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CompileError, CompileFailure};
    use crate::report::model::{REPORT_SCHEMA, Timing};

    fn row(id: &str, kind: CheckKind, outcome: Outcome) -> CheckResult {
        CheckResult {
            id: id.to_owned(),
            kind,
            title: format!("the rule of {id}"),
            points: 1,
            earned: u32::from(outcome.passed()),
            outcome,
            section: Some(crate::report::model::Section {
                number: "22.3".to_owned(),
                title: Some("Retry only what waiting can fix".to_owned()),
                link: "book/src/ch22-saga-retries.md#223-retry-only-what-waiting-can-fix"
                    .to_owned(),
            }),
            elapsed_ms: 1,
            peak_memory_kib: 1,
            timing: Timing::Own,
        }
    }

    fn todo(what: &str) -> Outcome {
        Outcome::Failed {
            message: format!("not yet implemented: {what}"),
            location: Some("exercises/ch22-saga-retries/src/lib.rs:133:9".to_owned()),
            in_graded_code: true,
        }
    }

    /// A chapter with two checks passed, twenty failed, and three visible tests failed: one by
    /// its own assertion.
    fn report() -> Report {
        let mut results = vec![
            row("classify.passes", CheckKind::Check, Outcome::Passed),
            row("retry.passes", CheckKind::Check, Outcome::Passed),
        ];
        results.extend((0..20).map(|n| {
            row(
                &format!("saga.check_{n:02}"),
                CheckKind::Check,
                todo(&format!("Saga::run(case {n})")),
            )
        }));
        results.push(row(
            "tests/visible.rs: a_503_is_transient",
            CheckKind::Visible,
            Outcome::Failed {
                message: "assertion `left == right` failed: a 503 is transient\n  left: \
                          Permanent\n right: Transient"
                    .to_owned(),
                location: Some("exercises/ch22-saga-retries/tests/visible.rs:30:9".to_owned()),
                in_graded_code: true,
            },
        ));
        results.extend((0..2).map(|n| {
            row(
                &format!("tests/visible.rs: saga_{n}"),
                CheckKind::Visible,
                todo("Saga::run"),
            )
        }));
        let mut report = Report {
            schema: REPORT_SCHEMA,
            chapter: "ch22".to_owned(),
            title: "Retry design inside a saga".to_owned(),
            graded: "your exercise".to_owned(),
            graded_path: "exercises/ch22-saga-retries".to_owned(),
            workspace: "/home/learner/retry-workbook".to_owned(),
            compiled: true,
            compile_failure: None,
            results,
            score: 0,
            max_score: 0,
            passed: false,
            skipped: 0,
            compile_ms: 1_500,
            build_reused: false,
            build_replayed: false,
            run_ms: 140,
            start_here: Some("exercises/ch22-saga-retries/src/lib.rs:84".to_owned()),
            available_tests: Vec::new(),
        };
        report.max_score = 22;
        report.total();
        report
    }

    fn broken() -> Report {
        let errors = (0..12)
            .map(|n| CompileError {
                file: Some("exercises/ch22-saga-retries/src/lib.rs".to_owned()),
                line: Some(10 + n),
                message: format!("cannot find value `x{n}` in this scope"),
                rendered: format!(
                    "error[E0425]: cannot find value `x{n}` in this scope\n --> \
                     exercises/ch22-saga-retries/src/lib.rs:{}:5",
                    10 + n
                ),
                in_graded_crate: true,
            })
            .collect();
        Report {
            compiled: false,
            compile_failure: Some(CompileFailure {
                errors,
                cargo_output: String::new(),
            }),
            results: Vec::new(),
            start_here: Some("exercises/ch22-saga-retries/src/lib.rs:10".to_owned()),
            ..report()
        }
    }

    fn plain(report: &Report, layout: Layout) -> String {
        render(report, Style::PLAIN, layout)
    }

    #[test]
    fn brief_snapshot() {
        insta::assert_snapshot!(plain(&report(), Layout::Brief));
    }

    #[test]
    fn brief_compile_failure_snapshot() {
        insta::assert_snapshot!(plain(&broken(), Layout::Brief));
    }

    #[test]
    fn what_was_graded_is_named_in_the_readers_language() {
        use crate::lang::{Lang, speaking};
        let crate_in = "the crate in /tmp/alice/exercises/ch08-full-jitter";
        assert_eq!(graded_words(crate_in), crate_in);
        assert_eq!(
            speaking(Lang::Ja, || graded_words(crate_in)),
            "/tmp/alice/exercises/ch08-full-jitter のクレート"
        );
        assert_eq!(
            speaking(Lang::Ja, || graded_words("mutant off_by_one")),
            "ミュータント off_by_one"
        );
    }

    #[test]
    fn a_japanese_report_keeps_its_columns_and_says_nothing_in_english() {
        use crate::lang::{Lang, speaking};
        let text = speaking(Lang::Ja, || plain(&report(), Layout::Brief));
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].starts_with("得点 2/22 · チェック 22 件中 2 件に合格"),
            "{text}"
        );
        assert!(lines[2].starts_with("ここから始めましょう: "), "{text}");
        // The points column ends at the same terminal column in the header and in each row.
        let header = lines.iter().find(|l| l.contains("ルール")).unwrap();
        let row = lines.iter().find(|l| l.contains("saga.check_00")).unwrap();
        let end = |line: &str, what: &str| {
            words::columns(&line[..line.find(what).unwrap()]) + words::columns(what)
        };
        assert_eq!(end(header, "点"), end(row, "0/1"), "{text}");
        for english in [
            "Score",
            "Start here",
            "passed",
            "failed",
            "visible tests",
            "→ book",
        ] {
            assert!(!text.contains(english), "{english}: {text}");
        }
        assert!(
            text.contains("まだ todo!() のままです: Saga::run(case 0)"),
            "{text}"
        );
    }

    #[test]
    fn verbose_shows_every_row_in_full_with_the_point_first() {
        let text = plain(&report(), Layout::Verbose);
        assert!(text.lines().nth(1).unwrap().starts_with("Score 2/22"));
        assert_eq!(text.matches("still a todo!()").count(), 22, "{text}");
        assert_eq!(text.matches("✓  ").count(), 2, "{text}");
        assert!(!text.contains("--verbose"), "{text}");
        let broken = plain(&broken(), Layout::Verbose);
        assert_eq!(broken.matches("error[E0425]").count(), 12, "{broken}");
    }

    #[test]
    fn a_report_that_passes_lists_every_row() {
        let mut report = report();
        report.results.retain(|r| r.outcome.passed());
        report.total();
        let text = plain(&report, Layout::Brief);
        assert!(text.contains("✓  classify.passes"), "{text}");
        assert!(text.contains("✓  retry.passes"), "{text}");
    }

    #[test]
    fn each_reader_is_told_the_same_failure_in_its_own_words() {
        let left = todo("Saga::run");
        assert_eq!(
            explain_to(&left, Reader::Learner),
            "still a todo!(): Saga::run (exercises/ch22-saga-retries/src/lib.rs:133:9)"
        );
        assert_eq!(
            explain_to(&left, Reader::Instructor),
            "the student's code panicked at exercises/ch22-saga-retries/src/lib.rs:133:9: not \
             yet implemented: Saga::run"
        );
        let checks_own = Outcome::Failed {
            message: " 3 attempts, not 2 ".to_owned(),
            location: None,
            in_graded_code: false,
        };
        assert_eq!(
            explain_to(&checks_own, Reader::Learner),
            "3 attempts, not 2"
        );
        assert_eq!(
            explain_to(&checks_own, Reader::Instructor),
            "the check reported: 3 attempts, not 2"
        );
    }

    #[test]
    fn a_visible_test_that_panics_outside_an_assertion_says_the_test_panicked() {
        let in_test = |message: &str, location: &str| {
            explain(&Outcome::Failed {
                message: message.to_owned(),
                location: Some(location.to_owned()),
                in_graded_code: true,
            })
        };
        assert_eq!(
            in_test(
                "called `Result::unwrap()` on an `Err` value: \"nope\"",
                "exercises/ch01-strong-medicine/tests/visible.rs:12:7"
            ),
            "the test itself panicked at exercises/ch01-strong-medicine/tests/visible.rs:12:7: \
             called `Result::unwrap()` on an `Err` value: \"nope\""
        );
        assert_eq!(
            in_test(
                "assertion failed: delay <= cap",
                "C:\\wb\\exercises\\ch01\\tests\\visible.rs:3:5"
            ),
            "the test's assertion at C:\\wb\\exercises\\ch01\\tests\\visible.rs:3:5 failed: \
             delay <= cap"
        );
    }
}
