//! `cargo xtask reset <chapter> [--file FILE]`: put an exercise, or some of its files, back as
//! shipped, after backing up what is there. What was shipped comes from the record in
//! `xtask/shipped/`, never from the learner's last commit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::curriculum::shipped::{self, Shipped};
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::lang::words::{Key, tf};

/// Restore an exercise, or some of its files, to the shipped state (your files are backed up
/// first).
#[derive(Debug, Args)]
pub struct ResetArgs {
    /// The chapter, e.g. ch08.
    pub chapter: String,
    /// Restore only this file of the exercise, e.g. src/stubs.rs (repeat for more); the rest of
    /// the exercise stays as it is.
    #[arg(long, value_name = "FILE")]
    pub file: Vec<String>,
}

pub fn run(args: ResetArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapter = workbook.ready_chapter(&args.chapter)?;
    let shipped = Shipped::load(&workbook, chapter)?;
    if args.file.is_empty() {
        reset_exercise(&workbook, chapter, &shipped)
    } else {
        reset_files(&workbook, chapter, &shipped, &args.file)
    }
}

/// Names each exercise manifest that is not TOML (`except` that of the chapter a command is
/// about, which says so itself), and how to restore it: while one is broken, cargo cannot load
/// the workspace, and the grader is what still says which file it is.
pub fn warn_of_broken_manifests(workbook: &Workbook, except: Option<&Chapter>) {
    let others = workbook
        .ready_chapters()
        .filter(|chapter| except.is_none_or(|except| except.id != chapter.id));
    for broken in others.filter_map(|chapter| broken_manifest(workbook, chapter)) {
        eprintln!("{}", tf(Key::CargoCannotLoad, &[&broken]));
    }
}

/// What is wrong with `chapter`'s exercise manifest when it is not TOML, and how to restore it.
pub fn broken_manifest(workbook: &Workbook, chapter: &Chapter) -> Option<String> {
    let exercise = workbook.exercise_dir(chapter);
    // The shipped manifest is sound, and comparing is cheaper than parsing: only a changed
    // manifest is read as TOML.
    let shipped = Shipped::load(workbook, chapter);
    if shipped.is_ok_and(|shipped| shipped.is_as_shipped(&exercise, "Cargo.toml")) {
        return None;
    }
    let manifest = exercise.join("Cargo.toml");
    let error = crate::build::manifest_toml::syntax_error(&manifest)?;
    Some(tf(
        Key::ManifestBroken,
        &[
            &display_path(workbook, &manifest),
            &error,
            &restore_command(chapter, "Cargo.toml"),
        ],
    ))
}

/// The command that restores `file` of `chapter`'s exercise as shipped.
pub fn restore_command(chapter: &Chapter, file: &str) -> String {
    format!("cargo xtask reset {} --file {file}", chapter.id)
}

/// Backs up the whole exercise and restores it.
fn reset_exercise(workbook: &Workbook, chapter: &Chapter, shipped: &Shipped) -> Result<ExitCode> {
    let exercise = workbook.exercise_dir(chapter);
    let backup = new_backup_dir(workbook, chapter);
    crate::util::copy_tree(&exercise, &backup, &["target"])?;
    println!("{}", tf(Key::BackedUp, &[&display_path(workbook, &backup)]));
    let restored = shipped::restore(&workbook.root, &exercise, shipped)?;
    let relative = display_path(workbook, &exercise);
    for file in &restored.rewritten {
        println!("{}", tf(Key::Restored, &[&format!("{relative}/{file}")]));
    }
    for file in &restored.removed {
        println!("{}", tf(Key::Removed, &[&format!("{relative}/{file}")]));
    }
    let record = display_path(workbook, &Shipped::path(workbook, chapter));
    println!("{}", tf(Key::ResetTo, &[&relative, &record]));
    println!(
        "{}",
        tf(
            Key::GetWorkBack,
            &[&copy_command(workbook, &backup, &exercise, true)]
        )
    );
    Ok(ExitCode::SUCCESS)
}

