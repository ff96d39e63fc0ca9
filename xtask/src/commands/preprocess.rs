//! `cargo xtask book-preprocess`: the book's mdBook preprocessor. It gives every chapter page
//! the same ending — where the exercise is, how to check it, the glossary terms the page uses,
//! and the previous and next chapters — and fills the references page from every chapter's
//! references section. mdBook runs it (book.toml); people never need to.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;

use crate::commands::book_i18n::{
    Edition, chapter_titles, match_key, mentions, mentions_term, visit_chapters,
};
use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::grade::grader::anchor;

/// The placeholder the references page holds until the preprocessor fills it.
const REFERENCES_PLACEHOLDER: &str = "{{#workbook-references}}";

/// (mdBook preprocessor) Read mdBook's JSON on stdin and write the book back with chapter footers.
#[derive(Debug, Args)]
pub struct PreprocessArgs {
    /// mdBook asks `supports <renderer>` first; every renderer is supported.
    #[arg(num_args = 0..=2)]
    pub supports: Vec<String>,
}

pub fn run(args: PreprocessArgs) -> Result<ExitCode> {
    if args.supports.first().is_some_and(|word| word == "supports") {
        return Ok(ExitCode::SUCCESS);
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("reading mdBook's input")?;
    let [context, mut book]: [Value; 2] =
        serde_json::from_str(&input).context("parsing mdBook's input")?;
    let workbook = Workbook::load()?;
    let edition = Edition::of(&context, &workbook);
    let glossary = match &edition {
        Some(edition) => edition.glossary(&mut book),
        None => glossary_terms(&workbook),
    };
    let titles = edition.as_ref().map(|_| chapter_titles(&mut book));
    let mut references = BTreeMap::new();
    visit_chapters(&mut book, &mut |path, content| {
        let english_headings = edition.as_ref().map(|e| e.english_headings(path));
        if let Some(chapter) = workbook
            .chapters()
            .find(|c| path == format!("{}.md", c.stem()))
        {
            collect_references(
                chapter,
                content,
                english_headings.as_ref().and_then(Option::as_deref),
                &mut references,
            );
            let footer = match &edition {
                Some(edition) => translated_footer(
                    edition,
                    &workbook,
                    chapter,
                    content,
                    &glossary,
                    titles.as_ref().unwrap_or(&BTreeMap::new()),
                ),
                None => footer(&workbook, chapter, content, &glossary),
            };
            content.push_str(&footer);
        }
        if let Some(edition) = &edition {
            edition.finish_page(
                content,
                english_headings.as_ref().and_then(Option::as_deref),
            );
            edition.localize_figures(content);
        }
    });
    let cited = edition.as_ref().map_or("cited in", |e| e.text.cited_in);
    visit_chapters(&mut book, &mut |_, content| {
        if content.contains(REFERENCES_PLACEHOLDER) {
            *content =
                content.replace(REFERENCES_PLACEHOLDER, &references_list(&references, cited));
        }
    });
    println!("{book}");
    Ok(ExitCode::SUCCESS)
}

/// The glossary's terms (its `### Term` headings) with their anchors.
pub(crate) fn glossary_terms(workbook: &Workbook) -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(workbook.root.join("book/src/glossary.md")).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.strip_prefix("### "))
        .map(|term| (term.trim().to_owned(), anchor(term)))
        .collect()
}

/// The chapter ending in a translated edition's words, chapter titles from its summary.
fn translated_footer(
    edition: &Edition,
    workbook: &Workbook,
    chapter: &Chapter,
    content: &str,
    glossary: &[(String, String)],
    titles: &BTreeMap<String, String>,
) -> String {
    let text = edition.text;
    let (previous, next) = neighbours(
        workbook,
        chapter,
        text.previous,
        text.next,
        text.unwritten,
        |other| {
            titles
                .get(&format!("{}.md", other.stem()))
                .cloned()
                .unwrap_or_else(|| other.title.clone())
        },
    );
    let mut out = format!(
        "\n\n---\n\n{}\n",
        text.your_turn
            .replace("{stem}", &chapter.stem())
            .replace("{start}", &learner_file(workbook, chapter))
            .replace("{id}", &chapter.id)
    );
    let terms: Vec<String> = glossary
        .iter()
        .filter(|(term, _)| mentions_term(content, term))
        .map(|(term, anchor)| format!("[{}](glossary.md#{anchor})", match_key(term)))
        .collect();
    if !terms.is_empty() {
        out.push_str(&format!("\n**{}:** {}\n", text.glossary, terms.join(" · ")));
    }
    push_navigation(&mut out, previous, next);
    out
}

/// The common ending of a chapter page.
fn footer(
    workbook: &Workbook,
    chapter: &Chapter,
    content: &str,
    glossary: &[(String, String)],
) -> String {
    let (previous, next) = neighbours(
        workbook,
        chapter,
        "Previous",
        "Next",
        "not written yet",
        |c| c.title.clone(),
    );
    let terms: Vec<String> = glossary
        .iter()
        .filter(|(term, _)| mentions(content, term))
        .map(|(term, anchor)| format!("[{term}](glossary.md#{anchor})"))
        .collect();
    let mut text = format!(
        "\n\n---\n\n**Your turn.** The exercise is in `exercises/{stem}/` (start with `{start}`). \
         Check it with `cargo xtask check {id}`, re-check on every save with `cargo xtask watch {id}`, \
         and ask for a hint with `cargo xtask hint {id}`.\n",
        stem = chapter.stem(),
        id = chapter.id,
        start = learner_file(workbook, chapter),
    );
    if !terms.is_empty() {
        text.push_str(&format!("\n**Glossary:** {}.\n", terms.join(" · ")));
    }
    push_navigation(&mut text, previous, next);
    text
}

