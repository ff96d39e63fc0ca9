//! `cargo xtask book`: build (or serve) the mdBook. The first run installs mdBook into
//! `target/tools/`, so a fresh machine needs no manual step; `check` never waits for it.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::Args;

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
}

pub fn run(args: BookArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
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
    let index = book.join("build/index.html");
    println!("The book is at {}", index.display());
    if args.open {
        open_in_browser(&index);
    }
    if args.test {
        return browser_test(&workbook);
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

fn open_in_browser(index: &Path) {
    if crate::sandbox::opener(index).status().is_err() {
        println!("Open {} in your browser.", index.display());
    }
}
