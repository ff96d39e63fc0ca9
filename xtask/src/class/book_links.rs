//! Where the class report's book links lead: a hosted book when one is given (`--book-url`, or
//! `WORKBOOK_BOOK_URL`), else this workbook's built book, built first when it is missing or
//! older than its sources. A section the built book does not hold (no page, or no anchor) is
//! named without a link, and so is every section of a report made on a CI runner without a
//! hosted book (the runner's book is gone after the run): the page never has a dead link. In
//! Japanese the links lead to the Japanese edition (`ja/`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use crate::class::html::BookLinks;
use crate::class::model::ClassReport;
use crate::curriculum::workbook::Workbook;
use crate::lang::words::{Key, t, tf};
use crate::lang::{self, Lang};

/// The variable that names a hosted book when `--book-url` does not.
pub const BOOK_URL_VARIABLE: &str = "WORKBOOK_BOOK_URL";

/// The links of every section `report` names, and a note for the page when some have none.
pub fn resolve(
    workbook: &Workbook,
    report: &ClassReport,
    book_url: Option<&str>,
) -> (BookLinks, Option<String>) {
    let sections: BTreeSet<&str> = report
        .checks
        .iter()
        .filter_map(|check| check.section.as_ref())
        .map(|section| section.link.as_str())
        .collect();
    let hosted = book_url
        .map(str::to_owned)
        .or_else(|| std::env::var(BOOK_URL_VARIABLE).ok())
        .filter(|url| !url.trim().is_empty());
    if let Some(url) = hosted {
        let base = url.trim().trim_end_matches('/');
        let links = sections
            .iter()
            .map(|&link| (link.to_owned(), format!("{base}/{}", edition_page(link))))
            .collect();
        return (links, None);
    }
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|value| value == "true") {
        let note = t(Key::BookNoteCi).to_owned();
        println!("{}", tf(Key::Note, &[&note]));
        return (BookLinks::new(), Some(note));
    }
    let build = workbook.root.join("book/build");
    let failure = built_book(workbook, &build).err();
    if let Some(why) = &failure
        && !build.join("index.html").is_file()
    {
        let note = tf(Key::BookNoteNotBuilt, &[why]);
        println!("{}", tf(Key::Note, &[&note]));
        return (BookLinks::new(), Some(note));
    }
    let mut links = BookLinks::new();
    let mut unlinked = 0;
    for link in sections {
        match local_link(&build, link) {
            Some(href) => {
                links.insert(link.to_owned(), href);
            }
            None => unlinked += 1,
        }
    }
    let mut notes = Vec::new();
    if let Some(why) = failure {
        notes.push(tf(Key::BookNoteOlder, &[&why]));
    }
    if unlinked > 0 {
        notes.push(tf(Key::BookNoteUnlinked, &[&unlinked, &build.display()]));
    }
    let note = (!notes.is_empty()).then(|| notes.join(" "));
    if let Some(note) = &note {
        println!("{}", tf(Key::Note, &[note]));
    }
    (links, note)
}

/// A section's page and anchor in the book of the reader's language: the Japanese edition is
/// under `ja/`, its headings keeping the English anchors.
fn edition_page(link: &str) -> String {
    match lang::current() {
        Lang::En => page_and_anchor(link),
        Lang::Ja => format!("ja/{}", page_and_anchor(link)),
    }
}

/// `book/src/ch08-full-jitter.md#83-the-formula` → `ch08-full-jitter.html#83-the-formula`.
fn page_and_anchor(link: &str) -> String {
    link.strip_prefix("book/src/")
        .unwrap_or(link)
        .replacen(".md", ".html", 1)
}

/// Builds the book into `build` unless it is there and newer than its sources.
fn built_book(workbook: &Workbook, build: &Path) -> Result<(), String> {
    let sources = [
        workbook.root.join("book/src"),
        workbook.root.join("book/book.toml"),
    ];
    let built = modified(&build.join("index.html"));
    let newest_source = sources.iter().filter_map(|path| newest(path)).max();
    if built.is_some() && built >= newest_source {
        return Ok(());
    }
    println!("{}", t(Key::BuildingBookForLinks));
    match crate::tools::builds(workbook) {
        Ok(true) => Ok(()),
        Ok(false) => Err("mdbook failed".to_owned()),
        Err(error) => Err(format!("{error:#}")),
    }
}

/// The `file://` address of the section `link` in the built book at `build`, when its page is
/// there and holds the anchor.
fn local_link(build: &Path, link: &str) -> Option<String> {
    let target = edition_page(link);
    let (page, anchor) = target.split_once('#').unwrap_or((&target, ""));
    let file = build.join(page);
    let html = std::fs::read_to_string(&file).ok()?;
    if !anchor.is_empty() && !html.contains(&format!(" id=\"{anchor}\"")) {
        return None;
    }
    let mut href = file_url(&file);
    if !anchor.is_empty() {
        href.push('#');
        href.push_str(anchor);
    }
    Some(href)
}

/// A `file://` URL of an absolute path, with `/` separators and every byte outside the
/// unreserved set (and `/` and `:`) percent-encoded.
fn file_url(path: &Path) -> String {
    let text = path.display().to_string().replace('\\', "/");
    let mut url = String::from("file://");
    if !text.starts_with('/') {
        url.push('/');
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/:".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The latest modification time of `path` or anything below it.
fn newest(path: &Path) -> Option<SystemTime> {
    let below = crate::util::entries_under(path, &[]).unwrap_or_default();
    below
        .iter()
        .map(|entry| modified(&entry.path))
        .fold(modified(path), Option::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_japanese_report_links_the_japanese_edition() {
        let link = "book/src/ch08-full-jitter.md#83-the-formula";
        assert_eq!(edition_page(link), "ch08-full-jitter.html#83-the-formula");
        assert_eq!(
            lang::speaking(Lang::Ja, || edition_page(link)),
            "ja/ch08-full-jitter.html#83-the-formula"
        );
    }

    #[test]
    fn sections_map_to_pages_and_file_urls_are_encoded() {
        assert_eq!(
            page_and_anchor("book/src/ch08-full-jitter.md#83-the-formula"),
            "ch08-full-jitter.html#83-the-formula"
        );
        assert_eq!(
            file_url(Path::new("/home/a teacher/book/build/x.html")),
            "file:///home/a%20teacher/book/build/x.html"
        );
        assert_eq!(
            file_url(Path::new(r"C:\course\book\build\x.html")),
            "file:///C:/course/book/build/x.html"
        );
    }

    #[test]
    fn a_section_is_linked_only_when_its_page_holds_its_anchor() {
        let build = crate::util::scratch_dir("book-links");
        std::fs::write(
            build.join("ch01-a.html"),
            "<h2 id=\"11-first\">1.1 First</h2>",
        )
        .unwrap();
        let linked = local_link(&build, "book/src/ch01-a.md#11-first").unwrap();
        assert!(
            linked.starts_with("file://") && linked.ends_with("/ch01-a.html#11-first"),
            "{linked}"
        );
        assert_eq!(local_link(&build, "book/src/ch01-a.md#12-gone"), None);
        assert_eq!(local_link(&build, "book/src/ch02-b.md#21-x"), None);
        let _ = std::fs::remove_dir_all(&build);
    }
}
