//! The book in the learner's language: which page a learner reads, and a check's book section
//! as a Japanese learner sees it (the Japanese page, built into `book/build/ja/`, and the
//! section's Japanese heading from `book/po/ja.po`). The Japanese headings keep the English
//! anchors, so a link changes its page and keeps its anchor.

use std::collections::HashMap;
use std::path::Path;

use crate::curriculum::workbook::{Chapter, Workbook, display_path};
use crate::lang::{self, Lang};
use crate::report::model::Report;

/// Where the Japanese book is built, relative to the workbook.
pub const JA_BUILD: &str = "book/build/ja";
/// The Japanese translation of the book, relative to the workbook.
pub const JA_PO: &str = "book/po/ja.po";

/// The page a learner reads for `chapter`, in the language of this run: the Markdown source in
/// English, the built Japanese page in Japanese.
pub fn learner_page(workbook: &Workbook, chapter: &Chapter) -> String {
    match lang::current() {
        Lang::En => display_path(workbook, &workbook.page(chapter)),
        Lang::Ja => display_path(
            workbook,
            &workbook
                .root
                .join(JA_BUILD)
                .join(format!("{}.html", chapter.stem())),
        ),
    }
}

/// The book's translation into the language of this run: none in English.
pub fn book_po(workbook: &Workbook) -> Po {
    match lang::current() {
        Lang::En => Po::default(),
        Lang::Ja => Po::load(&workbook.root.join(JA_PO)),
    }
}

/// Puts `report`'s chapter title and each check's book section into the language of this run
/// (nothing changes in English). A heading without a finished translation keeps its English.
pub fn localize(workbook: &Workbook, report: &mut Report) {
    if lang::current() != Lang::Ja {
        return;
    }
    let po = book_po(workbook);
    if let Some(title) = po.translation(&report.title) {
        report.title = title.to_owned();
    }
    for result in &mut report.results {
        let Some(section) = &mut result.section else {
            continue;
        };
        section.link = ja_link(&section.link);
        if let Some(title) = &section.title {
            let heading = format!("{} {title}", section.number);
            if let Some(ja) = po.translation(&heading) {
                section.title = Some(ja_heading_title(ja, &section.number));
            }
        }
    }
}

/// `book/src/<page>.md#<anchor>` → `book/build/ja/<page>.html#<anchor>`; any other link as it is.
pub fn ja_link(link: &str) -> String {
    let (page, anchor) = match link.split_once('#') {
        Some((page, anchor)) => (page, Some(anchor)),
        None => (link, None),
    };
    let Some(stem) = page
        .strip_prefix("book/src/")
        .and_then(|page| page.strip_suffix(".md"))
    else {
        return link.to_owned();
    };
    match anchor {
        Some(anchor) => format!("{JA_BUILD}/{stem}.html#{anchor}"),
        None => format!("{JA_BUILD}/{stem}.html"),
    }
}

/// A translated `N.M …` heading without its number and without a `{#anchor}` attribute.
fn ja_heading_title(heading: &str, number: &str) -> String {
    let heading = heading.trim();
    let heading = match heading.rfind("{#") {
        Some(open) if heading.ends_with('}') => heading[..open].trim_end(),
        _ => heading,
    };
    heading
        .strip_prefix(number)
        .unwrap_or(heading)
        .trim()
        .to_owned()
}

/// The finished entries of a PO file: msgid → msgstr, leaving out fuzzy and empty ones.
#[derive(Debug, Default)]
pub struct Po {
    entries: HashMap<String, String>,
}

impl Po {
    /// Reads `path`; a missing or unreadable file has no entries.
    pub fn load(path: &Path) -> Self {
        std::fs::read_to_string(path)
            .map(|text| Self::parse(&text))
            .unwrap_or_default()
    }

    /// Parses PO text: entries separated by blank lines, strings continued on `"…"` lines.
    pub fn parse(text: &str) -> Self {
        let mut entries = HashMap::new();
        for block in text.split("\n\n") {
            let mut fuzzy = false;
            let (mut id, mut translated) = (String::new(), String::new());
            let mut into_id = None;
            for line in block.lines().map(str::trim) {
                if let Some(flags) = line.strip_prefix("#,") {
                    fuzzy |= flags.split(',').any(|flag| flag.trim() == "fuzzy");
                } else if let Some(rest) = line.strip_prefix("msgid ") {
                    into_id = Some(true);
                    id = unquote(rest);
                } else if let Some(rest) = line.strip_prefix("msgstr ") {
                    into_id = Some(false);
                    translated = unquote(rest);
                } else if line.starts_with('"') {
                    match into_id {
                        Some(true) => id.push_str(&unquote(line)),
                        Some(false) => translated.push_str(&unquote(line)),
                        None => {}
                    }
                } else if !line.starts_with('#') {
                    // msgctxt, msgid_plural and the like: this reader does not need them.
                    into_id = None;
                }
            }
            if !fuzzy && !id.is_empty() && !translated.is_empty() {
                entries.insert(id, translated);
            }
        }
        Self { entries }
    }

    /// The finished translation of `msgid`.
    pub fn translation(&self, msgid: &str) -> Option<&str> {
        self.entries.get(msgid).map(String::as_str)
    }
}

/// A PO string's text: the quotes removed and its escapes resolved.
fn unquote(quoted: &str) -> String {
    let inner = quoted
        .trim()
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or("");
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PO: &str = r#"msgid ""
msgstr ""
"Language: ja\n"

#: src/ch01-strong-medicine.md
msgid "1.4 The smallest policy: re-issue at once, at most twice"
msgstr "1.4 最小のポリシー：すぐに再発行し、最大 2 回まで {#14-the-smallest}"

#: src/ch01-strong-medicine.md
#, fuzzy
msgid "1.5 Pitfalls"
msgstr "1.5 落とし穴"

#: src/ch01-strong-medicine.md
msgid ""
"A long "
"\"quoted\" line"
msgstr ""
"長い"
"行"

msgid "1.6 Untranslated"
msgstr ""
"#;

    #[test]
    fn po_keeps_finished_entries_only() {
        let po = Po::parse(PO);
        let heading = po
            .translation("1.4 The smallest policy: re-issue at once, at most twice")
            .unwrap();
        assert_eq!(
            ja_heading_title(heading, "1.4"),
            "最小のポリシー：すぐに再発行し、最大 2 回まで"
        );
        assert_eq!(po.translation("1.5 Pitfalls"), None, "fuzzy");
        assert_eq!(po.translation("1.6 Untranslated"), None);
        assert_eq!(po.translation("A long \"quoted\" line"), Some("長い行"));
        assert_eq!(po.translation(""), None);
    }

    #[test]
    fn a_missing_po_file_has_no_entries() {
        let po = Po::load(Path::new("/nonexistent/ja.po"));
        assert_eq!(po.translation("Summary"), None);
    }

    #[test]
    fn ja_links_keep_the_anchor() {
        assert_eq!(
            ja_link("book/src/ch01-strong-medicine.md#14-the-smallest-policy"),
            "book/build/ja/ch01-strong-medicine.html#14-the-smallest-policy"
        );
        assert_eq!(
            ja_link("book/src/ch01-strong-medicine.md"),
            "book/build/ja/ch01-strong-medicine.html"
        );
        assert_eq!(ja_link("elsewhere.html#x"), "elsewhere.html#x");
    }
}
