//! The gradebook: one CSV row per student that Canvas, Moodle and any spreadsheet import.

use crate::class::model::ClassReport;
use crate::report::chapter_status::ChapterStatus;

/// `student`, then for each chapter `<chapter>`, `<chapter>_status`, `<chapter>_checks`, then
/// `total, max_total, late, missing, status, trusted`. Points have two decimals; a chapter's
/// status is `not started`, `does not compile`, `partial`, `done` or `missing`; its checks are
/// "9 of 12" (not "9/12", which a spreadsheet reads as a date). A student who could not be
/// graded has empty fields (a blank, not a zero, so the gradebook shows it needs a look); a
/// missing copy scores zero.
pub fn render(report: &ClassReport) -> String {
    let mut out = String::from("student");
    for chapter in &report.chapters {
        let id = &chapter.id;
        out += &format!(",{id},{id}_status,{id}_checks");
    }
    out.push_str(",total,max_total,late,missing,status,trusted\n");
    for row in &report.students {
        let mut fields = vec![row.student.clone()];
        for chapter in &report.chapters {
            let graded = row.chapters.iter().find(|c| c.id == chapter.id);
            match (row.status.as_str(), graded) {
                ("graded", Some(graded)) => fields.extend([
                    format!("{:.2}", graded.points),
                    graded.status.words().to_owned(),
                    format!("{} of {}", graded.checks_passed, graded.checks),
                ]),
                ("missing", _) => fields.extend([
                    format!("{:.2}", 0.0),
                    ChapterStatus::Missing.words().to_owned(),
                    String::new(),
                ]),
                _ => fields.extend([String::new(), String::new(), String::new()]),
            }
        }
        let total = match row.status.as_str() {
            "graded" | "missing" => format!("{:.2}", row.total),
            _ => String::new(),
        };
        let missing = if row.status == "missing" {
            "all".to_owned()
        } else {
            row.chapters
                .iter()
                .filter(|c| c.missing)
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let late = match row.late {
            Some(true) => "yes",
            Some(false) => "no",
            None => "",
        };
        fields.extend([
            total,
            format!("{:.2}", row.max_total),
            late.to_owned(),
            missing,
            row.status.clone(),
            if row.trusted { "yes" } else { "no" }.to_owned(),
        ]);
        let line: Vec<String> = fields.iter().map(|f| escape(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// RFC 4180 quoting, and a leading `'` before `=`, `+`, `-` or `@` so a spreadsheet never runs
/// a student's name as a formula.
fn escape(field: &str) -> String {
    let field = if field.starts_with(['=', '+', '-', '@']) {
        format!("'{field}")
    } else {
        field.to_owned()
    };
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn fields_are_quoted_and_defused() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("a,b"), "\"a,b\"");
        assert_eq!(escape("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(escape("=SUM(A1)"), "'=SUM(A1)");
    }
}
