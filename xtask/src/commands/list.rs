//! `cargo xtask list`: every chapter and how far you are.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::curriculum::workbook::Workbook;
use crate::lang::words::{self, Key, t, tf};
use crate::progress::{ChapterProgress, Progress, now};
use crate::report::book_lang;
use crate::term::{self, Style};

/// List the chapters with your progress.
#[derive(Debug, Args)]
pub struct ListArgs {}

pub fn run(_args: ListArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    term::print(render(
        &workbook,
        &Progress::load(&workbook),
        Style::for_stdout(),
    ));
    Ok(ExitCode::SUCCESS)
}

/// The chapter list as text; the `watch` command shows it too.
pub fn render(workbook: &Workbook, progress: &Progress, style: Style) -> String {
    let next = progress.next_chapter(workbook).map(|c| c.id.clone());
    let mut out = String::new();
    // The book's own titles, in the learner's language where the translation has them.
    let po = book_lang::book_po(workbook);
    let title = |english: &str| po.translation(english).unwrap_or(english).to_owned();
    for part in &workbook.parts {
        out.push_str(&format!("{}\n", style.bold(&title(&part.title))));
        for chapter in &part.chapters {
            let entry = progress.chapters.get(&chapter.id);
            let status = if !chapter.ready {
                style.dim(t(Key::NotWrittenYet))
            } else if let Some(entry) = entry.filter(|e| e.passed) {
                passed_status(entry, &workbook.exercise_dir(chapter), now(), style)
            } else if let Some(entry) = entry.filter(|e| e.max_score > 0) {
                tf(Key::PointsOf, &[&entry.best_score, &entry.max_score])
            } else {
                t(Key::NotStarted).to_owned()
            };
            let marker = if next.as_deref() == Some(chapter.id.as_str()) {
                "→"
            } else {
                " "
            };
            out.push_str(&format!(
                "  {marker} {}  {} {status}\n",
                chapter.id,
                words::pad(&title(&chapter.title), 58)
            ));
        }
    }
    if let Some(next) = next {
        out.push_str(&format!("\n{}\n", tf(Key::ListNext, &[&next])));
    }
    out
}

/// A passed chapter's status: when it passed, and whether the exercise changed since (and how
/// a check after the change went), as of `now`.
fn passed_status(entry: &ChapterProgress, exercise: &Path, now: u64, style: Style) -> String {
    let ago = entry.passed_at.map(|at| ago(now.saturating_sub(at)));
    if !entry.changed_since_pass(exercise) {
        let when = ago
            .map(|ago| tf(Key::PassedWhen, &[&ago]))
            .unwrap_or_default();
        return style.green(&tf(Key::DoneWhen, &[&when]));
    }
    let failed_since = entry
        .last_check
        .as_ref()
        .filter(|last| !last.passed && entry.passed_at.is_some_and(|at| last.at >= at));
    let since = match failed_since {
        Some(last) => tf(Key::ChangedSinceScore, &[&last.score, &last.max_score]),
        None => t(Key::ChangedSince).to_owned(),
    };
    format!(
        "{} {}",
        style.green(&tf(Key::PassedAgo, &[&ago.unwrap_or_default()])),
        style.yellow(&since)
    )
}

/// `seconds` as a person says how long ago something was.
fn ago(seconds: u64) -> String {
    let plural = |count: u64, one: Key, many: Key| {
        if count == 1 {
            t(one).to_owned()
        } else {
            tf(many, &[&count])
        }
    };
    match seconds {
        0..60 => t(Key::JustNow).to_owned(),
        60..3_600 => plural(seconds / 60, Key::MinuteAgo, Key::MinutesAgo),
        3_600..86_400 => plural(seconds / 3_600, Key::HourAgo, Key::HoursAgo),
        _ => plural(seconds / 86_400, Key::DayAgo, Key::DaysAgo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_people_say_them() {
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(7_200 + 59), "2 hours ago");
        assert_eq!(ago(3 * 86_400), "3 days ago");
    }
}