/// Backs up and restores the exercise's `files` alone.
fn reset_files(
    workbook: &Workbook,
    chapter: &Chapter,
    shipped: &Shipped,
    files: &[String],
) -> Result<ExitCode> {
    let exercise = workbook.exercise_dir(chapter);
    let relative = display_path(workbook, &exercise);
    let mut files: Vec<String> = files
        .iter()
        .map(|file| exercise_file(workbook, chapter, shipped, file))
        .collect::<Result<_>>()?;
    files.sort();
    files.dedup();
    // Read every shipped text first, so a missing one changes nothing.
    let mut restores = Vec::new();
    for file in files {
        if shipped.is_as_shipped(&exercise, &file) {
            println!(
                "{}",
                tf(Key::AlreadyAsShipped, &[&format!("{relative}/{file}")])
            );
        } else {
            let bytes = shipped::git_blob(&workbook.root, &shipped.files[&file], &file)?;
            restores.push((file, bytes));
        }
    }
    let mut backup = None;
    for (file, bytes) in restores {
        let path = exercise.join(&file);
        let saved = if path.is_file() {
            let folder = backup.get_or_insert_with(|| new_backup_dir(workbook, chapter));
            let saved = folder.join(&file);
            copy_file(&path, &saved)?;
            Some(saved)
        } else {
            None
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        match saved {
            Some(saved) => println!(
                "{}",
                tf(
                    Key::RestoredBackedUp,
                    &[
                        &format!("{relative}/{file}"),
                        &display_path(workbook, &saved),
                        &copy_command(workbook, &saved, &path, false),
                    ]
                )
            ),
            None => println!(
                "{}",
                tf(Key::RestoredWasMissing, &[&format!("{relative}/{file}")])
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `file` as the record names it (relative to the exercise, `/` between folders), from what
/// the learner typed: relative to the exercise, to the workbook, or to the current folder.
fn exercise_file(
    workbook: &Workbook,
    chapter: &Chapter,
    shipped: &Shipped,
    typed: &str,
) -> Result<String> {
    let exercise = workbook.exercise_dir(chapter);
    let cwd = std::env::current_dir().unwrap_or_else(|_| workbook.root.clone());
    let candidates = [
        PathBuf::from(typed),
        workbook.root.join(typed),
        cwd.join(typed),
    ];
    let inside = candidates.iter().find_map(|path| {
        let relative = path.strip_prefix(&exercise).ok()?;
        Some(relative.to_string_lossy().replace('\\', "/"))
    });
    let file = inside.unwrap_or_else(|| typed.replace('\\', "/"));
    let file = file.trim_start_matches("./").to_owned();
    if !shipped.files.contains_key(&file) {
        let known: Vec<&str> = shipped.files.keys().map(String::as_str).collect();
        bail!(
            "{}",
            tf(Key::NotShipped, &[&typed, &chapter.id, &known.join(", ")])
        );
    }
    Ok(file)
}

/// A folder for this reset's backup that no earlier backup uses:
/// `.workbook/backups/<stem>-<seconds since 1970>`, with a count after it when that is taken.
fn new_backup_dir(workbook: &Workbook, chapter: &Chapter) -> PathBuf {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let backups = workbook.root.join(".workbook/backups");
    let base = format!("{}-{stamp}", chapter.stem());
    std::iter::once(base.clone())
        .chain((2..).map(|count| format!("{base}-{count}")))
        .map(|name| backups.join(name))
        .find(|dir| !dir.exists())
        .expect("some count is free")
}

/// The shell command that copies `from` (a backup) back to `to`: a folder's contents with
/// `folder`, else one file. `xcopy` and `copy` work in both PowerShell and the Command Prompt.
fn copy_command(workbook: &Workbook, from: &Path, to: &Path, folder: bool) -> String {
    let (from, to) = (shell_path(workbook, from), shell_path(workbook, to));
    match (cfg!(windows), folder) {
        (true, true) => format!("xcopy /E /Y /I {from} {to}"),
        (true, false) => format!("copy {from} {to}"),
        (false, true) => format!("cp -R {from}/. {to}/"),
        (false, false) => format!("cp {from} {to}"),
    }
}

/// `path` as a command typed in the current folder takes it: relative from the workbook's root,
/// absolute elsewhere, and quoted when it holds a space.
fn shell_path(workbook: &Workbook, path: &Path) -> String {
    let at_root = std::env::current_dir()
        .ok()
        .and_then(|cwd| crate::curriculum::workbook::canonical(&cwd).ok())
        .is_some_and(|cwd| cwd == workbook.root);
    let shown = if at_root {
        display_path(workbook, path)
    } else {
        path.display().to_string()
    };
    if shown.contains(' ') {
        format!("\"{shown}\"")
    } else {
        shown
    }
}

/// Copies the file `from` to `to`, making `to`'s folder first.
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    Ok(())
}
