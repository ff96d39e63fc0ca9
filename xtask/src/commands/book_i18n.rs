//! The book's translations, kept the way mdbook-i18n-helpers keeps them: `book/po/messages.pot`
//! is extracted from the English pages (`mdbook-xgettext`), `book/po/<lang>.po` holds one
//! language's translation, and `mdbook-gettext` builds that language's edition into
//! `book/build/<lang>/`. This module installs the helpers, builds an edition, updates the PO
//! files, imports translated Markdown pages into a PO file, counts a PO file's coverage, and
//! rebuilds a Japanese edition's search index so that Japanese words are found.
//!
//! A language is listed in `book/book.toml` as `[preprocessor.workbook.translations.<lang>]`;
//! its `complete` setting says whether missing translations are an error (see AUTHORING.md).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use crate::curriculum::workbook::Workbook;

/// The mdbook-i18n-helpers release that speaks mdBook 0.5's preprocessor and renderer protocol
/// (0.4.0 depends on mdbook-preprocessor 0.5; the 0.3 releases on mdBook 0.4).
pub const HELPERS_VERSION: &str = "0.4.0";

/// Where the helpers are installed, under the target folder.
const HELPERS_FOLDER: &str = "tools/i18n";

/// One translation the book has, as book.toml lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    /// Its code, as `book.language` and the PO file's name: `ja`.
    pub code: String,
    /// True when every entry must be translated (ci fails otherwise); while false the
    /// edition says on every page that its translation is in progress.
    pub complete: bool,
}

