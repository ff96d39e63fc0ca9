//! `workbook-figures`: writes every SVG figure of the book, or checks that they are up to date.
//!
//! ```text
//! cargo run -p workbook-figures -- book/src/figures           write every figure
//! cargo run -p workbook-figures -- --check book/src/figures   write nothing; exit 1 if stale
//! ```
//!
//! Figures are computed from the solution crates, so the book shows what the tested code does.
//! To add a chapter's figures, write a module with `pub fn figures(lang: Lang) -> Vec<Figure>` and
//! add it to [`CHAPTERS`]. Every figure is drawn in each [`Lang`]: English into `<out-dir>`,
//! Japanese into `<out-dir>/ja/` for the Japanese book. Generated tables are English only (the
//! Japanese book translates them through its PO file, like any page text).

/// `push_fmt!(out, "format", args…)`: appends formatted text to the `String` `out`.
macro_rules! push_fmt {
    ($out:expr, $($arg:tt)*) => {{
        use $crate::plot::PushFmt as _;
        $out.push_fmt(format_args!($($arg)*));
    }};
}

/// `push_line!(out, "format", args…)`: appends formatted text and a newline to the `String` `out`.
macro_rules! push_line {
    ($out:expr, $($arg:tt)*) => {{
        use $crate::plot::PushFmt as _;
        $out.push_fmt(format_args!($($arg)*));
        $out.push('\n');
    }};
}

mod ch01;
mod ch03;
mod ch04;
mod ch06;
mod ch07;
mod ch08;
mod ch09;
mod ch10;
mod ch12;
mod ch13;
mod ch16;
mod ch23;
mod ch24;
mod ch25;
mod ch26;
mod ch27;
mod ch28;
mod figure;
mod path;
mod plot;
#[path = "../../src/lang/width.rs"]
mod width;
#[path = "../../src/report/xml.rs"]
mod xml;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use figure::{Figure, Lang};

/// Every chapter that has figures: one line per chapter.
const CHAPTERS: &[fn(Lang) -> Vec<Figure>] = &[
    path::figures,
    ch01::figures,
    ch03::figures,
    ch04::figures,
    ch06::figures,
    ch07::figures,
    ch08::figures,
    ch09::figures,
    ch10::figures,
    ch12::figures,
    ch13::figures,
    ch16::figures,
    ch23::figures,
    ch24::figures,
    ch25::figures,
    ch26::figures,
    ch27::figures,
    ch28::figures,
];

const USAGE: &str = "\
usage: workbook-figures [--check] <out-dir>

Writes every figure of the book as <out-dir>/<name>.svg (a generated table as <name>.md), and
its Japanese version as <out-dir>/ja/<name>.svg.
  --check   write nothing; list every figure whose file is missing or differs, and exit 1 if any";

const STALE_HINT: &str = "regenerate them with `cargo xtask figures` \
(or `cargo run -p workbook-figures -- book/src/figures`)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (check, dir) = match args.as_slice() {
        [flag] if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [flag, dir] if flag == "--check" => (true, dir),
        [dir] if !dir.starts_with('-') => (false, dir),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let figures = match all_figures() {
        Ok(figures) => figures,
        Err(problem) => {
            eprintln!("error: {problem}");
            return ExitCode::from(2);
        }
    };
    let dir = Path::new(dir);
    let result = if check {
        run_check(&figures, dir)
    } else {
        run_write(&figures, dir)
    };
    match result {
        Ok(code) => code,
        Err(problem) => {
            eprintln!("error: {problem}");
            ExitCode::from(2)
        }
    }
}

/// One chapter's figures in `lang`: every figure in English; in another language the SVG
/// figures only (a generated table is translated with the page that includes it).
fn chapter_figures(chapter: fn(Lang) -> Vec<Figure>, lang: Lang) -> Vec<Figure> {
    chapter(lang)
        .into_iter()
        .filter(|figure| lang == Lang::En || figure.extension == "svg")
        .map(|figure| figure.in_lang(lang))
        .collect()
}

