//! The learning path: the book's parts and chapters as a figure, drawn from the manifest
//! (`xtask/workbook.toml`), so it changes when a chapter is added or finished.

use std::path::{Path, PathBuf};

use crate::figure::Figure;
use crate::plot::{Color, Palette, WIDTH, diagram, escape, wrap_lines};

/// The workbook's manifest, beside this crate's folder. `cargo run` names that folder; the path
/// built in is the fallback, and it is out of date when the workbook has moved since the build
/// (cargo does not rebuild a moved workspace).
fn manifest() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../workbook.toml")
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

pub fn figures() -> Vec<Figure> {
    vec![Figure::new(
        "book-learning-path",
        learning_path(&read_parts(&manifest())),
    )]
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

fn learning_path(parts: &[(String, Vec<Entry>)]) -> String {
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
                format!("{} (draft)", chapter.id)
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
        "The learning path",
        &format!(
            "Five parts, read left to right, each chapter top to bottom. Solid boxes are written \
             and graded ({ready} of {total}); dashed ones are still drafts."
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
        let svg = learning_path(&parts);
        for (_, chapters) in &parts {
            for chapter in chapters {
                assert!(svg.contains(&chapter.id), "{} is missing", chapter.id);
            }
        }
    }
}