/// The translations listed in book/book.toml, in the order they are listed.
pub fn languages(workbook: &Workbook) -> Result<Vec<Language>> {
    let path = workbook.root.join("book/book.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    languages_in(&text)
}

fn languages_in(book_toml: &str) -> Result<Vec<Language>> {
    let value: toml::Value = toml::from_str(book_toml).context("parsing book/book.toml")?;
    let Some(table) = value
        .get("preprocessor")
        .and_then(|p| p.get("workbook"))
        .and_then(|w| w.get("translations"))
        .and_then(toml::Value::as_table)
    else {
        return Ok(Vec::new());
    };
    Ok(table
        .iter()
        .map(|(code, settings)| Language {
            code: code.clone(),
            complete: settings
                .get("complete")
                .and_then(toml::Value::as_bool)
                .unwrap_or(false),
        })
        .collect())
}

/// The folder of the helpers' binaries (`mdbook-gettext`, `mdbook-xgettext`), installed with
/// `cargo install` into the target folder the first time, unoptimised as mdBook is.
pub fn ensure_helpers(workbook: &Workbook) -> Result<PathBuf> {
    let root = workbook.target_dir().join(HELPERS_FOLDER);
    let bin = root.join("bin");
    let installed = std::fs::read_to_string(root.join(".crates.toml"))
        .is_ok_and(|list| list.contains(&format!("\"mdbook-i18n-helpers {HELPERS_VERSION} ")));
    if installed && bin.join("mdbook-gettext").exists() && bin.join("mdbook-xgettext").exists() {
        return Ok(bin);
    }
    println!(
        "Installing mdbook-i18n-helpers {HELPERS_VERSION} into {} (once; under a minute)…",
        root.display()
    );
    let status = Command::new(crate::util::cargo())
        .args([
            "install",
            "mdbook-i18n-helpers",
            "--locked",
            "--quiet",
            "--debug",
        ])
        .args(["--version", HELPERS_VERSION, "--root"])
        .arg(&root)
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .status()
        .context("running cargo install mdbook-i18n-helpers")?;
    if !status.success() {
        bail!(
            "installing mdbook-i18n-helpers failed; `cargo install mdbook-i18n-helpers --version \
             {HELPERS_VERSION}` by hand may say why"
        );
    }
    Ok(bin)
}

/// The environment that makes `mdbook build book` build the `lang` edition into
/// `book/build/<lang>/`: the gettext preprocessor runs after mdBook's includes and before the
/// workbook's own preprocessor, so the chapter endings, glossary links and references are made
/// from the translated text. The edition's 404 page names its files from the site's root
/// (`output.html.site-url`, "/" unless book.toml says otherwise), so it gets the edition's folder;
/// the book's title is the PO file's translation of it, where there is one.
pub fn edition_env(workbook: &Workbook, helpers: &Path, lang: &str) -> Vec<(String, String)> {
    let config = std::fs::read_to_string(workbook.root.join("book/book.toml"))
        .ok()
        .and_then(|text| toml::from_str::<toml::Value>(&text).ok());
    let setting = |table: &str, key: &str| -> Option<String> {
        let mut value = config.as_ref()?;
        for part in table.split('.') {
            value = value.get(part)?;
        }
        value.get(key)?.as_str().map(str::to_owned)
    };
    let site = setting("output.html", "site-url").unwrap_or_else(|| "/".to_owned());
    let title = setting("book", "title").and_then(|english| {
        let po = std::fs::read_to_string(workbook.root.join(format!("book/po/{lang}.po"))).ok()?;
        parse_po(&po)
            .into_iter()
            .find(|e| e.msgid == english && !e.msgstr.is_empty() && !e.fuzzy())
            .map(|e| e.msgstr)
    });
    let gettext = json!({
        "command": helpers.join("mdbook-gettext").display().to_string(),
        "after": ["links"],
        "before": ["workbook"],
    });
    vec![
        ("MDBOOK_BOOK__LANGUAGE".to_owned(), lang.to_owned()),
        (
            "MDBOOK_PREPROCESSOR__GETTEXT".to_owned(),
            gettext.to_string(),
        ),
        (
            "MDBOOK_BUILD__BUILD_DIR".to_owned(),
            format!("build/{lang}"),
        ),
        (
            "MDBOOK_OUTPUT__HTML__SITE_URL".to_owned(),
            format!("{}/{lang}/", site.trim_end_matches('/')),
        ),
    ]
    .into_iter()
    .chain(title.map(|title| ("MDBOOK_BOOK__TITLE".to_owned(), title)))
    .collect()
}

/// Builds the `lang` edition into book/build/<lang>/ and makes its search find words of the
/// language. Prints mdBook's output only when it fails (`quiet`). True when it built and its code
/// blocks are the English book's, comments aside.
pub fn build_edition(workbook: &Workbook, mdbook: &Path, lang: &str, quiet: bool) -> Result<bool> {
    let helpers = ensure_helpers(workbook)?;
    let book = workbook.root.join("book");
    let mut command = Command::new(mdbook);
    command
        .arg("build")
        .arg(&book)
        .envs(edition_env(workbook, &helpers, lang));
    let built = if quiet {
        let output = command
            .output()
            .with_context(|| format!("running {}", mdbook.display()))?;
        if !output.status.success() {
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
        }
        output.status.success()
    } else {
        command
            .status()
            .with_context(|| format!("running {}", mdbook.display()))?
            .success()
    };
    if !built {
        return Ok(false);
    }
    if lang == "ja" {
        reindex_search(&book.join("build").join(lang))?;
    }
    // The English book, built before, is what its code must stay.
    let departures =
        super::book_code::departures(&book.join("build"), &book.join("build").join(lang))?;
    for departure in &departures {
        eprintln!(
            "the {lang} edition changes code: {departure} (only comments may be translated: \
             mend the entry in book/po/{lang}.po)"
        );
    }
    Ok(departures.is_empty())
}

/// Extracts the English book's messages into `dest/messages.pot` with line numbers rounded to
/// `granularity` (0: file names only, which keeps the committed template's diffs small).
fn extract(
    workbook: &Workbook,
    mdbook: &Path,
    book: &Path,
    dest: &Path,
    granularity: usize,
) -> Result<PathBuf> {
    let helpers = ensure_helpers(workbook)?;
    let output = json!({"xgettext": {
        "command": helpers.join("mdbook-xgettext").display().to_string(),
        "pot-file": "messages.pot",
        "granularity": granularity,
    }});
    build_with_renderers(mdbook, book, dest, &output)?;
    Ok(dest.join("messages.pot"))
}

/// Builds `book` into `dest` with the renderers `output` names (mdBook's `output` table) in place
/// of the book's own.
fn build_with_renderers(mdbook: &Path, book: &Path, dest: &Path, output: &Value) -> Result<()> {
    let run = Command::new(mdbook)
        .arg("build")
        .arg(book)
        .env("MDBOOK_OUTPUT", output.to_string())
        .env("MDBOOK_BUILD__BUILD_DIR", dest)
        .output()
        .with_context(|| format!("running {}", mdbook.display()))?;
    if !run.status.success() {
        eprint!("{}", String::from_utf8_lossy(&run.stderr));
        bail!("extracting the messages of {} failed", book.display());
    }
    Ok(())
}

/// Extracts with line numbers, and the pages as the extractor saw them (includes expanded),
/// to order the messages that share a line (a table row's cells) by where they stand in it.
fn extract_pages(
    workbook: &Workbook,
    mdbook: &Path,
    book: &Path,
    dest: &Path,
) -> Result<(Vec<PoEntry>, HashMap<String, String>)> {
    let helpers = ensure_helpers(workbook)?;
    let output = json!({
        "xgettext": {
            "command": helpers.join("mdbook-xgettext").display().to_string(),
            "pot-file": "messages.pot",
            "granularity": 1,
        },
        // mdBook hands every renderer the book as JSON on its standard input.
        "pages": {"command": "tee book.json"},
    });
    build_with_renderers(mdbook, book, dest, &output)?;
    let catalog = parse_po(&std::fs::read_to_string(
        dest.join("xgettext/messages.pot"),
    )?);
    let mut context: Value =
        serde_json::from_str(&std::fs::read_to_string(dest.join("pages/book.json"))?)?;
    let mut pages = HashMap::new();
    visit_chapters(&mut context["book"], &mut |path, content| {
        pages.insert(path.to_owned(), content.clone());
    });
    Ok((catalog, pages))
}

/// `cargo xtask book --update-po`: extracts book/po/messages.pot from the English pages and
/// merges it into every language's PO file with gettext's `msgmerge` (a translation whose
/// English changed turns fuzzy; a new paragraph is untranslated).
pub fn update_po(workbook: &Workbook, mdbook: &Path) -> Result<()> {
    let po = workbook.root.join("book/po");
    std::fs::create_dir_all(&po)?;
    let scratch = workbook.work_dir().join("i18n/pot");
    let pot = extract(workbook, mdbook, &workbook.root.join("book"), &scratch, 0)?;
    // The template changes only when a message does, not with the date of each extraction.
    let undated = |text: &str| -> String {
        text.lines()
            .filter(|line| !line.starts_with("\"POT-Creation-Date:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let fresh = std::fs::read_to_string(&pot)?;
    let committed = std::fs::read_to_string(po.join("messages.pot")).unwrap_or_default();
    if undated(&fresh) != undated(&committed) {
        std::fs::write(po.join("messages.pot"), &fresh)?;
    }
    println!("Extracted {}", po.join("messages.pot").display());
    for language in languages(workbook)? {
        let file = po.join(format!("{}.po", language.code));
        if !file.exists() {
            let template = std::fs::read_to_string(&pot)?;
            std::fs::write(
                &file,
                template.replace(
                    "\"Language: en\\n\"",
                    &format!("\"Language: {}\\n\"", language.code),
                ),
            )?;
        }
        msgmerge(&file, &po.join("messages.pot"))?;
        let counts = Coverage::of(&std::fs::read_to_string(&file)?);
        println!("{}: {}", file.display(), counts.summary());
    }
    Ok(())
}

/// Merges `template` into the PO file `po` in place, as gettext's msgmerge does.
fn msgmerge(po: &Path, template: &Path) -> Result<()> {
    let status = Command::new("msgmerge")
        .args(["--quiet", "--update", "--backup=none", "--previous"])
        .arg(po)
        .arg(template)
        .status()
        .context(
            "running msgmerge (translators need GNU gettext: `apt-get install gettext`, \
             `brew install gettext`; reading or building the book does not)",
        )?;
    if !status.success() {
        bail!("msgmerge {} failed", po.display());
    }
    Ok(())
}

/// `cargo xtask book --lang ja --import DIR`: pairs every translated page under `from` (same
/// relative path as under book/src) with its English page, message by message, and writes the
/// pairs into book/po/<lang>.po, then merges the template in. A page whose message count
/// differs from the English one's is refused and named.
pub fn import(workbook: &Workbook, mdbook: &Path, lang: &str, from: &Path) -> Result<bool> {
    let scratch = workbook.work_dir().join("i18n/import");
    let english_book = copy_book(workbook, &scratch.join("en"), None)?;
    let translated_book = copy_book(workbook, &scratch.join(lang), Some(from))?;
    let (english, english_pages) =
        extract_pages(workbook, mdbook, &english_book, &scratch.join("en-pot"))?;
    let (translated, translated_pages) = extract_pages(
        workbook,
        mdbook,
        &translated_book,
        &scratch.join(format!("{lang}-pot")),
    )?;
    // Files the book includes into a page (ch02's decision table) are paired as part of it.
    let (pages, others): (Vec<String>, Vec<String>) =
        translated_files(from)?.into_iter().partition(|page| {
            english.iter().any(|e| {
                e.references
                    .iter()
                    .any(|r| r.starts_with(&format!("src/{page}:")))
            })
        });
    for other in others {
        if workbook.root.join("book/src").join(&other).is_file() {
            println!("{other}: included into a page, paired with it");
        } else {
            println!("{other}: skipped (not a file of the book)");
        }
    }
    let (mut pairs, report) = pair_pages(
        (&english, &english_pages),
        (&translated, &translated_pages),
        &pages,
    );
    titles_from_headings(workbook, &mut pairs);
    if lang == "ja" {
        part_titles_ja(workbook, &mut pairs);
    }
    for line in &report.lines {
        println!("{line}");
    }
    update_po(workbook, mdbook)?;
    let file = workbook.root.join(format!("book/po/{lang}.po"));
    let mut catalog = parse_po(&std::fs::read_to_string(&file)?);
    let mut set = 0;
    for entry in catalog
        .iter_mut()
        .filter(|e| !e.msgid.is_empty() && !e.obsolete)
    {
        if let Some(text) = pairs.get(&entry.msgid) {
            entry.msgstr = text.clone();
            entry.flags.retain(|flag| flag != "fuzzy");
            entry.previous.clear();
            set += 1;
        } else if entry.msgstr == entry.msgid && english_prose(&entry.msgid) {
            // Imported earlier from a page that still had this paragraph in English.
            entry.msgstr.clear();
        }
    }
    std::fs::write(&file, write_po(&catalog))?;
    msgmerge(&file, &workbook.root.join("book/po/messages.pot"))?;
    let counts = Coverage::of(&std::fs::read_to_string(&file)?);
    println!(
        "Imported {} page(s) ({} refused): {set} entries set. {}: {}",
        report.imported,
        report.refused,
        file.display(),
        counts.summary()
    );
    Ok(report.refused == 0)
}

/// Gives the summary's part titles (`# Part I — When to retry`) a Japanese title made from the
/// translated row of the introduction's table of parts (`I — When to retry` → `I — いつリトライ
/// するか` → `第 I 部 — いつリトライするか`), unless the summary itself was translated.
fn part_titles_ja(workbook: &Workbook, pairs: &mut HashMap<String, String>) {
    let summary =
        std::fs::read_to_string(workbook.root.join("book/src/SUMMARY.md")).unwrap_or_default();
    for line in summary.lines() {
        let Some(title) = line.strip_prefix("# Part ") else {
            continue;
        };
        let Some((number, _)) = title.split_once(" — ") else {
            continue;
        };
        let Some(name) = pairs
            .get(title)
            .and_then(|row| row.strip_prefix(&format!("{number} — ")))
            .map(str::to_owned)
        else {
            continue;
        };
        pairs
            .entry(format!("Part {title}"))
            .or_insert(format!("第 {number} 部 — {name}"));
    }
}

/// Gives each chapter's title in the summary (the sidebar) the translation of the chapter's
/// first heading, without its number (`# 8. Full jitter` → `8. フルジッター` → `フルジッター`),
/// unless the summary itself was translated.
fn titles_from_headings(workbook: &Workbook, pairs: &mut HashMap<String, String>) {
    let src = workbook.root.join("book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap_or_default();
    for line in summary.lines() {
        let Some((title, rest)) = line
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once("]("))
        else {
            continue;
        };
        let Some(file) = rest
            .split_once(')')
            .map(|(file, _)| file)
            .filter(|f| !f.is_empty())
        else {
            continue;
        };
        let page = std::fs::read_to_string(src.join(file)).unwrap_or_default();
        let Some(heading) = headings(&page).first().and_then(|h| h.strip_prefix("# ")) else {
            continue;
        };
        let Some(translated) = pairs.get(heading.trim()) else {
            continue;
        };
        let number = heading.trim().strip_suffix(title).unwrap_or("");
        let name = translated
            .strip_prefix(number)
            .unwrap_or(translated)
            .trim()
            .to_owned();
        pairs.entry(title.to_owned()).or_insert(name);
    }
}

/// The Markdown files under `from`, as paths relative to it (`ch08-full-jitter.md`).
fn translated_files(from: &Path) -> Result<Vec<String>> {
    let mut pages = Vec::new();
    for entry in walk(from)? {
        let relative = entry
            .strip_prefix(from)?
            .to_string_lossy()
            .replace('\\', "/");
        if relative.ends_with(".md") {
            pages.push(relative);
        }
    }
    pages.sort();
    Ok(pages)
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    Ok(files)
}

/// A copy of book/ (book.toml and src/) at `dest`, with the translated pages of `overlay` in
/// place of the English ones. Includes name the repository by its absolute path, so the copy
/// expands them as the book does.
fn copy_book(workbook: &Workbook, dest: &Path, overlay: Option<&Path>) -> Result<PathBuf> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    let source = workbook.root.join("book/src");
    let root = workbook.root.display().to_string();
    let fix = |text: String| text.replace("{{#include ../../", &format!("{{{{#include {root}/"));
    for file in walk(&source)? {
        let relative = file.strip_prefix(&source)?;
        let target = dest.join("src").join(relative);
        std::fs::create_dir_all(target.parent().unwrap_or(dest))?;
        let translated = overlay
            .map(|dir| dir.join(relative))
            .filter(|f| f.is_file());
        let chosen = translated.as_deref().unwrap_or(&file);
        if chosen.extension().is_some_and(|e| e == "md") {
            std::fs::write(&target, fix(std::fs::read_to_string(chosen)?))?;
        } else {
            std::fs::copy(chosen, &target)?;
        }
    }
    std::fs::copy(workbook.root.join("book/book.toml"), dest.join("book.toml"))?;
    Ok(dest.to_path_buf())
}

/// What pairing the pages found.
#[derive(Debug, Default)]
pub struct PairReport {
    pub imported: usize,
    pub refused: usize,
    pub lines: Vec<String>,
}

/// Each page's messages in the order they appear in it: by line, and on one line (a table
/// row's cells) by where the message's text stands in the line of the page's text.
fn messages_by_page(
    catalog: &[PoEntry],
    texts: &HashMap<String, String>,
) -> BTreeMap<String, Vec<(usize, String)>> {
    let mut pages: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for entry in catalog.iter().filter(|e| !e.msgid.is_empty()) {
        for reference in &entry.references {
            let (file, line) = reference
                .rsplit_once(':')
                .and_then(|(file, line)| Some((file, line.parse().ok()?)))
                .unwrap_or((reference.as_str(), 0));
            let page = file.strip_prefix("src/").unwrap_or(file).to_owned();
            pages
                .entry(page)
                .or_default()
                .push((line, entry.msgid.clone()));
        }
    }
    for (page, messages) in pages.iter_mut() {
        let lines: Vec<&str> = texts
            .get(page)
            .map_or_else(Vec::new, |t| t.lines().collect());
        messages.sort_by_cached_key(|(line, message)| {
            let column = line
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .map_or(0, |text| column_of(text, message));
            (*line, column)
        });
    }
    pages
}

/// Where `message` stands in `line`, comparing letters and digits only (the extractor rewrites
/// emphasis and escapes): in a table row, the number of the cell that holds it; elsewhere the
/// place it starts. The line's length when it is not found.
fn column_of(line: &str, message: &str) -> usize {
    let letters = |text: &str| -> Vec<char> {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let needle = letters(message);
    if line.trim_start().starts_with('|') {
        let cells: Vec<Vec<char>> = line.split('|').map(letters).collect();
        let holds = |cell: &Vec<char>| {
            !needle.is_empty()
                && cell
                    .windows(needle.len().min(16))
                    .any(|w| w == &needle[..needle.len().min(16)])
        };
        if let Some(cell) = cells
            .iter()
            .position(|cell| *cell == needle)
            .or_else(|| cells.iter().position(holds))
        {
            return cell;
        }
    }
    let haystack = letters(line);
    let start: Vec<char> = needle.into_iter().take(16).collect();
    if start.is_empty() {
        return haystack.len();
    }
    haystack
        .windows(start.len())
        .position(|window| window == start.as_slice())
        .unwrap_or(haystack.len())
}

/// Pairs the English and the translated extraction page by page, message by message: the
/// English msgid maps to the translated text. A page whose message count differs is refused.
pub fn pair_pages(
    english: (&[PoEntry], &HashMap<String, String>),
    translated: (&[PoEntry], &HashMap<String, String>),
    pages: &[String],
) -> (HashMap<String, String>, PairReport) {
    let english = messages_by_page(english.0, english.1);
    let translated = messages_by_page(translated.0, translated.1);
    let mut pairs: HashMap<String, String> = HashMap::new();
    let mut report = PairReport::default();
    for page in pages {
        let (Some(en), Some(tr)) = (english.get(page), translated.get(page)) else {
            report.refused += 1;
            report
                .lines
                .push(format!("refused {page}: the English book has no such page"));
            continue;
        };
        if en.len() != tr.len() {
            report.refused += 1;
            let first = en
                .iter()
                .zip(tr)
                .position(|((_, e), (_, t))| block_kind(e) != block_kind(t))
                .unwrap_or(en.len().min(tr.len()));
            report.lines.push(format!(
                "refused {page}: {} messages, the English page has {} (first difference near \
                 message {}: English {:?})",
                tr.len(),
                en.len(),
                first + 1,
                en.get(first).map(|(_, m)| shorten(m)).unwrap_or_default()
            ));
            continue;
        }
        let mut conflicts = 0;
        let mut english_left = 0;
        for ((_, source), (_, text)) in en.iter().zip(tr) {
            if text == source && english_prose(source) {
                english_left += 1;
                continue;
            }
            match pairs.get(source) {
                Some(earlier) if earlier != text => conflicts += 1,
                Some(_) => {}
                None => {
                    pairs.insert(source.clone(), text.clone());
                }
            }
        }
        report.imported += 1;
        let mut note = String::new();
        if english_left > 0 {
            note.push_str(&format!(
                " ({english_left} still in English, left untranslated)"
            ));
        }
        if conflicts > 0 {
            note.push_str(&format!(
                " ({conflicts} message(s) translated otherwise on an earlier page or place: \
                 one PO entry holds one translation, the first is kept)"
            ));
        }
        report
            .lines
            .push(format!("imported {page}: {} messages{note}", en.len()));
    }
    (pairs, report)
}

/// True when a message is English prose a translator should have translated: a page copied
/// before it was translated keeps its English, which must not count as translated. Code
/// comments and strings, citations (a year or a web link) and short labels may stay as they are.
pub fn english_prose(message: &str) -> bool {
    let start = message.trim_start();
    if ["//", "\"", "#", "```", "<"]
        .iter()
        .any(|p| start.starts_with(p))
    {
        return false;
    }
    let mut prose = String::new();
    let mut in_code = false;
    for c in message.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            prose.push(c);
        }
    }
    let cited = prose.contains("](http")
        || prose
            .split(|c: char| !c.is_ascii_digit())
            .any(|n| n.len() == 4 && (n.starts_with("19") || n.starts_with("20")));
    let words = prose
        .split_whitespace()
        .filter(|w| {
            let letters = w.trim_matches(|c: char| !c.is_ascii_alphabetic());
            letters.len() >= 2 && letters.chars().all(|c| c.is_ascii_alphabetic())
        })
        .count();
    !cited && words >= 4
}

/// A rough kind of a message, to point at the first place two pages' structures part.
fn block_kind(message: &str) -> &'static str {
    match message.trim_start().chars().next() {
        Some('#') => "heading",
        Some('|') => "table",
        Some('<') => "html",
        Some('`') => "code",
        _ => "text",
    }
}

fn shorten(message: &str) -> String {
    message.chars().take(60).collect()
}

/// One entry of a PO file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoEntry {
    /// Comment lines other than references and flags, kept as they are (`#.`, `# `, `#|`).
    pub comments: Vec<String>,
    /// `#:` references (`src/ch08-full-jitter.md` or with `:line`).
    pub references: Vec<String>,
    /// `#,` flags (`fuzzy`).
    pub flags: Vec<String>,
    /// `#|` lines: the previous msgid msgmerge keeps beside a fuzzy entry.
    pub previous: Vec<String>,
    pub msgid: String,
    pub msgstr: String,
    /// An obsolete entry (`#~`), kept by msgmerge for later reuse.
    pub obsolete: bool,
}

