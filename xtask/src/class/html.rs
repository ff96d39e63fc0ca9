//! The class report as one self-contained HTML page (no script, no external file): the
//! distribution of totals, where the class stands in each chapter, a heat map of the share of
//! the students who attempted a chapter passing each of its checks (most missed first, each
//! linked to its book section), and every student's status and points per chapter, with the
//! checks they failed folded under.

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use crate::class::model::{CheckShare, ClassReport, StudentChapter, StudentRow};
use crate::lang;
use crate::lang::words::{Key, t, tf};
use crate::report::chapter_status::ChapterStatus;

/// Where the page's book links lead: a section's `book/src/<page>.md#<anchor>` → the address of
/// that section. A section without an address is named without a link, never with a dead one.
pub type BookLinks = BTreeMap<String, String>;

const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
h1 { margin-bottom: 0.2rem; }
.meta { color: #666; margin-top: 0; }
.warning { background: #fff4d6; border-left: 4px solid #e0a800; padding: 0.5rem 0.8rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 2rem; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f6f6f6; position: sticky; top: 0; }
td.share, td.points { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.share { min-width: 7rem; font-weight: 600; }
code { font-size: 0.9em; }
.badge { display: inline-block; padding: 0 0.4rem; border-radius: 0.6rem; font-size: 0.8em; }
.untrusted { background: #ffd9d9; color: #8a0000; }
.trusted { background: #dcf5dc; color: #1b5e20; }
.wide { overflow-x: auto; }
td.points small { display: block; color: #444; font-weight: normal; }
td.points details { text-align: left; font-size: 0.85em; }
td.points ul { margin: 0.2rem 0 0; padding-left: 1rem; }
td.count { text-align: right; font-variant-numeric: tabular-nums; }
td.left-out { font-size: 0.85em; color: #555; }
svg text { font: 12px system-ui, sans-serif; fill: #444; }
svg .bar { fill: #4a78c2; }
";

/// The page for `report`, its sections linked as `links` says; `book_note` says why some are
/// not linked, when they are not.
pub fn render(report: &ClassReport, links: &BookLinks, book_note: Option<&str>) -> String {
    let mut page = String::new();
    write_page(&mut page, report, links, book_note).expect("writing to a String cannot fail");
    page
}

fn write_page(
    page: &mut String,
    report: &ClassReport,
    links: &BookLinks,
    book_note: Option<&str>,
) -> fmt::Result {
    write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        lang::current().code(),
        t(Key::ClassReport)
    )?;
    header(page, report)?;
    histogram(page, report)?;
    chapters(page, report)?;
    heat_map(page, report, links, book_note)?;
    students(page, report)?;
    page.push_str("</body>\n</html>\n");
    Ok(())
}

fn header(page: &mut String, report: &ClassReport) -> fmt::Result {
    let count = |status: &str| {
        report
            .students
            .iter()
            .filter(|s| s.status == status)
            .count()
    };
    let untrusted = report.students.iter().filter(|s| !s.trusted).count();
    let due = report
        .due
        .as_deref()
        .map(|due| tf(Key::DueOn, &[&escape(due)]))
        .unwrap_or_default();
    writeln!(
        page,
        "<h1>{}</h1>\n<p class=\"meta\">{}</p>",
        t(Key::ClassReport),
        tf(
            Key::MadeBy,
            &[
                &escape(&report.generated_at),
                &escape(&report.grader.version),
                &escape(crate::class::fingerprint::short(&report.grader.checks)),
                &due,
            ]
        )
    )?;
    let chapters = report
        .chapters
        .iter()
        .map(|c| escape(&c.id))
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(
        page,
        "<p id=\"summary\">{}</p>",
        tf(
            Key::ClassSummary,
            &[
                &report.students.len(),
                &count("graded"),
                &count("failed"),
                &count("missing"),
                &count("rejected"),
                &chapters,
            ]
        )
    )?;
    if untrusted > 0 {
        let badge = format!(
            "<span class=\"badge untrusted\">{}</span>",
            t(Key::Untrusted)
        );
        writeln!(
            page,
            "<p class=\"warning\" id=\"untrusted-warning\">{}</p>",
            tf(Key::UntrustedWarning, &[&untrusted, &badge])
        )?;
    }
    Ok(())
}

fn histogram(page: &mut String, report: &ClassReport) -> fmt::Result {
    let totals = &report.totals;
    writeln!(
        page,
        "<section id=\"distribution\">\n<h2>{}</h2>",
        t(Key::DistributionOfTotals)
    )?;
    let (width, height, left, bottom) = (640.0, 220.0, 40.0, 30.0);
    let most = totals
        .bins
        .iter()
        .map(|b| b.count)
        .max()
        .unwrap_or(0)
        .max(1);
    let bar_width = (width - left) / totals.bins.len().max(1) as f64;
    writeln!(
        page,
        "<svg id=\"histogram\" role=\"img\" aria-label=\"{}\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">",
        t(Key::HistogramLabel)
    )?;
    let plot = height - bottom - 10.0;
    for (index, bin) in totals.bins.iter().enumerate() {
        let bar = plot * bin.count as f64 / most as f64;
        let x = left + bar_width * index as f64;
        writeln!(
            page,
            "<rect class=\"bar\" data-count=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
             height=\"{bar:.1}\"><title>{}</title></rect>",
            bin.count,
            x + 2.0,
            10.0 + plot - bar,
            bar_width - 4.0,
            tf(
                Key::HistogramBar,
                &[
                    &bin.count,
                    &format!("{:.1}", bin.from),
                    &format!("{:.1}", bin.to)
                ]
            )
        )?;
        if bin.count > 0 {
            writeln!(
                page,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + bar_width / 2.0,
                10.0 + plot - bar - 3.0,
                bin.count
            )?;
        }
        writeln!(
            page,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.1}</text>",
            height - 10.0,
            bin.from
        )?;
    }
    writeln!(
        page,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.1}</text>\n\
         <line x1=\"{left}\" y1=\"{:.1}\" x2=\"{width}\" y2=\"{:.1}\" stroke=\"#888\"/>\n</svg>",
        width - 4.0,
        height - 10.0,
        report.students.first().map_or(0.0, |s| s.max_total),
        10.0 + plot,
        10.0 + plot
    )?;
    let stat = |value: Option<f64>| value.map_or_else(|| "—".to_owned(), |v| format!("{v:.2}"));
    let of = format!(
        "{:.2}",
        report.students.first().map_or(0.0, |s| s.max_total)
    );
    writeln!(
        page,
        "<p>{}</p>\n</section>",
        tf(
            Key::TotalsStats,
            &[
                &totals.graded,
                &stat(totals.mean),
                &stat(totals.median),
                &stat(totals.min),
                &stat(totals.max),
                &of,
            ]
        )
    )?;
    Ok(())
}

/// How many graded students are at each status, chapter by chapter.
fn chapters(page: &mut String, report: &ClassReport) -> fmt::Result {
    writeln!(
        page,
        "<section id=\"chapters\">\n<h2>{}</h2>\n<p>{}</p>\n\
         <table id=\"chapter-table\">\n<thead><tr><th>{}</th>",
        t(Key::WhereTheClassIs),
        t(Key::ChaptersExplained),
        t(Key::ColumnChapter)
    )?;
    let statuses = ChapterStatus::ALL.iter().rev();
    for status in statuses.clone() {
        write!(page, "<th>{}</th>", status.label())?;
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for chapter in &report.chapters {
        write!(
            page,
            "<tr class=\"chapter\" data-chapter=\"{}\"><td>{} <small>{}</small></td>",
            escape(&chapter.id),
            escape(&chapter.id),
            escape(&chapter.title)
        )?;
        for &status in statuses.clone() {
            write!(
                page,
                "<td class=\"count\" data-status=\"{}\">{}</td>",
                status.id(),
                chapter.students.count(status)
            )?;
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n</section>\n");
    Ok(())
}

fn heat_map(
    page: &mut String,
    report: &ClassReport,
    links: &BookLinks,
    book_note: Option<&str>,
) -> fmt::Result {
    writeln!(
        page,
        "<section id=\"checks\">\n<h2>{}</h2>\n<p>{}</p>",
        t(Key::WhatToTeachAgain),
        t(Key::TeachAgainExplained)
    )?;
    if let Some(note) = book_note {
        writeln!(
            page,
            "<p class=\"warning\" id=\"book-note\">{}</p>",
            escape(note)
        )?;
    }
    write!(
        page,
        "<table id=\"heat-map\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th>\
         <th>{}</th><th>{}</th><th>{}</th></tr></thead>\n<tbody>\n",
        t(Key::ColumnPassing),
        t(Key::ColumnChapter),
        t(Key::ColumnCheck),
        t(Key::ColumnRule),
        t(Key::ColumnBook),
        t(Key::ColumnLeftOut)
    )?;
    for check in &report.checks {
        let (share, background, passing) = match check.share {
            Some(share) => (
                format!(" data-share=\"{share:.4}\""),
                color(share),
                format!("{:.0}%", share * 100.0),
            ),
            None => (String::new(), UNTOUCHED.to_owned(), "—".to_owned()),
        };
        writeln!(
            page,
            "<tr class=\"check\"{share} data-attempted=\"{}\"><td class=\"share\" \
             style=\"background: {background}\">{passing} <small>({}/{})</small></td><td>{}</td>\
             <td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"left-out\">{}</td></tr>",
            check.attempted,
            check.passed,
            check.attempted,
            escape(&check.chapter),
            escape(&check.id),
            escape(&check.title),
            book_link(check, links),
            escape(&check.left_out().left_out())
        )?;
    }
    page.push_str("</tbody>\n</table>\n</section>\n");
    Ok(())
}

/// `§8.3 The formula`, linked to the book when `links` has its address.
fn book_link(check: &CheckShare, links: &BookLinks) -> String {
    let Some(section) = &check.section else {
        return String::new();
    };
    let title = section
        .title
        .as_deref()
        .map(|t| format!(" {t}"))
        .unwrap_or_default();
    let name = escape(&format!("§{}{title}", section.number));
    match links.get(&section.link) {
        Some(href) => format!("<a href=\"{}\">{name}</a>", escape(href)),
        None => name,
    }
}

fn students(page: &mut String, report: &ClassReport) -> fmt::Result {
    writeln!(
        page,
        "<section id=\"students\">\n<h2>{}</h2>\n<p>{}</p>\n<div class=\"wide\">\n\
         <table id=\"student-table\">\n<thead><tr><th>{}</th><th>{}</th>",
        t(Key::Students),
        t(Key::StudentsExplained),
        t(Key::ColumnStudent),
        t(Key::ColumnStatus)
    )?;
    for chapter in &report.chapters {
        write!(
            page,
            "<th title=\"{}\">{}</th>",
            escape(&chapter.title),
            escape(&chapter.id)
        )?;
    }
    write!(
        page,
        "<th>{}</th></tr></thead>\n<tbody>\n",
        t(Key::ColumnTotal)
    )?;
    let titles: BTreeMap<(&str, &str), &str> = report
        .checks
        .iter()
        .map(|c| ((c.chapter.as_str(), c.id.as_str()), c.title.as_str()))
        .collect();
    for row in &report.students {
        student_row(page, report, row, &titles)?;
    }
    page.push_str("</tbody>\n</table>\n</div>\n</section>\n");
    Ok(())
}

fn student_row(
    page: &mut String,
    report: &ClassReport,
    row: &StudentRow,
    titles: &BTreeMap<(&str, &str), &str>,
) -> fmt::Result {
    let trust = if row.trusted {
        format!("<span class=\"badge trusted\">{}</span>", t(Key::Trusted))
    } else {
        format!(
            "<span class=\"badge untrusted\" title=\"{}\">{}</span>",
            escape(
                &row.untrusted_because
                    .iter()
                    .map(|reason| untrusted_reason(reason))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            t(Key::Untrusted)
        )
    };
    let shown = escape(student_status(&row.status));
    let status = match &row.reason {
        Some(reason) => format!("{shown} <small>({})</small>", escape(reason)),
        None => shown,
    };
    let late = if row.late == Some(true) {
        t(Key::Late)
    } else {
        ""
    };
    write!(
        page,
        "<tr class=\"student\" data-student=\"{}\" data-trusted=\"{}\"><td>{}</td><td>{status}{late} {trust}</td>",
        escape(&row.student),
        row.trusted,
        escape(&row.student)
    )?;
    for chapter in &report.chapters {
        match row.chapters.iter().find(|c| c.id == chapter.id) {
            Some(graded) => chapter_cell(page, graded, titles)?,
            None => page.push_str("<td class=\"points\">—</td>"),
        }
    }
    let total = if row.status == "graded" || row.status == "missing" {
        format!("{:.2}", row.total)
    } else {
        "—".to_owned()
    };
    writeln!(page, "<td class=\"points\">{total}</td></tr>")?;
    Ok(())
}

/// A student's chapter: points, status, checks passed, and the failed checks folded (their ids,
/// each rule in its tooltip, so that an opened fold keeps the column narrow).
fn chapter_cell(
    page: &mut String,
    graded: &StudentChapter,
    titles: &BTreeMap<(&str, &str), &str>,
) -> fmt::Result {
    let status = graded.status;
    let background = if status.attempted() {
        let fraction = if graded.max_score == 0 {
            1.0
        } else {
            f64::from(graded.score) / f64::from(graded.max_score)
        };
        color(fraction)
    } else if status == ChapterStatus::DoesNotCompile {
        BROKEN.to_owned()
    } else {
        UNTOUCHED.to_owned()
    };
    let checks = if status.attempted() {
        tf(
            Key::ChecksPassedOf,
            &[&graded.checks_passed, &graded.checks],
        )
    } else {
        String::new()
    };
    write!(
        page,
        "<td class=\"points\" data-status=\"{}\" style=\"background: {background}\" \
         title=\"{}\">{:.2}<small>{}{checks}</small>",
        status.id(),
        tf(Key::PointsOfRubric, &[&graded.score, &graded.max_score]),
        graded.points,
        status.label()
    )?;
    if status == ChapterStatus::Partial && !graded.failed_checks.is_empty() {
        write!(
            page,
            "<details><summary>{}</summary><ul>",
            tf(Key::FailedCount, &[&graded.failed_checks.len()])
        )?;
        for id in &graded.failed_checks {
            let title = titles
                .get(&(graded.id.as_str(), id.as_str()))
                .copied()
                .unwrap_or_default();
            write!(
                page,
                "<li><code title=\"{}\">{}</code></li>",
                escape(title),
                escape(id)
            )?;
        }
        page.push_str("</ul></details>");
    }
    page.push_str("</td>");
    Ok(())
}

/// A student's status (`graded`, `failed`, `missing`, `rejected`) in the instructor's language;
/// the JSON keeps the English name.
fn student_status(status: &str) -> &str {
    match status {
        "graded" => t(Key::StudentGraded),
        "failed" => t(Key::StudentFailed),
        "missing" => t(Key::StatusMissing),
        "rejected" => t(Key::StudentRejected),
        other => other,
    }
}

/// Why a result is not trusted, in the instructor's language: the JSON keeps the English.
fn untrusted_reason(reason: &str) -> &str {
    use crate::class::reports::{OTHER_CHECKS, OTHER_GRADER, OWN_COPY, UNTRUSTED_FOLDER};
    let key = match reason {
        UNTRUSTED_FOLDER => Key::UntrustedFolder,
        OWN_COPY => Key::UntrustedOwnCopy,
        OTHER_CHECKS => Key::UntrustedOtherChecks,
        OTHER_GRADER => Key::UntrustedOtherGrader,
        other => return other,
    };
    t(key)
}

/// The background of a chapter nobody can learn from: not started, missing, or not attempted.
const UNTOUCHED: &str = "#ececec";

/// The background of a chapter that does not compile.
const BROKEN: &str = "#f3d2ee";

/// Red for nobody passing, through yellow, to green for everybody.
fn color(share: f64) -> String {
    format!("hsl({:.0}, 70%, 82%)", 120.0 * share.clamp(0.0, 1.0))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
