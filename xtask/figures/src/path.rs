//! The learning path: the book's parts and chapters as a figure, drawn from the manifest
//! (`xtask/workbook.toml`), so it changes when a chapter is added or finished. The Japanese
//! figure takes the part and chapter titles from the Japanese book's translation of its table of
//! contents (`book/po/ja.po`), so the figure and the book's menu say the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::figure::{Figure, Lang};
use crate::plot::{Color, Palette, WIDTH, diagram, escape, wrap_lines};

/// The workbook's manifest, beside this crate's folder. `cargo run` names that folder; the path
/// built in is the fallback, and it is out of date when the workbook has moved since the build
/// (cargo does not rebuild a moved workspace).
fn manifest() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../workbook.toml")
}

/// The Japanese book's translations, beside the manifest.
fn japanese_po() -> PathBuf {
    manifest().with_file_name("").join("../book/po/ja.po")
}

const MARGIN: f64 = 20.0;
const GAP: f64 = 12.0;
/// Room for a part's number and up to three lines of its name.
const PART_HEADER: f64 = 60.0;
/// The most lines a part's name takes ("Staying up under overload" needs three in a narrow column).
const NAME_LINES: usize = 3;
const LINE: f64 = 14.0;
const BOX_PAD: f64 = 7.0;
const BOX_GAP: f64 = 8.0;

/// One chapter as the figure needs it.
struct Entry {
    id: String,
    title: String,
    ready: bool,
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    let mut parts = read_parts(&manifest());
    if lang == Lang::Ja {
        let text = std::fs::read_to_string(japanese_po()).unwrap_or_default();
        translate(&mut parts, &translations(&text));
    }
    vec![Figure::new(
        "book-learning-path",
        learning_path(&parts, lang),
    )]
}

/// The translated, non-fuzzy messages of a PO file: `msgid → msgstr`.
fn translations(po: &str) -> HashMap<String, String> {
    let mut found = HashMap::new();
    for entry in po.split("\n\n") {
        if entry
            .lines()
            .any(|l| l.starts_with("#,") && l.contains("fuzzy"))
        {
            continue;
        }
        let mut id = String::new();
        let mut text = String::new();
        let mut into_text = false;
        for line in entry.lines() {
            let quoted = if let Some(rest) = line.strip_prefix("msgid ") {
                into_text = false;
                rest
            } else if let Some(rest) = line.strip_prefix("msgstr ") {
                into_text = true;
                rest
            } else if line.starts_with('"') {
                line
            } else {
                continue;
            };
            let unquoted = quoted
                .trim()
                .trim_matches('"')
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
            if into_text {
                text.push_str(&unquoted);
            } else {
                id.push_str(&unquoted);
            }
        }
        if !id.is_empty() && !text.is_empty() {
            found.insert(id, text);
        }
    }
    found
}

/// Replaces every part and chapter title that has a translation.
fn translate(parts: &mut [(String, Vec<Entry>)], words: &HashMap<String, String>) {
    for (title, chapters) in parts {
        if let Some(japanese) = words.get(title.as_str()) {
            title.clone_from(japanese);
        }
        for chapter in chapters {
            if let Some(japanese) = words.get(&chapter.title) {
                chapter.title.clone_from(japanese);
            }
        }
    }
}

/// The parts and chapters of the manifest, in reading order.
fn read_parts(manifest: &Path) -> Vec<(String, Vec<Entry>)> {
    let text = std::fs::read_to_string(manifest).expect("xtask/workbook.toml is readable");
    let table: toml::Table = toml::from_str(&text).expect("xtask/workbook.toml is valid TOML");
    let parts = table["part"].as_array().expect("the manifest lists parts");
    parts
        .iter()
        .map(|part| {
            let title = part["title"].as_str().unwrap_or_default().to_owned();
            let chapters = part["chapters"]
                .as_array()
                .map(|chapters| {
                    chapters
                        .iter()
                        .map(|chapter| Entry {
                            id: chapter["id"].as_str().unwrap_or_default().to_owned(),
                            title: chapter["title"].as_str().unwrap_or_default().to_owned(),
                            ready: chapter["ready"].as_bool().unwrap_or(false),
                        })
                        .collect()
                })
                .unwrap_or_default();
            (title, chapters)
        })
        .collect()
}