/// Every chapter's figures in every language, after checking that their names are valid and
/// unique.
fn all_figures() -> Result<Vec<Figure>, String> {
    let figures: Vec<Figure> = Lang::ALL
        .into_iter()
        .flat_map(|lang| CHAPTERS.iter().flat_map(move |&c| chapter_figures(c, lang)))
        .collect();
    let mut names = BTreeSet::new();
    for figure in &figures {
        if let Some(problem) = figure.name_problem() {
            return Err(problem);
        }
        if !names.insert(figure.file_name()) {
            return Err(format!("two figures are named {:?}", figure.name));
        }
    }
    Ok(figures)
}

/// Why a figure's file does not match what the generator produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stale {
    Missing,
    Differs,
}

/// The figures whose file in `dir` is missing or holds other bytes.
fn stale_figures<'a>(figures: &'a [Figure], dir: &Path) -> Vec<(&'a Figure, Stale)> {
    figures
        .iter()
        .filter_map(|figure| match fs::read(dir.join(figure.file_name())) {
            Ok(bytes) if bytes == figure.svg.as_bytes() => None,
            Ok(_) => Some((figure, Stale::Differs)),
            Err(_) => Some((figure, Stale::Missing)),
        })
        .collect()
}

/// `chNN-*.svg` and `chNN-*.md` files in `dir` and in its language folders that no chapter
/// generates (left over from a renamed figure), relative to `dir`.
fn strays(figures: &[Figure], dir: &Path) -> Vec<String> {
    let known: BTreeSet<String> = figures.iter().map(Figure::file_name).collect();
    let folders = Lang::ALL.into_iter().map(|lang| match lang.folder() {
        Some(folder) => (dir.join(folder), format!("{folder}/")),
        None => (dir.to_path_buf(), String::new()),
    });
    let mut strays: Vec<String> = folders
        .flat_map(|(folder, prefix)| {
            let entries = fs::read_dir(folder).into_iter().flatten();
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| {
                    let generated = name.ends_with(".svg") || name.ends_with(".md");
                    name.starts_with("ch") && generated
                })
                .map(move |name| format!("{prefix}{name}"))
                .collect::<Vec<_>>()
        })
        .filter(|name| !known.contains(name))
        .collect();
    strays.sort();
    strays
}

fn warn_strays(figures: &[Figure], dir: &Path) {
    for stray in strays(figures, dir) {
        eprintln!(
            "note: {} is not generated by any chapter; delete it if it is left over",
            dir.join(stray).display()
        );
    }
}

