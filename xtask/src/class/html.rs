//! The class report as one self-contained HTML page (no script, no external file): the
//! distribution of totals, a heat map of the share of the class passing each check (most
//! missed first, each linked to its book section), and every student's points per chapter.

use std::fmt::Write;

use crate::class::model::{CheckShare, ClassReport, StudentRow};

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
svg text { font: 12px system-ui, sans-serif; fill: #444; }
svg .bar { fill: #4a78c2; }
";

/// The page for `report`; book links are `book_url/<page>.html#<anchor>`.
pub fn render(report: &ClassReport, book_url: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Class report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    header(&mut page, report);
    histogram(&mut page, report);
    heat_map(&mut page, report, book_url.trim_end_matches('/'));
    students(&mut page, report);
    page.push_str("</body>\n</html>\n");
    page
}

fn header(page: &mut String, report: &ClassReport) {
    let count = |status: &str| {
        report
            .students
            .iter()
            .filter(|s| s.status == status)
            .count()
    };
    let untrusted = report.students.iter().filter(|s| !s.trusted).count();
    let _ = writeln!(
        page,
        "<h1>Class report</h1>\n<p class=\"meta\">Made {} by grader {} with checks {}{}.</p>",
        escape(&report.generated_at),
        escape(&report.grader.version),
        escape(crate::class::fingerprint::short(&report.grader.checks)),
        report
            .due
            .as_deref()
            .map(|due| format!(", due {}", escape(due)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        page,
        "<p id=\"summary\">{} students: {} graded, {} could not be graded, {} missing, {} reports \
         rejected. Chapters: {}.</p>",
        report.students.len(),
        count("graded"),
        count("failed"),
        count("missing"),
        count("rejected"),
        report
            .chapters
            .iter()
            .map(|c| escape(&c.id))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if untrusted > 0 {
        let _ = writeln!(
            page,
            "<p class=\"warning\" id=\"untrusted-warning\"><strong>{untrusted} result(s) are not \
             trusted</strong>: the student controlled the grader or the checks that produced them \
             (their own workflow or machine), or they came from an untrusted folder. They are \
             feedback, not grades; they are marked <span class=\"badge untrusted\">untrusted</span> \
             below.</p>"
        );
    }
}

fn histogram(page: &mut String, report: &ClassReport) {
    let totals = &report.totals;
    let _ = writeln!(
        page,
        "<section id=\"distribution\">\n<h2>Distribution of totals</h2>"
    );
    let (width, height, left, bottom) = (640.0, 220.0, 40.0, 30.0);
    let most = totals
        .bins
        .iter()
        .map(|b| b.count)
        .max()
        .unwrap_or(0)
        .max(1);
    let bar_width = (width - left) / totals.bins.len().max(1) as f64;
    let _ = writeln!(
        page,
        "<svg id=\"histogram\" role=\"img\" aria-label=\"How many students have each total\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    let plot = height - bottom - 10.0;
    for (index, bin) in totals.bins.iter().enumerate() {
        let bar = plot * bin.count as f64 / most as f64;
        let x = left + bar_width * index as f64;
        let _ = writeln!(
            page,
            "<rect class=\"bar\" data-count=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
             height=\"{bar:.1}\"><title>{} student(s) with {:.1} to {:.1} points</title></rect>",
            bin.count,
            x + 2.0,
            10.0 + plot - bar,
            bar_width - 4.0,
            bin.count,
            bin.from,
            bin.to
        );
        if bin.count > 0 {
            let _ = writeln!(
                page,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + bar_width / 2.0,
                10.0 + plot - bar - 3.0,
                bin.count
            );
        }
        let _ = writeln!(
            page,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.1}</text>",
            height - 10.0,
            bin.from
        );
    }
    let _ = writeln!(
        page,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.1}</text>\n\
         <line x1=\"{left}\" y1=\"{:.1}\" x2=\"{width}\" y2=\"{:.1}\" stroke=\"#888\"/>\n</svg>",
        width - 4.0,
        height - 10.0,
        report.students.first().map_or(0.0, |s| s.max_total),
        10.0 + plot,
        10.0 + plot
    );
    let stat = |value: Option<f64>| value.map_or_else(|| "—".to_owned(), |v| format!("{v:.2}"));
    let _ = writeln!(
        page,
        "<p>{} graded · mean {} · median {} · lowest {} · highest {} (of {:.2} points)</p>\n</section>",
        totals.graded,
        stat(totals.mean),
        stat(totals.median),
        stat(totals.min),
        stat(totals.max),
        report.students.first().map_or(0.0, |s| s.max_total)
    );
}

fn heat_map(page: &mut String, report: &ClassReport, book_url: &str) {
    let _ = writeln!(
        page,
        "<section id=\"checks\">\n<h2>What to teach again</h2>\n<p>Every check of every chapter \
         with the share of the graded class that passes it, the rules most missed first. A \
         chapter that is missing or does not compile passes none of its checks.</p>\n\
         <table id=\"heat-map\">\n<thead><tr><th>passing</th><th>chapter</th><th>check</th>\
         <th>rule</th><th>book</th></tr></thead>\n<tbody>"
    );
    for check in &report.checks {
        let _ = writeln!(
            page,
            "<tr class=\"check\" data-share=\"{:.4}\"><td class=\"share\" style=\"background: {}\">\
             {:.0}% <small>({}/{})</small></td><td>{}</td><td><code>{}</code></td><td>{}</td>\
             <td>{}</td></tr>",
            check.share,
            color(check.share),
            check.share * 100.0,
            check.passed,
            check.graded,
            escape(&check.chapter),
            escape(&check.id),
            escape(&check.title),
            book_link(check, book_url)
        );
    }
    page.push_str("</tbody>\n</table>\n</section>\n");
}

/// `§8.3 The formula`, linked to the built book.
fn book_link(check: &CheckShare, book_url: &str) -> String {
    let Some(section) = &check.section else {
        return String::new();
    };
    let target = section
        .link
        .strip_prefix("book/src/")
        .unwrap_or(&section.link)
        .replacen(".md", ".html", 1);
    let title = section
        .title
        .as_deref()
        .map(|t| format!(" {t}"))
        .unwrap_or_default();
    format!(
        "<a href=\"{}/{}\">§{}{}</a>",
        escape(book_url),
        escape(&target),
        escape(&section.number),
        escape(&title)
    )
}

fn students(page: &mut String, report: &ClassReport) {
    let _ = writeln!(
        page,
        "<section id=\"students\">\n<h2>Students</h2>\n<div class=\"wide\">\n<table id=\"student-table\">\n<thead><tr>\
         <th>student</th><th>status</th>"
    );
    for chapter in &report.chapters {
        let _ = write!(
            page,
            "<th title=\"{}\">{}</th>",
            escape(&chapter.title),
            escape(&chapter.id)
        );
    }
    page.push_str("<th>total</th></tr></thead>\n<tbody>\n");
    for row in &report.students {
        student_row(page, report, row);
    }
    page.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

fn student_row(page: &mut String, report: &ClassReport, row: &StudentRow) {
    let trust = if row.trusted {
        "<span class=\"badge trusted\">trusted</span>".to_owned()
    } else {
        format!(
            "<span class=\"badge untrusted\" title=\"{}\">untrusted</span>",
            escape(&row.untrusted_because.join("; "))
        )
    };
    let status = match &row.reason {
        Some(reason) => format!(
            "{} <small>({})</small>",
            escape(&row.status),
            escape(reason)
        ),
        None => escape(&row.status),
    };
    let late = if row.late == Some(true) {
        " · late"
    } else {
        ""
    };
    let _ = write!(
        page,
        "<tr class=\"student\" data-student=\"{}\" data-trusted=\"{}\"><td>{}</td><td>{status}{late} {trust}</td>",
        escape(&row.student),
        row.trusted,
        escape(&row.student)
    );
    for chapter in &report.chapters {
        match row.chapters.iter().find(|c| c.id == chapter.id) {
            Some(graded) => {
                let fraction = if graded.max_score == 0 {
                    0.0
                } else {
                    f64::from(graded.score) / f64::from(graded.max_score)
                };
                let note = if graded.missing {
                    "missing"
                } else if !graded.compiled {
                    "does not compile"
                } else {
                    ""
                };
                let _ = write!(
                    page,
                    "<td class=\"points\" style=\"background: {}\" title=\"{}/{} {note}\">{:.2}</td>",
                    color(fraction),
                    graded.score,
                    graded.max_score,
                    graded.points
                );
            }
            None => page.push_str("<td class=\"points\">—</td>"),
        }
    }
    let total = if row.status == "graded" || row.status == "missing" {
        format!("{:.2}", row.total)
    } else {
        "—".to_owned()
    };
    let _ = writeln!(page, "<td class=\"points\">{total}</td></tr>");
}

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