/// The file a learner starts a chapter's exercise with.
pub(crate) fn learner_file(workbook: &Workbook, chapter: &Chapter) -> String {
    Rubric::for_chapter(workbook, chapter, None)
        .map_or_else(|_| "src/lib.rs".to_owned(), |r| r.learner_file().to_owned())
}

/// Appends the previous and next chapter links, if any, on one line.
pub(crate) fn push_navigation(text: &mut String, previous: String, next: String) {
    let navigation: Vec<String> = [previous, next]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    if !navigation.is_empty() {
        text.push_str(&format!("\n{}\n", navigation.join(" · ")));
    }
}

/// Links to the previous and the next chapter (empty where there is none), titled by `title`.
pub(crate) fn neighbours(
    workbook: &Workbook,
    chapter: &Chapter,
    previous_label: &str,
    next_label: &str,
    unwritten: &str,
    title: impl Fn(&Chapter) -> String,
) -> (String, String) {
    let chapters: Vec<&Chapter> = workbook.chapters().collect();
    let index = chapters
        .iter()
        .position(|c| c.id == chapter.id)
        .unwrap_or(0);
    let link = |other: Option<&&Chapter>, label: &str| match other {
        Some(other) if other.ready => format!(
            "{label}: [{} — {}]({}.md)",
            other.id,
            title(other),
            other.stem()
        ),
        Some(other) => format!("{label}: {} — {} ({unwritten})", other.id, title(other)),
        None => String::new(),
    };
    (
        link(
            index.checked_sub(1).and_then(|i| chapters.get(i)),
            previous_label,
        ),
        link(chapters.get(index + 1), next_label),
    )
}

/// Gathers the list items of a chapter's references section (its `## N.x References` heading).
/// In a translated page, `english_headings` are the English page's headings, one for each of
/// the page's headings in order: the references section is the one whose English heading says so.
fn collect_references(
    chapter: &Chapter,
    content: &str,
    english_headings: Option<&[String]>,
    references: &mut BTreeMap<String, (String, Vec<String>)>,
) {
    let mut items: Vec<String> = Vec::new();
    let mut inside = false;
    let mut heading = 0;
    let mut fenced = false;
    for line in content.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let is_heading = !fenced && line.starts_with('#');
        if is_heading {
            heading += 1;
        }
        if line.starts_with("## ") {
            let english = english_headings
                .and_then(|headings| headings.get(heading - 1))
                .map_or(line, String::as_str);
            inside = english.to_lowercase().contains("references");
            continue;
        }
        if line.starts_with("# ") {
            inside = false;
        }
        if !inside {
            continue;
        }
        if let Some(item) = list_item(line) {
            items.push(item.trim().to_owned());
        } else if line.starts_with(' ') && !line.trim().is_empty() {
            // An item that wraps onto the next lines.
            if let Some(last) = items.last_mut() {
                last.push(' ');
                last.push_str(line.trim());
            }
        }
    }
    for item in items {
        let key: String = item
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric())
            .take(60)
            .collect();
        let entry = references
            .entry(key)
            .or_insert_with(|| (item.clone(), Vec::new()));
        if !entry.1.contains(&chapter.id) {
            entry.1.push(chapter.id.clone());
        }
    }
}

/// The text of a bulleted (`- `, `* `) or numbered (`1. `) list item.
fn list_item(line: &str) -> Option<&str> {
    let line = line.trim_start();
    if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(item);
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0)
        .then(|| line[digits..].strip_prefix(". "))
        .flatten()
}

fn references_list(references: &BTreeMap<String, (String, Vec<String>)>, cited: &str) -> String {
    let mut items: Vec<&(String, Vec<String>)> = references.values().collect();
    items.sort_by_key(|(text, _)| text.to_lowercase());
    items
        .iter()
        .map(|(text, chapters)| {
            if cited.contains("{}") {
                format!("- {text} *{}*\n", cited.replace("{}", &chapters.join(", ")))
            } else {
                format!("- {text} *({cited} {})*\n", chapters.join(", "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn list_items_are_bulleted_or_numbered() {
        assert_eq!(super::list_item("- AWS blog"), Some("AWS blog"));
        assert_eq!(super::list_item("12. RFC 9110"), Some("RFC 9110"));
        assert_eq!(super::list_item("2024 was a year."), None);
        assert_eq!(super::list_item("plain text"), None);
    }

    #[test]
    fn terms_match_whole_words_only() {
        assert!(mentions("Full jitter spreads retries", "jitter"));
        assert!(mentions("a Retry-After header", "retry-after"));
        assert!(!mentions("jitterbug", "jitter"));
        assert!(!mentions("nothing here", "lease"));
    }
}