fn run_check(figures: &[Figure], dir: &Path) -> Result<ExitCode, String> {
    let stale = stale_figures(figures, dir);
    warn_strays(figures, dir);
    if stale.is_empty() {
        println!(
            "{} figures in {} are up to date",
            figures.len(),
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("figures out of date in {}:", dir.display());
    for (figure, why) in stale {
        let why = match why {
            Stale::Missing => "missing",
            Stale::Differs => "differs",
        };
        println!("  {} ({why})", figure.file_name());
    }
    println!("{STALE_HINT}");
    Ok(ExitCode::from(1))
}

fn run_write(figures: &[Figure], dir: &Path) -> Result<ExitCode, String> {
    for folder in Lang::ALL.into_iter().filter_map(Lang::folder) {
        let folder = dir.join(folder);
        fs::create_dir_all(&folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    }
    let stale = stale_figures(figures, dir);
    for (figure, _) in &stale {
        let path = dir.join(figure.file_name());
        fs::write(&path, &figure.svg)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    warn_strays(figures, dir);
    println!(
        "{} figures in {} ({} rewritten)",
        figures.len(),
        dir.display(),
        stale.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book_figures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../book/src/figures")
    }

    /// The words of an SVG's text elements.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| {
                t.split_once('>')?
                    .1
                    .split_once("</text>")
                    .map(|(text, _)| text)
            })
            .collect()
    }

    /// Every chapter's figures in every language: the same bytes twice, valid names, well-formed
    /// SVG. Each language draws the same figures, and a Japanese figure's words are Japanese:
    /// a text with no Japanese in it must also be in the English figure (a number, a unit, an
    /// identifier or a name, left as it is), so no English label is left untranslated.
    #[test]
    fn figures_are_deterministic_well_formed_and_translated() {
        for &chapter in CHAPTERS {
            let [english, japanese] = Lang::ALL.map(|lang| {
                let first = chapter_figures(chapter, lang);
                assert_eq!(first, chapter_figures(chapter, lang));
                for figure in &first {
                    assert_eq!(figure.name_problem(), None);
                    if figure.extension == "svg" {
                        crate::plot::tests::assert_well_formed(&figure.svg);
                    }
                }
                first
            });
            let svgs: Vec<&Figure> = english.iter().filter(|f| f.extension == "svg").collect();
            assert_eq!(svgs.len(), japanese.len());
            for (original, figure) in svgs.iter().zip(&japanese) {
                assert_eq!(original.name, figure.name);
                let english_texts = texts(&original.svg);
                for text in texts(&figure.svg) {
                    let in_japanese = text.chars().any(width::wide);
                    assert!(
                        in_japanese || english_texts.contains(&text),
                        "{}: {text:?} is English only",
                        figure.name
                    );
                }
            }
        }
    }

    #[test]
    fn figure_names_are_valid_and_unique() {
        let figures = all_figures().expect("valid figures");
        assert!(!figures.is_empty());
    }

    #[test]
    fn invalid_names_are_rejected() {
        let bad = [
            "delays",
            "ch8-delays",
            "ch08-Delays",
            "ch08_delays",
            "ch08-",
        ];
        for name in bad {
            let figure = Figure::new(name, String::new());
            assert!(figure.name_problem().is_some(), "{name} was accepted");
        }
    }

    #[test]
    fn check_reports_missing_and_differing_files() {
        // English and Japanese figures are checked alike, each in its own folder.
        let dir = std::env::temp_dir().join(format!("workbook-figures-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(dir.join("ja")).unwrap();
        let figures = vec![
            Figure::new("ch99-same", "<svg/>".to_owned()),
            Figure::new("ch99-changed", "<svg>new</svg>".to_owned()),
            Figure::new("ch99-missing", "<svg/>".to_owned()),
            Figure::new("ch99-same", "<svg>ja</svg>".to_owned()).in_lang(Lang::Ja),
            Figure::new("ch99-missing", "<svg>ja</svg>".to_owned()).in_lang(Lang::Ja),
        ];
        fs::write(dir.join("ch99-same.svg"), "<svg/>").unwrap();
        fs::write(dir.join("ch99-changed.svg"), "<svg>old</svg>").unwrap();
        fs::write(dir.join("ch99-gone.svg"), "<svg/>").unwrap();
        fs::write(dir.join("ja/ch99-same.svg"), "<svg>ja</svg>").unwrap();
        fs::write(dir.join("ja/ch99-gone.svg"), "<svg/>").unwrap();
        let stale: Vec<(String, Stale)> = stale_figures(&figures, &dir)
            .into_iter()
            .map(|(figure, why)| (figure.file_name(), why))
            .collect();
        let found_strays = strays(&figures, &dir);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            stale,
            [
                ("ch99-changed.svg".to_owned(), Stale::Differs),
                ("ch99-missing.svg".to_owned(), Stale::Missing),
                ("ja/ch99-missing.svg".to_owned(), Stale::Missing),
            ]
        );
        assert_eq!(found_strays, ["ch99-gone.svg", "ja/ch99-gone.svg"]);
    }

    /// The generated files are committed; this fails in CI when they fall behind the code.
    #[test]
    fn book_figures_are_up_to_date() {
        let figures = all_figures().expect("valid figures");
        let stale: Vec<String> = stale_figures(&figures, &book_figures())
            .into_iter()
            .map(|(figure, why)| format!("{} ({why:?})", figure.file_name()))
            .collect();
        assert!(stale.is_empty(), "stale figures: {stale:?}; {STALE_HINT}");
    }
}
