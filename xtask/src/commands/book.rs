//! `cargo xtask book`: build (or serve) the mdBook. The first run installs mdBook into
//! `target/tools/`, so a fresh machine needs no manual step; `check` never waits for it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::commands::book_i18n;
use crate::curriculum::workbook::Workbook;
use crate::tools::Tool;
use crate::tools::{MDBOOK, ensure_mdbook};

/// The same release with its server and file watcher, for `cargo xtask book --serve`.
const MDBOOK_SERVE: Tool = Tool {
    features: &[],
    folder: "tools/serve",
    install_time: "about a minute",
    ..MDBOOK
};

/// Build the book into book/build/ (or serve it with live reload).
#[derive(Debug, Args)]
pub struct BookArgs {
    /// Open the built book in a browser.
    #[arg(long)]
    pub open: bool,
    /// Serve the book on localhost with live reload instead of building once (the first time,
    /// this installs an mdBook with its server into target/tools/serve/).
    #[arg(long, conflicts_with = "open")]
    pub serve: bool,
    /// After building, test the book in headless Chromium (pages, figures, links, search, print).
    #[arg(long, conflicts_with = "serve")]
    pub test: bool,
    /// `cargo xtask --lang ja book` or `cargo xtask book --lang ja` (the grader's language flag)
    /// builds only that edition (`ja` into book/build/ja/, `en` into book/build/); without it, every
    /// edition is built. Only the flag counts here, not $WORKBOOK_LANG or the locale.
    #[arg(from_global)]
    pub lang: Option<crate::lang::Lang>,
    /// (translators) Extract book/po/messages.pot from the English pages and merge it into every
    /// book/po/<lang>.po (needs GNU gettext's msgmerge).
    #[arg(long, conflicts_with_all = ["serve", "test", "open"])]
    pub update_po: bool,
    /// (translators) Pair translated Markdown pages in DIR (same paths as under book/src) with the
    /// English ones, message by message, into book/po/<lang>.po; needs --lang.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["serve", "test", "open"])]
    pub import: Option<PathBuf>,
    /// (translators) Print each translation's counts (translated, untranslated, fuzzy, pages
    /// done) and check the pages' rules in it, as `cargo xtask ci` does.
    #[arg(long, conflicts_with_all = ["serve", "test", "open", "update_po"])]
    pub po_status: bool,
}

pub fn run(args: BookArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    if let Some(code) = translators_command(&workbook, &args)? {
        return Ok(code);
    }
    let translations: Vec<String> = book_i18n::languages(&workbook)?
        .into_iter()
        .map(|language| language.code)
        .collect();
    match args.lang.map(crate::lang::Lang::code) {
        None | Some("en") => {}
        Some(lang) if translations.iter().any(|code| code == lang) => {
            return one_translation(&workbook, &args, lang);
        }
        Some(lang) => bail!(
            "the book has no {lang} edition (editions: en, {})",
            translations.join(", ")
        ),
    }
    let mdbook = if args.serve {
        MDBOOK_SERVE.ensure(&workbook)?
    } else {
        ensure_mdbook(&workbook)?
    };
    let book = workbook.root.join("book");
    let mut command = Command::new(&mdbook);
    if args.serve {
        command.args(["serve", "--open"]);
    } else {
        command.arg("build");
    }
    let status = command
        .arg(&book)
        .status()
        .with_context(|| format!("running {}", mdbook.display()))?;
    if !status.success() {
        bail!("mdbook could not build the book");
    }
    // The translations, each into its folder beside the English book (which mdBook's build
    // empties first), unless only English was asked for.
    if args.lang.is_none() && !args.serve {
        for lang in &translations {
            if !book_i18n::build_edition(&workbook, &mdbook, lang, false)? {
                bail!("the {lang} edition did not build (the reason is above)");
            }
        }
    }
    let index = book.join("build/index.html");
    println!("The book is at {}", index.display());
    for lang in translations.iter().filter(|_| args.lang.is_none()) {
        println!(
            "The {lang} edition is at {}",
            book.join(format!("build/{lang}/index.html")).display()
        );
    }
    if args.open {
        open_in_browser(&index);
    }
    if args.test {
        return browser_test(&workbook);
    }
    Ok(ExitCode::SUCCESS)
}

