//! Machine-readable renderings of a whole grade: JUnit XML for any CI, and the result format of
//! GitHub Classroom's autograding reporter.

use std::fmt::Write;

use serde::Serialize;

use crate::report::model::{ChapterGrade, CheckKind, Report};
use crate::report::text::explain;
use crate::report::xml::escape;

/// JUnit XML: one `<testsuite>` per chapter, one `<testcase>` per check or visible test.
pub fn junit(chapters: &[ChapterGrade]) -> String {
    let mut xml = String::new();
    write_junit(&mut xml, chapters).expect("writing to a String cannot fail");
    xml
}

fn write_junit(xml: &mut String, chapters: &[ChapterGrade]) -> std::fmt::Result {
    let reports: Vec<&Report> = chapters.iter().map(|c| &c.report).collect();
    let total_tests: usize = reports.iter().map(|r| cases(r)).sum();
    let total_failures: usize = reports.iter().map(|r| failures(r)).sum();
    let total_skipped: usize = reports.iter().map(|r| r.skipped).sum();
    let total_time: f64 = reports
        .iter()
        .map(|r| seconds(r.compile_ms + r.run_ms))
        .sum();
    xml.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        xml,
        "<testsuites name=\"retry-workbook\" tests=\"{total_tests}\" failures=\"{total_failures}\" skipped=\"{total_skipped}\" time=\"{total_time:.3}\">"
    )?;
    for report in reports {
        writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            escape(&format!("{} {}", report.chapter, report.title)),
            cases(report),
            failures(report),
            report.skipped,
            seconds(report.compile_ms + report.run_ms)
        )?;
        writeln!(
            xml,
            "    <properties>\n      <property name=\"score\" value=\"{}\"/>\n      <property name=\"max_score\" value=\"{}\"/>\n    </properties>",
            report.score, report.max_score
        )?;
        if let Some(failure) = &report.compile_failure {
            // Plain text: `grade` asks the compiler for no colour.
            let text: Vec<&str> = failure.errors.iter().map(|e| e.rendered.as_str()).collect();
            writeln!(
                xml,
                "    <testcase classname=\"{}\" name=\"compile\" time=\"{:.3}\">\n      <failure message=\"the crate does not compile\" type=\"compile_error\">{}</failure>\n    </testcase>",
                report.chapter,
                seconds(report.compile_ms),
                escape(&text.join("\n"))
            )?;
        }
        for result in &report.results {
            let classname = match result.kind {
                CheckKind::Check => format!("{}.checks", report.chapter),
                CheckKind::Visible => format!("{}.visible", report.chapter),
            };
            write!(
                xml,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                escape(&classname),
                escape(&result.id),
                seconds(result.elapsed_ms)
            )?;
            if result.outcome.passed() {
                xml.push_str("/>\n");
            } else if result.outcome.skipped() {
                writeln!(
                    xml,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(&explain(&result.outcome))
                )?;
            } else {
                writeln!(
                    xml,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                    escape(&result.title),
                    result.outcome.status(),
                    escape(&explain(&result.outcome))
                )?;
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    Ok(())
}

fn cases(report: &Report) -> usize {
    report.results.len() + usize::from(report.compile_failure.is_some())
}

fn failures(report: &Report) -> usize {
    report.results.iter().filter(|r| r.outcome.failed()).count()
        + usize::from(report.compile_failure.is_some())
}

fn seconds(millis: u64) -> f64 {
    millis as f64 / 1e3
}

/// The result of one runner of GitHub Classroom's autograding: what
/// `classroom-resources/autograding-grading-reporter` reads, base64-encoded, from a step output.
#[derive(Debug, Serialize)]
pub struct ClassroomResult {
    pub version: u32,
    /// "pass" when every test passed, "fail" otherwise, "error" when a chapter did not compile.
    pub status: &'static str,
    pub max_score: u32,
    pub tests: Vec<ClassroomTest>,
}

#[derive(Debug, Serialize)]
pub struct ClassroomTest {
    pub name: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub test_code: String,
    pub score: u32,
    /// Seconds, as text, e.g. "0.01s".
    pub execution_time: String,
}

/// Every hidden check as a Classroom test with its points; compile failures as errors.
pub fn classroom(chapters: &[ChapterGrade]) -> ClassroomResult {
    let mut tests = Vec::new();
    let mut any_error = false;
    for chapter in chapters {
        let report = &chapter.report;
        if let Some(failure) = &report.compile_failure {
            any_error = true;
            let first = failure.errors.first().map(|e| e.rendered.clone());
            tests.push(ClassroomTest {
                name: format!("{} compiles", report.chapter),
                status: "error",
                message: first.or_else(|| Some(failure.cargo_output.clone())),
                test_code: format!("cargo xtask check {}", report.chapter),
                score: 0,
                execution_time: format!("{:.2}s", seconds(report.compile_ms)),
            });
        }
        for result in report.hidden() {
            let passed = result.outcome.passed();
            // The reporter knows pass, fail and error only: a skip is a fail that says so.
            let skipped = if result.outcome.skipped() {
                " [skipped]"
            } else {
                ""
            };
            tests.push(ClassroomTest {
                name: format!(
                    "{} {} — {}{skipped}",
                    report.chapter, result.id, result.title
                ),
                status: if passed { "pass" } else { "fail" },
                message: (!passed).then(|| explain(&result.outcome)),
                test_code: format!("cargo xtask check {}", report.chapter),
                score: result.earned,
                execution_time: format!("{:.2}s", seconds(result.elapsed_ms)),
            });
        }
    }
    let all_passed = chapters.iter().all(|c| c.report.passed);
    ClassroomResult {
        version: 1,
        status: if any_error {
            "error"
        } else if all_passed {
            "pass"
        } else {
            "fail"
        },
        max_score: chapters.iter().map(|c| c.report.max_score).sum(),
        tests,
    }
}

/// Standard base64 with padding (RFC 4648 §4), for the Classroom step output.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::chapter_status::ChapterStatus;
    use crate::report::model::{CheckResult, CompileError, CompileFailure, Outcome, Section};

    fn test_chapter() -> crate::curriculum::workbook::Chapter {
        crate::curriculum::workbook::Chapter {
            id: "ch01".to_owned(),
            slug: "strong-medicine".to_owned(),
            title: "Retries are strong medicine".to_owned(),
            ready: true,
            weight: 1,
        }
    }

    fn row(id: &str, points: u32, outcome: Outcome) -> CheckResult {
        CheckResult {
            id: id.to_owned(),
            kind: CheckKind::Check,
            title: format!("the rule of {id}"),
            points,
            earned: if outcome.passed() { points } else { 0 },
            outcome,
            section: Some(Section {
                number: "8.3".to_owned(),
                title: Some("The formula".to_owned()),
                link: "book/src/ch08-full-jitter.md#83-the-formula".to_owned(),
            }),
            elapsed_ms: 12,
            peak_memory_kib: 3_000,
            timing: crate::report::model::Timing::Own,
        }
    }

    /// Two chapters: one with a passing, a failing and a timed-out check, one that does not compile.
    pub(crate) fn sample() -> Vec<ChapterGrade> {
        let results = vec![
            row("jitter.within_bounds", 2, Outcome::Passed),
            row(
                "jitter.not_deterministic",
                3,
                Outcome::Failed {
                    message: "across 200 seeded runs your delay took only 1 distinct value(s) <always 200 ms>".to_owned(),
                    location: Some("xtask/checks/ch08/jitter.rs:40:9".to_owned()),
                    in_graded_code: false,
                },
            ),
            row("retry.sleeps_asynchronously", 2, Outcome::TimedOut { limit_ms: 2_000 }),
            row(
                "postgres.claims_only_due_rows",
                1,
                Outcome::Skipped {
                    reason: "set WORKBOOK_POSTGRES_URL to run the PostgreSQL checks".to_owned(),
                },
            ),
        ];
        let passing = Report {
            schema: crate::report::model::REPORT_SCHEMA,
            chapter: "ch08".to_owned(),
            title: "Full jitter".to_owned(),
            graded: "the crate in student/exercises/ch08-full-jitter".to_owned(),
            graded_path: "student/exercises/ch08-full-jitter".to_owned(),
            workspace: "/home/student/retry-workbook".to_owned(),
            compiled: true,
            compile_failure: None,
            results,
            score: 2,
            max_score: 8,
            passed: false,
            skipped: 1,
            compile_ms: 400,
            build_reused: false,
            build_replayed: false,
            run_ms: 90,
            start_here: None,
            available_tests: Vec::new(),
        };
        let broken = Report {
            chapter: "ch01".to_owned(),
            title: "Retries are strong medicine".to_owned(),
            compiled: false,
            compile_failure: Some(CompileFailure {
                errors: vec![CompileError {
                    file: Some("src/lib.rs".to_owned()),
                    line: Some(4),
                    message: "mismatched types".to_owned(),
                    rendered: "error[E0308]: mismatched types\n --> src/lib.rs:4:5".to_owned(),
                    in_graded_crate: true,
                }],
                cargo_output: String::new(),
            }),
            results: Vec::new(),
            score: 0,
            max_score: 10,
            ..Report::empty(
                &test_chapter(),
                "a test".to_owned(),
                String::new(),
                "/home/student/retry-workbook".to_owned(),
                0,
            )
        };
        vec![
            ChapterGrade {
                weight: 2,
                points: 2.0 * 2.0 / 8.0,
                tampered: Vec::new(),
                status: ChapterStatus::Partial,
                report: passing,
            },
            ChapterGrade {
                weight: 1,
                points: 0.0,
                tampered: vec!["exercises/ch01-strong-medicine/tests/visible.rs".to_owned()],
                status: ChapterStatus::DoesNotCompile,
                report: broken,
            },
        ]
    }

    #[test]
    fn junit_snapshot() {
        insta::assert_snapshot!(junit(&sample()));
    }

    #[test]
    fn classroom_snapshot() {
        insta::assert_snapshot!(serde_json::to_string_pretty(&classroom(&sample())).unwrap());
    }

    #[test]
    fn text_snapshot() {
        let style = crate::term::Style::PLAIN;
        let text: Vec<String> = sample()
            .iter()
            .map(|c| {
                crate::report::text::render(&c.report, style, crate::report::text::Layout::Verbose)
            })
            .collect();
        insta::assert_snapshot!(text.join("\n"));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(serde_json::to_string_pretty(&sample()[0].report).unwrap());
    }

    #[test]
    fn base64_matches_rfc_4648_examples() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
