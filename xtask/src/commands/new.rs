//! `cargo xtask new <chapter>`: scaffold a chapter the manifest lists, in every folder it needs,
//! ready for `cargo xtask verify <chapter>` to guide the rest.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::util::write_if_changed;

/// Scaffold a chapter (authors): exercise, solution, rubric, a first check, a mutant, a page.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The chapter's id, as listed in xtask/workbook.toml (e.g. ch09).
    pub chapter: String,
}

pub fn run(args: NewArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.chapter(&args.chapter)?.clone();
    if workbook.exercise_dir(&chapter).exists() {
        bail!(
            "{} already exists",
            display_path(&workbook, &workbook.exercise_dir(&chapter))
        );
    }
    let files = scaffold(&workbook, &chapter);
    if let Some((path, _)) = files.iter().find(|(path, _)| path.exists()) {
        bail!(
            "{} already exists; nothing was written",
            display_path(&workbook, path)
        );
    }
    for (path, text) in &files {
        write_if_changed(path, text)?;
        println!("wrote {}", display_path(&workbook, path));
    }
    println!(
        "\nNext: write the page, the solution and the checks (xtask/AUTHORING.md), run \
         `cargo xtask verify {id}` until it passes, then set `ready = true` for {id} in \
         xtask/workbook.toml and replace its SUMMARY.md entry with the line\n    - [{title}]({stem}.md)\n\
         Figures: a module xtask/figures/src/{id}.rs, a line in CHAPTERS of \
         xtask/figures/src/main.rs, and the solution as a dependency in xtask/figures/Cargo.toml.",
        id = chapter.id,
        title = chapter.title,
        stem = chapter.stem(),
    );
    Ok(ExitCode::SUCCESS)
}

/// Every file of a new chapter, as (path, contents).
fn scaffold(workbook: &Workbook, chapter: &Chapter) -> Vec<(std::path::PathBuf, String)> {
    let Chapter { id, title, .. } = chapter;
    let number = chapter.number();
    let stem = chapter.stem();
    let krate = chapter.crate_name();
    let manifest = |name: &str| {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition.workspace = true\npublish.workspace = true\n\n\
             [dependencies]\ntokio.workspace = true\nrand.workspace = true\n\n[lints]\nworkspace = true\n"
        )
    };
    let exercise = workbook.exercise_dir(chapter);
    let solution = workbook.solution_dir(chapter);
    let checks = workbook.checks_dir(chapter);
    vec![
        (exercise.join("Cargo.toml"), manifest(&krate)),
        (
            exercise.join("src/lib.rs"),
            format!(
                "//! # Chapter {number} — {title}\n//!\n//! Book: `book/src/{stem}.md`. Check your work: `cargo xtask check {id}`.\n\
                 //! Stuck? `cargo xtask hint {id}`.\n//!\n//! ## Your task\n//!\n//! 1. [`answer`]: return 42.\n\n\
                 /// The answer.\npub fn answer() -> u32 {{\n    // TODO: return the answer.\n    todo!(\"answer()\")\n}}\n"
            ),
        ),
        (solution.join("Cargo.toml"), manifest(&chapter.solution_crate_name())),
        (
            solution.join("src/lib.rs"),
            format!("//! Chapter {number} — {title}: the reference solution.\n\n// ANCHOR: answer\n/// The answer.\npub fn answer() -> u32 {{\n    42\n}}\n// ANCHOR_END: answer\n"),
        ),
        (
            checks.join("chapter.toml"),
            format!(
                "# The rubric of {id}. Each check id is `<file stem>.<test fn>` of a file beside this one.\n\
                 given = []\nhints = [\"The answer is a number.\"]\n\n[[check]]\nid = \"answer.is_42\"\npoints = 1\n\
                 title = \"the answer is 42\"\nsection = \"{number}.2\"\n"
            ),
        ),
        (
            checks.join("answer.rs"),
            "//! Checks of `answer`.\n\n#[test]\nfn is_42() {\n    let answer = exercise::answer();\n    \
             assert_eq!(answer, 42, \"the answer must be 42; yours was {answer}\");\n}\n"
                .to_owned(),
        ),
        (
            workbook.mutants_dir(chapter).join("off_by_one.toml"),
            "description = \"Returns 41.\"\nrejected-by = \"answer.is_42\"\n\n[[edit]]\nfind = \"    42\\n\"\nreplace = \"    41\\n\"\n"
                .to_owned(),
        ),
        (
            workbook.page(chapter),
            format!(
                "# {number}. {title}\n\n## {number}.1 Goals\n\n## {number}.2 The idea\n\n\
                 <!-- A worked example on a neighbouring problem, included from code that builds \
                 (a given file, an examples/ program); never the code the exercise asks for. -->\n\n\
                 ## {number}.3 The exercise\n\nRun `cargo xtask check {id}`.\n\n## {number}.4 Pitfalls\n\n\
                 ## {number}.5 Checklist\n\n## {number}.6 References\n"
            ),
        ),
    ]
}