impl PoEntry {
    pub fn fuzzy(&self) -> bool {
        self.flags.iter().any(|flag| flag == "fuzzy")
    }
}

/// Parses a PO file: entries, the header first (its msgid is empty).
pub fn parse_po(text: &str) -> Vec<PoEntry> {
    let mut entries = Vec::new();
    let mut entry = PoEntry::default();
    let mut field: Option<bool> = None; // Some(true): msgid, Some(false): msgstr.
    let mut started = false;
    let mut flush = |entry: &mut PoEntry, started: &mut bool| {
        if *started {
            entries.push(std::mem::take(entry));
        }
        *started = false;
    };
    for raw in text.lines() {
        let (line, obsolete) = match raw.strip_prefix("#~") {
            Some(rest) => (rest.trim_start(), true),
            None => (raw, false),
        };
        if line.trim().is_empty() {
            if !obsolete {
                flush(&mut entry, &mut started);
                field = None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("msgid ") {
            if field == Some(false) {
                flush(&mut entry, &mut started);
            }
            started = true;
            entry.obsolete |= obsolete;
            entry.msgid = unquote(rest);
            field = Some(true);
        } else if let Some(rest) = line.strip_prefix("msgstr ") {
            entry.msgstr = unquote(rest);
            field = Some(false);
        } else if line.starts_with('"') {
            match field {
                Some(true) => entry.msgid.push_str(&unquote(line)),
                Some(false) => entry.msgstr.push_str(&unquote(line)),
                None => {}
            }
        } else if line.starts_with('#') {
            if field == Some(false) {
                flush(&mut entry, &mut started);
                field = None;
            }
            started = true;
            if let Some(rest) = line.strip_prefix("#:") {
                entry
                    .references
                    .extend(rest.split_whitespace().map(str::to_owned));
            } else if let Some(rest) = line.strip_prefix("#,") {
                entry
                    .flags
                    .extend(rest.split(',').map(|f| f.trim().to_owned()));
            } else if line.starts_with("#|") {
                entry.previous.push(line.to_owned());
            } else {
                entry.comments.push(line.to_owned());
            }
        }
    }
    flush(&mut entry, &mut started);
    entries
}

/// The text of one quoted PO string, escapes undone.
fn unquote(quoted: &str) -> String {
    let inner = quoted
        .trim()
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_default();
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
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// A PO string, quoted, split after each newline as gettext writes it.
fn quote(text: &str) -> String {
    let escape = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\t', "\\t")
            .replace('\r', "\\r")
            .replace('\n', "\\n")
    };
    let pieces: Vec<&str> = text.split_inclusive('\n').collect();
    if pieces.len() <= 1 {
        return format!("\"{}\"", escape(text));
    }
    let mut out = String::from("\"\"");
    for piece in pieces {
        out.push_str(&format!("\n\"{}\"", escape(piece)));
    }
    out
}

/// Writes entries back as a PO file (msgmerge rewraps it afterwards).
pub fn write_po(entries: &[PoEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let prefix = if entry.obsolete { "#~ " } else { "" };
        for comment in &entry.comments {
            out.push_str(comment);
            out.push('\n');
        }
        if !entry.references.is_empty() {
            out.push_str(&format!("#: {}\n", entry.references.join(" ")));
        }
        if !entry.flags.is_empty() {
            out.push_str(&format!("#, {}\n", entry.flags.join(", ")));
        }
        for previous in &entry.previous {
            out.push_str(previous);
            out.push('\n');
        }
        for (keyword, text) in [("msgid", &entry.msgid), ("msgstr", &entry.msgstr)] {
            let quoted = quote(text).replace('\n', &format!("\n{prefix}"));
            out.push_str(&format!("{prefix}{keyword} {quoted}\n"));
        }
        out.push('\n');
    }
    out
}

/// How much of a PO file is translated.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Coverage {
    pub translated: usize,
    pub untranslated: usize,
    pub fuzzy: usize,
    /// Pages (files named by references) every entry of which is translated.
    pub pages_done: usize,
    pub pages: usize,
}

impl Coverage {
    pub fn of(po: &str) -> Self {
        let mut counts = Coverage::default();
        let mut pages: BTreeMap<String, bool> = BTreeMap::new();
        for entry in parse_po(po)
            .iter()
            .filter(|e| !e.msgid.is_empty() && !e.obsolete)
        {
            let done = !entry.fuzzy() && !entry.msgstr.is_empty();
            if entry.fuzzy() {
                counts.fuzzy += 1;
            } else if done {
                counts.translated += 1;
            } else {
                counts.untranslated += 1;
            }
            let files: BTreeSet<&str> = entry
                .references
                .iter()
                .map(|r| r.split(':').next().unwrap_or(r))
                .collect();
            for file in files {
                let all = pages.entry(file.to_owned()).or_insert(true);
                *all &= done;
            }
        }
        counts.pages = pages.keys().filter(|p| !p.ends_with("SUMMARY.md")).count();
        counts.pages_done = pages
            .iter()
            .filter(|(page, done)| **done && !page.ends_with("SUMMARY.md"))
            .count();
        counts
    }

    pub fn complete(&self) -> bool {
        self.untranslated == 0 && self.fuzzy == 0
    }

    pub fn summary(&self) -> String {
        format!(
            "{} translated, {} untranslated, {} fuzzy; {} of {} pages fully translated",
            self.translated, self.untranslated, self.fuzzy, self.pages_done, self.pages
        )
    }
}

/// For `cargo xtask ci`: each translation's counts, and whether it passes (a language marked
/// complete must have no untranslated or fuzzy entry; one still in progress always passes).
pub fn coverage_report(workbook: &Workbook) -> Result<Vec<(String, bool)>> {
    let mut results = Vec::new();
    for language in languages(workbook)? {
        let file = workbook.root.join(format!("book/po/{}.po", language.code));
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let counts = Coverage::of(&text);
        let broken = page_rules(&text);
        for problem in &broken {
            println!("   {}: {problem}", language.code);
        }
        let ok =
            broken.is_empty() && (!language.complete || (!text.is_empty() && counts.complete()));
        println!(
            "   {}: {} ({})",
            language.code,
            counts.summary(),
            if language.complete {
                "marked complete: every entry must be translated"
            } else {
                "in progress: `complete = true` in book/book.toml makes this a failure"
            }
        );
        results.push((language.code, ok));
    }
    Ok(results)
}

/// The bold lead of a "predict, then run" block in Japanese.
pub const PREDICT_LEAD_JA: &str = "**予想してから実行しましょう。**";

/// The pages' rules, checked on each translated entry: a prediction keeps its Japanese lead,
/// and a translation keeps the folds (`<details>`, `<summary>`) and code fences of its English,
/// so an answer stays folded and code stays code.
pub fn page_rules(po: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in parse_po(po)
        .iter()
        .filter(|e| !e.msgid.is_empty() && !e.obsolete && !e.msgstr.is_empty() && !e.fuzzy())
    {
        let place = entry.references.first().map_or("", String::as_str);
        if entry.msgid.starts_with("**Predict, then run.**")
            && !entry.msgstr.starts_with(PREDICT_LEAD_JA)
        {
            problems.push(format!(
                "{place}: a prediction's translation must begin {PREDICT_LEAD_JA} ({:?})",
                shorten(&entry.msgstr)
            ));
        }
        let lost: Vec<&str> = ["<details", "</details>", "<summary", "</summary>", "```"]
            .into_iter()
            .filter(|marker| {
                entry.msgid.matches(marker).count() != entry.msgstr.matches(marker).count()
            })
            .collect();
        if !lost.is_empty() {
            problems.push(format!(
                "{place}: the translation of {:?} does not keep its {}",
                shorten(&entry.msgid),
                lost.join(" ")
            ));
        }
    }
    problems
}

/// The text a Japanese edition's search indexes and searches for: words of Latin letters and
/// digits as they are (lower case), and runs of Japanese script cut into overlapping pairs of
/// characters (a lone character stays one token), so a word is found inside a sentence with no
/// spaces. `book/theme/i18n.js` cuts the reader's query the same way.
pub fn search_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    let flush_run = |run: &mut Vec<char>, tokens: &mut Vec<String>| {
        if run.len() == 1 {
            tokens.push(run[0].to_string());
        }
        for pair in run.windows(2) {
            tokens.push(pair.iter().collect());
        }
        run.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if is_japanese(c) {
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
            run.push(c);
        } else if c.is_alphanumeric() || c == '_' {
            flush_run(&mut run, &mut tokens);
            word.push(c);
        } else {
            flush_run(&mut run, &mut tokens);
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
        }
    }
    flush_run(&mut run, &mut tokens);
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

/// Hiragana, katakana (with the long-vowel mark), and CJK ideographs.
fn is_japanese(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}' | '\u{31f0}'..='\u{31ff}' | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{ff66}'..='\u{ff9f}')
}