fn learning_path(parts: &[(String, Vec<Entry>)], lang: Lang) -> String {
    let columns = parts.len().max(1) as f64;
    let column_width = (WIDTH - 2.0 * MARGIN - GAP * (columns - 1.0)) / columns;
    let text_width = column_width - 2.0 * BOX_PAD;
    let mut body = String::new();
    let mut tallest: f64 = 0.0;
    for (index, (title, chapters)) in parts.iter().enumerate() {
        let x = MARGIN + index as f64 * (column_width + GAP);
        let (part, name) = title.split_once(" — ").unwrap_or((title, ""));
        push_line!(
            body,
            r#"<text x="{:.1}" y="14" font-size="{}" font-weight="600" fill="{}">{}</text>"#,
            x,
            Palette::FONT_SIZE,
            Palette::INK,
            escape(part)
        );
        for (line, text) in wrap_lines(name, Palette::SMALL_FONT_SIZE, column_width)
            .iter()
            .enumerate()
            .take(NAME_LINES)
        {
            push_line!(
                body,
                r#"<text x="{:.1}" y="{:.1}" font-size="{}" fill="{}">{}</text>"#,
                x,
                30.0 + line as f64 * LINE,
                Palette::SMALL_FONT_SIZE,
                Palette::MUTED,
                escape(text)
            );
        }
        let mut y = PART_HEADER + 8.0;
        for chapter in chapters {
            let lines = wrap_lines(&chapter.title, Palette::SMALL_FONT_SIZE, text_width);
            let height = 2.0 * BOX_PAD + LINE * (lines.len() as f64 + 1.0);
            let (stroke, fill, dash) = if chapter.ready {
                (Color::Blue.hex(), "#eef5fb", "")
            } else {
                (Palette::BORDER, "#ffffff", r#" stroke-dasharray="4 3""#)
            };
            push_line!(
                body,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{column_width:.1}" height="{height:.1}" rx="6" fill="{fill}" stroke="{stroke}"{dash}/>"#
            );
            let ink = if chapter.ready {
                Palette::INK
            } else {
                Palette::MUTED
            };
            let label = if chapter.ready {
                chapter.id.clone()
            } else {
                lang.pick(
                    format!("{} (draft)", chapter.id),
                    format!("{}（草稿）", chapter.id),
                )
            };
            push_line!(
                body,
                r#"<text x="{:.1}" y="{:.1}" font-size="{}" font-weight="600" fill="{ink}">{}</text>"#,
                x + BOX_PAD,
                y + BOX_PAD + 11.0,
                Palette::SMALL_FONT_SIZE,
                escape(&label)
            );
            for (line, text) in lines.iter().enumerate() {
                push_line!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" font-size="{}" fill="{ink}">{}</text>"#,
                    x + BOX_PAD,
                    y + BOX_PAD + 11.0 + LINE * (line as f64 + 1.0),
                    Palette::SMALL_FONT_SIZE,
                    escape(text)
                );
            }
            y += height + BOX_GAP;
        }
        tallest = tallest.max(y);
        if index + 1 < parts.len() {
            let arrow_x = x + column_width + 1.0;
            push_line!(
                body,
                r#"<path d="M{:.1} 10 l{:.1} 0 m-4 -4 l4 4 l-4 4" fill="none" stroke="{}" stroke-width="1.5"/>"#,
                arrow_x,
                GAP - 2.0,
                Palette::MUTED
            );
        }
    }
    let ready = parts
        .iter()
        .flat_map(|(_, c)| c)
        .filter(|c| c.ready)
        .count();
    let total = parts.iter().map(|(_, c)| c.len()).sum::<usize>();
    diagram(
        lang.pick("The learning path", "学習の道筋"),
        &lang.pick(
            format!(
                "Five parts, read left to right, each chapter top to bottom. Solid boxes are \
                 written and graded ({ready} of {total}); dashed ones are still drafts."
            ),
            format!(
                "部は左から右へ、各部の章は上から下へ読みます。実線の枠は執筆と採点が済んだ章（{total} \
                 章中 {ready} 章）、破線の枠はまだ草稿です。"
            ),
        ),
        tallest,
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_shows_every_chapter_of_the_manifest() {
        let parts = read_parts(&manifest());
        let svg = learning_path(&parts, Lang::En);
        for (_, chapters) in &parts {
            for chapter in chapters {
                assert!(svg.contains(&chapter.id), "{} is missing", chapter.id);
            }
        }
    }

    #[test]
    fn japanese_titles_come_from_the_po_file() {
        let po = "#: src/SUMMARY.md\nmsgid \"Full jitter\"\nmsgstr \"フルジッター\"\n\n\
                  #, fuzzy\nmsgid \"Circuit breakers\"\nmsgstr \"古い訳\"\n\n\
                  msgid \"\"\n\"Part II — How long \"\n\"to wait\"\nmsgstr \"第 II 部 — 待つ長さ\"\n";
        let words = translations(po);
        assert_eq!(words["Full jitter"], "フルジッター");
        assert_eq!(words["Part II — How long to wait"], "第 II 部 — 待つ長さ");
        assert!(
            !words.contains_key("Circuit breakers"),
            "a fuzzy entry is not used"
        );
        let entry = |title: &str| Entry {
            id: "ch08".to_owned(),
            title: title.to_owned(),
            ready: true,
        };
        let mut parts = vec![(
            "Part II — How long to wait".to_owned(),
            vec![entry("Full jitter"), entry("Circuit breakers")],
        )];
        translate(&mut parts, &words);
        assert_eq!(parts[0].0, "第 II 部 — 待つ長さ");
        assert_eq!(parts[0].1[0].title, "フルジッター");
        assert_eq!(parts[0].1[1].title, "Circuit breakers");
    }
}