/// Success when `ok`.
fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--po-status`, `--update-po` and `--import`, the translators' commands; None for the others.
fn translators_command(workbook: &Workbook, args: &BookArgs) -> Result<Option<ExitCode>> {
    if args.po_status {
        let results = book_i18n::coverage_report(workbook)?;
        return Ok(Some(exit_code(results.iter().all(|(_, ok)| *ok))));
    }
    if !args.update_po && args.import.is_none() {
        return Ok(None);
    }
    let mdbook = ensure_mdbook(workbook)?;
    if let Some(dir) = &args.import {
        let Some(lang) = args
            .lang
            .map(crate::lang::Lang::code)
            .filter(|code| *code != "en")
        else {
            bail!(
                "--import needs the language of the pages: `cargo xtask book --lang ja --import DIR`"
            );
        };
        let all = book_i18n::import(workbook, &mdbook, lang, dir)?;
        return Ok(Some(exit_code(all)));
    }
    book_i18n::update_po(workbook, &mdbook)?;
    Ok(Some(ExitCode::SUCCESS))
}

/// Builds (or serves) the `lang` translation alone, into book/build/<lang>/.
fn one_translation(workbook: &Workbook, args: &BookArgs, lang: &str) -> Result<ExitCode> {
    if args.serve {
        let mdbook = MDBOOK_SERVE.ensure(workbook)?;
        let helpers = book_i18n::ensure_helpers(workbook)?;
        let status = Command::new(&mdbook)
            .args(["serve", "--open"])
            .arg(workbook.root.join("book"))
            .envs(book_i18n::edition_env(workbook, &helpers, lang))
            .status()
            .with_context(|| format!("running {}", mdbook.display()))?;
        return Ok(exit_code(status.success()));
    }
    let mdbook = ensure_mdbook(workbook)?;
    // The English book first: the edition's code blocks are held to it, and it must be current.
    let english = Command::new(&mdbook)
        .arg("build")
        .arg(workbook.root.join("book"))
        .output()
        .with_context(|| format!("running {}", mdbook.display()))?;
    if !english.status.success() {
        eprint!("{}", String::from_utf8_lossy(&english.stderr));
        bail!("mdbook could not build the book");
    }
    if !book_i18n::build_edition(workbook, &mdbook, lang, false)? {
        bail!("the {lang} edition did not build (the reason is above)");
    }
    let index = workbook.root.join(format!("book/build/{lang}/index.html"));
    println!("The {lang} edition is at {}", index.display());
    if args.open {
        open_in_browser(&index);
    }
    if args.test {
        return browser_test(workbook);
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs book/tests/browser.mjs against the built book, installing its one npm package first.
pub fn browser_test(workbook: &Workbook) -> Result<ExitCode> {
    let tests = workbook.root.join("book/tests");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if !Path::new(&chromium).exists() {
        bail!(
            "the browser test needs Chromium at {chromium} (Debian: `apt-get install chromium`; \
             or set CHROMIUM to another Chromium or Chrome binary)"
        );
    }
    if !tests.join("node_modules/playwright-core").is_dir() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel", "error"])
            .current_dir(&tests)
            .status()
            .context("running npm ci in book/tests (the browser test needs Node.js and npm)")?;
        if !status.success() {
            bail!("npm ci in book/tests failed");
        }
    }
    let status = Command::new("node")
        .arg("browser.mjs")
        .arg(workbook.root.join("book/build"))
        .current_dir(&tests)
        .status()
        .context("running node (the browser test needs Node.js)")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Builds every edition of the book quietly (for verify); true when all built.
pub fn builds_every_edition(workbook: &Workbook) -> Result<bool> {
    if !crate::tools::builds(workbook)? {
        return Ok(false);
    }
    let mdbook = ensure_mdbook(workbook)?;
    for language in book_i18n::languages(workbook)? {
        if !book_i18n::build_edition(workbook, &mdbook, &language.code, true)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn open_in_browser(index: &Path) {
    if crate::sandbox::opener(index).status().is_err() {
        println!("Open {} in your browser.", index.display());
    }
}