/// Rebuilds the search index of the edition in `build` with [`search_tokens`]: the same
/// documents mdBook stored, an inverted index elasticlunr.js loads, no English stemming, and
/// every query token required.
pub fn reindex_search(build: &Path) -> Result<()> {
    let Some(file) = std::fs::read_dir(build)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("searchindex") && n.ends_with(".js"))
        })
    else {
        return Ok(());
    };
    let script = std::fs::read_to_string(&file)?;
    const START: &str = "JSON.parse('";
    let (Some(start), Some(end)) = (script.find(START), script.rfind("'));")) else {
        bail!(
            "{} is not the search index mdBook 0.5 writes",
            file.display()
        );
    };
    let json_text = js_unescape(&script[start + START.len()..end]);
    let mut data: Value = serde_json::from_str(&json_text).context("parsing the search index")?;
    reindex(&mut data)?;
    let text = serde_json::to_string(&data)?;
    let escaped = text.replace('\\', "\\\\").replace('\'', "\\'");
    std::fs::write(
        &file,
        format!(
            "{}{escaped}{}",
            &script[..start + START.len()],
            &script[end..]
        ),
    )?;
    Ok(())
}

fn js_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Replaces the elasticlunr index inside mdBook's search data with one of [`search_tokens`].
fn reindex(data: &mut Value) -> Result<()> {
    let index = data
        .get_mut("index")
        .context("the search data has no index")?;
    let fields: Vec<String> = index["fields"]
        .as_array()
        .context("the index has no fields")?
        .iter()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    let docs = index["documentStore"]["docs"]
        .as_object()
        .context("the index stores no documents")?
        .clone();
    let mut inverted: Map<String, Value> = Map::new();
    let mut info: Map<String, Value> = Map::new();
    for field in &fields {
        let mut root = TrieNode::default();
        for (reference, doc) in &docs {
            let tokens = search_tokens(doc[field].as_str().unwrap_or_default());
            if let Some(fields) = info
                .entry(reference.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
            {
                fields.insert(field.clone(), json!(tokens.len()));
            }
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for token in &tokens {
                *counts.entry(token.as_str()).or_default() += 1;
            }
            for (token, count) in counts {
                let node = token
                    .chars()
                    .fold(&mut root, |node, c| node.children.entry(c).or_default());
                node.docs.insert(reference.clone(), (count as f64).sqrt());
            }
        }
        inverted.insert(field.clone(), json!({"root": root.into_json()}));
    }
    index["index"] = Value::Object(inverted);
    index["documentStore"]["docInfo"] = Value::Object(info);
    index["pipeline"] = json!([]);
    if let Some(options) = data.get_mut("search_options") {
        options["bool"] = json!("AND");
    }
    Ok(())
}

/// A node of elasticlunr's inverted index: the documents whose token ends here, with the token's
/// frequency in each (its square root, as elasticlunr stores it), and the next characters.
#[derive(Default)]
struct TrieNode {
    docs: BTreeMap<String, f64>,
    children: BTreeMap<char, TrieNode>,
}

impl TrieNode {
    /// The node as elasticlunr.js serialises it: `docs`, `df`, and one key per next character.
    fn into_json(self) -> Value {
        let mut map = Map::new();
        map.insert("df".to_owned(), json!(self.docs.len()));
        let docs: Map<String, Value> = self
            .docs
            .into_iter()
            .map(|(reference, tf)| (reference, json!({"tf": tf})))
            .collect();
        map.insert("docs".to_owned(), Value::Object(docs));
        for (c, child) in self.children {
            map.insert(c.to_string(), child.into_json());
        }
        Value::Object(map)
    }
}

/// The words the workbook's preprocessor adds to a translated edition's pages.
pub struct EditionText {
    /// The chapter ending's first paragraph: `{stem}`, `{start}` and `{id}` are filled in.
    pub your_turn: &'static str,
    pub glossary: &'static str,
    pub previous: &'static str,
    pub next: &'static str,
    pub unwritten: &'static str,
    /// After a reference on the references page: `{}` is the list of chapters.
    pub cited_in: &'static str,
    /// At the top of every page while the translation is not complete.
    pub in_progress: &'static str,
}

const JAPANESE: EditionText = EditionText {
    your_turn: "**演習の番です。** 演習は `exercises/{stem}/` にあります（まず `{start}` を開きます）。\
                `cargo xtask check {id}` で確認し、`cargo xtask watch {id}` なら保存するたびに確認します。\
                ヒントは `cargo xtask hint {id}` で表示できます。",
    glossary: "用語集",
    previous: "前の章",
    next: "次の章",
    unwritten: "未執筆",
    cited_in: "（{} で引用）",
    in_progress: "**翻訳中です。** この日本語版はまだ翻訳の途中で、翻訳されていない段落は英語のまま\
                  表示されます。メニューバーの「English」から、同じページの英語版（原文）に移れます。",
};

/// A translated edition being built: what the workbook's preprocessor does differently.
pub struct Edition {
    /// The book's folder (its book.toml), whose src/ holds the English pages.
    root: PathBuf,
    /// The language's code: `ja`.
    lang: String,
    complete: bool,
    pub text: &'static EditionText,
}

impl Edition {
    /// The edition mdBook's context describes, or None for the English book.
    pub fn of(context: &Value, workbook: &Workbook) -> Option<Edition> {
        let config = &context["config"];
        let lang = config["book"]["language"].as_str().unwrap_or("en");
        if lang == "en" {
            return None;
        }
        let complete = config["preprocessor"]["workbook"]["translations"][lang]["complete"]
            .as_bool()
            .unwrap_or(false);
        let root = context["root"]
            .as_str()
            .map_or_else(|| workbook.root.join("book"), PathBuf::from);
        Some(Edition {
            root,
            lang: lang.to_owned(),
            complete,
            text: &JAPANESE,
        })
    }

    /// Points the page's figures at this edition's drawing of them: an image `figures/X.svg`
    /// becomes `figures/<lang>/X.svg` where the figure generator wrote one (`cargo xtask figures`
    /// draws every figure's words in each language into `book/src/figures/<lang>/`).
    pub fn localize_figures(&self, content: &mut String) {
        let figures = self.root.join("src/figures");
        *content = localized_figures(content, &self.lang, |name| {
            figures.join(&self.lang).join(name).is_file()
        });
    }

    /// The headings of the English page at `path` (under src/), in order, or None if it has none.
    pub fn english_headings(&self, path: &str) -> Option<Vec<String>> {
        let text = std::fs::read_to_string(self.root.join("src").join(path)).ok()?;
        Some(headings(&text).into_iter().map(str::to_owned).collect())
    }

    /// The glossary's translated terms with the English anchors (the headings keep them), read
    /// from the translated glossary page; a term's words in parentheses are not matched.
    pub fn glossary(&self, book: &mut Value) -> Vec<(String, String)> {
        let mut translated = Vec::new();
        visit_chapters(book, &mut |path, content| {
            if path == "glossary.md" {
                translated = headings(content)
                    .into_iter()
                    .filter_map(|h| h.strip_prefix("### "))
                    .map(|h| strip_heading_id(h).trim().to_owned())
                    .collect();
            }
        });
        let english: Vec<String> = self
            .english_headings("glossary.md")
            .unwrap_or_default()
            .iter()
            .filter_map(|h| h.strip_prefix("### "))
            .map(crate::grade::grader::anchor)
            .collect();
        if english.len() != translated.len() {
            return Vec::new();
        }
        translated.into_iter().zip(english).collect()
    }

    /// Gives every heading of the page the English heading's anchor (so links into the page and
    /// the language switch land on the same section), and, while the translation is in
    /// progress, puts the notice under the page's title.
    pub fn finish_page(&self, content: &mut String, english_headings: Option<&[String]>) {
        if let Some(english) = english_headings {
            *content = with_english_anchors(content, english);
        }
        if !self.complete {
            let notice = format!(
                "<div class=\"translation-notice\">\n\n{}\n\n</div>\n\n",
                self.text.in_progress
            );
            let at = if content.starts_with("# ") {
                content.find('\n').map_or(content.len(), |i| i + 1)
            } else {
                0
            };
            let prefix = if at > 0 { "\n" } else { "" };
            content.insert_str(at, &format!("{prefix}{notice}"));
        }
    }
}

/// `content` with every Markdown image `](figures/X.svg)` pointed at `figures/<lang>/X.svg`,
/// where `exists(X.svg)` says the language has its own drawing of that figure.
pub fn localized_figures(content: &str, lang: &str, exists: impl Fn(&str) -> bool) -> String {
    const LINK: &str = "](figures/";
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find(LINK) {
        let (before, after) = rest.split_at(at + LINK.len());
        out.push_str(before);
        let name_end = after.find(')').unwrap_or(after.len());
        let name = &after[..name_end];
        let plain = name.ends_with(".svg") && !name.contains(['/', ' ', '"']);
        if plain && exists(name) {
            out.push_str(lang);
            out.push('/');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Calls `f(path, content)` for every chapter of mdBook's book JSON, sub-chapters included.
pub fn visit_chapters(value: &mut Value, f: &mut dyn FnMut(&str, &mut String)) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(chapter)) = map.get_mut("Chapter") {
                let path = chapter
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if let Some(Value::String(content)) = chapter.get_mut("content") {
                    f(&path, content);
                }
            }
            for child in map.values_mut() {
                visit_chapters(child, f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| visit_chapters(item, f)),
        _ => {}
    }
}

/// True when `term` appears in `text` as a whole word or phrase, ignoring case.
pub fn mentions(text: &str, term: &str) -> bool {
    let text = text.to_lowercase();
    let term = term.to_lowercase();
    text.match_indices(&term).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + term.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The heading lines of a Markdown page (lines starting with `#` outside fenced code), in order.
pub fn headings(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(line);
        }
    }
    found
}

/// A heading without an explicit `{#id}` at its end.
fn strip_heading_id(heading: &str) -> &str {
    match heading
        .trim_end()
        .strip_suffix('}')
        .and_then(|h| h.rfind(" {#").map(|at| &h[..at]))
    {
        Some(text) => text,
        None => heading,
    }
}

/// `content` with each heading given the anchor of the English heading at the same place, when
/// the page has as many headings as the English one.
fn with_english_anchors(content: &str, english: &[String]) -> String {
    if headings(content).len() != english.len() {
        return content.to_owned();
    }
    let mut fenced = false;
    let mut index = 0;
    let mut out = String::with_capacity(content.len() + english.len() * 24);
    for line in content.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && bare.starts_with('#') {
            let source = english[index].trim_start_matches('#');
            index += 1;
            if !bare.trim_end().ends_with('}') {
                out.push_str(bare.trim_end());
                out.push_str(&format!(" {{#{}}}", crate::grade::grader::anchor(source)));
                out.push_str(&line[bare.len()..]);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// The part of a glossary term a page is searched for: without words in parentheses.
pub fn match_key(term: &str) -> &str {
    let cut = term.find(['(', '（']).map_or(term, |at| &term[..at]);
    cut.trim()
}

/// True when a translated page mentions the term: English terms as whole words, Japanese ones
/// anywhere (Japanese has no spaces between words).
pub fn mentions_term(content: &str, term: &str) -> bool {
    let key = match_key(term);
    if key.is_empty() {
        return false;
    }
    if key.is_ascii() {
        return mentions(content, key);
    }
    // A katakana word ends where the katakana do: リース is not found inside リリース.
    let katakana = |c: char| matches!(c, '\u{30a0}'..='\u{30ff}' | '\u{31f0}'..='\u{31ff}');
    let text = content.to_lowercase();
    let key = key.to_lowercase();
    let first = key.chars().next().is_some_and(katakana);
    let last = key.chars().next_back().is_some_and(katakana);
    text.match_indices(&key).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + key.len()..].chars().next();
        let inside_before = first && before.is_some_and(katakana);
        let inside_after = last && after.is_some_and(katakana);
        !inside_before && !inside_after
    })
}

/// Each chapter's name in the book (translated by the gettext preprocessor), by its path.
pub fn chapter_titles(book: &mut Value) -> BTreeMap<String, String> {
    let mut titles = BTreeMap::new();
    collect_titles(book, &mut titles);
    titles
}

fn collect_titles(value: &Value, titles: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(chapter)) = map.get("Chapter")
                && let (Some(path), Some(name)) = (
                    chapter.get("path").and_then(Value::as_str),
                    chapter.get("name").and_then(Value::as_str),
                )
            {
                titles.insert(path.to_owned(), name.to_owned());
            }
            for child in map.values() {
                collect_titles(child, titles);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_titles(item, titles)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn japanese_is_cut_into_pairs_and_latin_words_stay_whole() {
        assert_eq!(
            search_tokens("指数バックオフの上限 (cap) と Full-Jitter"),
            [
                "指数", "数バ", "バッ", "ック", "クオ", "オフ", "フの", "の上", "上限", "cap",
                "と", "full", "jitter"
            ]
        );
        assert_eq!(search_tokens("試行"), ["試行"]);
        assert_eq!(search_tokens("x"), ["x"]);
    }

    #[test]
    fn a_word_inside_a_sentence_is_found_by_its_pairs() {
        let page: BTreeSet<String> = search_tokens("遅延は指数バックオフで伸びます。")
            .into_iter()
            .collect();
        let query = search_tokens("指数バックオフ");
        assert!(query.iter().all(|t| page.contains(t)));
        let elsewhere: BTreeSet<String> = search_tokens("固定バックオフ").into_iter().collect();
        assert!(!query.iter().all(|t| elsewhere.contains(t)));
    }

    #[test]
    fn the_rebuilt_index_is_a_trie_elasticlunr_loads() {
        let mut data = json!({
            "search_options": {"bool": "OR"},
            "index": {
                "fields": ["title", "body"],
                "pipeline": ["trimmer", "stopWordFilter", "stemmer"],
                "documentStore": {"docs": {
                    "0": {"id": "0", "title": "指数バックオフ", "body": "上限つき"},
                    "1": {"id": "1", "title": "固定", "body": "バックオフ"}
                }, "docInfo": {}, "length": 2, "save": true},
                "index": {}
            }
        });
        reindex(&mut data).unwrap();
        let body = &data["index"]["index"]["body"]["root"];
        assert_eq!(body["バ"]["ッ"]["docs"]["1"]["tf"], json!(1.0));
        assert_eq!(body["バ"]["ッ"]["df"], json!(1));
        assert_eq!(
            data["index"]["index"]["title"]["root"]["指"]["数"]["df"],
            json!(1)
        );
        assert_eq!(
            data["index"]["documentStore"]["docInfo"]["0"]["title"],
            json!(6)
        );
        assert_eq!(data["index"]["pipeline"], json!([]));
        assert_eq!(data["search_options"]["bool"], json!("AND"));
    }

    #[test]
    fn po_files_round_trip_and_count() {
        let po = "msgid \"\"\nmsgstr \"\"\n\"Language: ja\\n\"\n\n#: src/a.md src/b.md\nmsgid \"Jitter\"\nmsgstr \"ジッター\"\n\n#: src/a.md\n#, fuzzy\n#| msgid \"Old\"\nmsgid \"\"\n\"Two \\\"lines\\\"\\n\"\n\"here\"\nmsgstr \"古い\"\n\n#: src/b.md\nmsgid \"New\"\nmsgstr \"\"\n\n#~ msgid \"Gone\"\n#~ msgstr \"消えた\"\n";
        let entries = parse_po(po);
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[2].msgid, "Two \"lines\"\nhere");
        assert!(entries[2].fuzzy());
        assert!(entries[4].obsolete);
        assert_eq!(parse_po(&write_po(&entries)), entries);
        let counts = Coverage::of(po);
        assert_eq!(
            (counts.translated, counts.untranslated, counts.fuzzy),
            (1, 1, 1)
        );
        assert_eq!((counts.pages_done, counts.pages), (0, 2));
    }

    #[test]
    fn pages_pair_message_by_message_and_a_different_count_is_refused() {
        let entry = |msgid: &str, refs: &[&str]| PoEntry {
            msgid: msgid.to_owned(),
            references: refs.iter().map(|r| (*r).to_owned()).collect(),
            ..PoEntry::default()
        };
        let english = [
            entry("Title", &["src/a.md:1"]),
            entry("Same", &["src/a.md:3", "src/a.md:9"]),
            entry("Body", &["src/a.md:5"]),
            entry("Other", &["src/b.md:1"]),
        ];
        let translated = [
            entry("題", &["src/a.md:1"]),
            entry("同じ", &["src/a.md:3", "src/a.md:12"]),
            entry("本文", &["src/a.md:6"]),
            entry("他", &["src/b.md:1"]),
            entry("余分", &["src/b.md:3"]),
        ];
        let en_pages = HashMap::from([("a.md".to_owned(), String::new())]);
        let ja_pages = HashMap::new();
        let (pairs, report) = pair_pages(
            (&english, &en_pages),
            (&translated, &ja_pages),
            &["a.md".into(), "b.md".into()],
        );
        assert_eq!(pairs["Title"], "題");
        assert_eq!(pairs["Body"], "本文");
        assert_eq!(pairs["Same"], "同じ");
        assert!(!pairs.contains_key("Other"));
        assert_eq!((report.imported, report.refused), (1, 1));
    }

    #[test]
    fn translated_headings_take_the_english_anchors() {
        let english = ["# 8. Full jitter".to_owned(), "## 8.3 The `cap`".to_owned()];
        let page = "# 8. フルジッター\n\ntext\n\n```rust\n# hidden\n```\n\n## 8.3 上限 `cap`\n";
        assert_eq!(
            with_english_anchors(page, &english),
            "# 8. フルジッター {#8-full-jitter}\n\ntext\n\n```rust\n# hidden\n```\n\n## 8.3 上限 `cap` {#83-the-cap}\n"
        );
        // A page whose headings do not line up is left alone.
        assert_eq!(with_english_anchors("# only\n", &english), "# only\n");
    }

    #[test]
    fn japanese_glossary_terms_match_inside_sentences() {
        assert!(mentions_term(
            "遅延は指数バックオフで伸びます",
            "指数バックオフ（exponential backoff）"
        ));
        assert_eq!(match_key("ジッター (jitter)"), "ジッター");
        assert!(mentions_term("Full jitter spreads", "jitter"));
        assert!(!mentions_term("jitterbug", "jitter"));
        assert!(!mentions_term("固定バックオフ", "指数バックオフ"));
        assert!(!mentions_term("新しいリリースです", "リース（lease）"));
        assert!(mentions_term("行のリースが切れます", "リース（lease）"));
        assert!(mentions_term("上限付きの遅延", "上限"));
    }

    #[test]
    fn translations_keep_the_prediction_lead_and_the_folds() {
        let po = "#: src/a.md\nmsgid \"**Predict, then run.** How many?\"\nmsgstr \"**予想してください。** 何回？\"\n\n#: src/a.md\nmsgid \"<details><summary>Answer</summary>\"\nmsgstr \"答え\"\n\n#: src/a.md\nmsgid \"**Predict, then run.** Ok?\"\nmsgstr \"**予想してから実行しましょう。** よい？\"\n\n#: src/a.md\nmsgid \"<details>\"\nmsgstr \"\"\n";
        let problems = page_rules(po);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains(PREDICT_LEAD_JA));
        assert!(problems[1].contains("<details"));
    }

    #[test]
    fn cells_of_one_row_are_ordered_by_where_they_stand() {
        let entry = |msgid: &str| PoEntry {
            msgid: msgid.to_owned(),
            references: vec!["src/t.md:3".to_owned()],
            ..PoEntry::default()
        };
        // "permanent" came first in the catalog (another page used it earlier).
        let catalog = [entry("permanent"), entry("transient: *retry*")];
        let pages = HashMap::from([(
            "t.md".to_owned(),
            "# T\n\n| | transient: _retry_ | permanent |\n".to_owned(),
        )]);
        let ordered = messages_by_page(&catalog, &pages);
        assert_eq!(
            ordered["t.md"],
            [
                (3, "transient: *retry*".to_owned()),
                (3, "permanent".to_owned())
            ]
        );
    }

    #[test]
    fn a_cell_is_found_by_its_own_text_not_across_cells() {
        assert_eq!(column_of("| 0.3 | 0.30 | no |", "0.30"), 2);
        assert_eq!(column_of("| 0.3 | 0.30 | no |", "no"), 3);
        assert_eq!(column_of("see the `cap` here", "here"), 9);
    }

    #[test]
    fn english_left_in_a_translated_page_is_not_a_translation() {
        assert!(english_prose(
            "The loop itself is chapter 8's, with the key minted first."
        ));
        assert!(!english_prose(
            "/// Fails the first `failures` calls, then succeeds."
        ));
        assert!(!english_prose(
            "Brooker, M. (2015). Exponential Backoff And Jitter. AWS Architecture Blog."
        ));
        assert!(!english_prose("`Err(Http { status: 404, .. })`"));
        assert!(!english_prose("Full jitter"));
    }

    #[test]
    fn languages_come_from_book_toml() {
        let toml = "[preprocessor.workbook]\ncommand = \"x\"\n\n[preprocessor.workbook.translations.ja]\ncomplete = false\n";
        assert_eq!(
            languages_in(toml).unwrap(),
            [Language {
                code: "ja".into(),
                complete: false
            }]
        );
        assert!(languages_in("[book]\ntitle = \"t\"\n").unwrap().is_empty());
    }

    #[test]
    fn figures_point_at_the_editions_drawing_where_there_is_one() {
        let page = "![曲線](figures/ch08-arrivals.svg)\n\n![表](figures/ch10-results.svg) \
                    [link](figures/ch08-arrivals.svg) ![x](figures/ja/ch08-arrivals.svg)";
        let localized = localized_figures(page, "ja", |name| name == "ch08-arrivals.svg");
        assert_eq!(
            localized,
            "![曲線](figures/ja/ch08-arrivals.svg)\n\n![表](figures/ch10-results.svg) \
             [link](figures/ja/ch08-arrivals.svg) ![x](figures/ja/ch08-arrivals.svg)"
        );
        assert_eq!(
            localized_figures("no figures", "ja", |_| true),
            "no figures"
        );
    }
}
