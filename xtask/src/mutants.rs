//! Mutants: known-wrong solutions, written as edits to the reference solution
//! (`xtask/mutants/<chapter>/<bug>.toml`). Each must be rejected by the check it names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::manifest_toml::{CrateManifest, write_if_changed};
use crate::workbook::{Chapter, Workbook};

/// One mutant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Mutant {
    #[serde(skip)]
    pub name: String,
    /// The bug, in one sentence, shown when the mutant survives.
    pub description: String,
    /// The id of the check that must fail on this mutant.
    pub rejected_by: String,
    #[serde(rename = "edit")]
    pub edits: Vec<Edit>,
}

/// One textual change to a file of the solution.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    #[serde(default = "default_file")]
    pub file: String,
    pub find: String,
    pub replace: String,
}

fn default_file() -> String {
    "src/lib.rs".to_owned()
}

/// Every mutant of a chapter, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<Mutant>> {
    let mut mutants = Vec::new();
    if !dir.is_dir() {
        return Ok(mutants);
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            mutants.push(load(&path)?);
        }
    }
    mutants.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(mutants)
}

/// One mutant file.
pub fn load(path: &Path) -> Result<Mutant> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut mutant: Mutant =
        toml::from_str(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    mutant.name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default()
        .to_owned();
    if mutant.edits.is_empty() {
        bail!("{}: a mutant needs at least one [[edit]]", path.display());
    }
    Ok(mutant)
}

/// Writes the mutant as a crate under `target/workbook/mutants/<chapter>/` and returns its folder.
/// Every `find` must occur exactly once in its file, so a mutant cannot silently go stale.
pub fn materialize(workbook: &Workbook, chapter: &Chapter, mutant: &Mutant) -> Result<PathBuf> {
    let target = workbook.work_dir().join("mutants").join(&chapter.id);
    write_solution_copy(workbook, chapter, &target, mutant)?;
    Ok(target)
}

/// An unchanged, stand-alone copy of the solution under `target/workbook/<purpose>/<chapter>/`.
pub fn copy_of_solution(workbook: &Workbook, chapter: &Chapter, purpose: &str) -> Result<PathBuf> {
    let target = workbook.work_dir().join(purpose).join(&chapter.id);
    let unchanged = Mutant {
        name: "copy".to_owned(),
        description: String::new(),
        rejected_by: String::new(),
        edits: Vec::new(),
    };
    write_solution_copy(workbook, chapter, &target, &unchanged)?;
    Ok(target)
}

fn write_solution_copy(
    workbook: &Workbook,
    chapter: &Chapter,
    target: &Path,
    mutant: &Mutant,
) -> Result<()> {
    let solution = workbook.solution_dir(chapter);
    let mut files = crate_files(&solution)?;
    for edit in &mutant.edits {
        let Some((_, text)) = files
            .iter_mut()
            .find(|(relative, _)| *relative == edit.file)
        else {
            bail!(
                "mutant {}: the solution has no file {}",
                mutant.name,
                edit.file
            );
        };
        let found = text.matches(edit.find.as_str()).count();
        if found != 1 {
            bail!(
                "mutant {} ({}): `find` must occur exactly once in {}, but occurs {found} times:\n{}",
                mutant.name,
                chapter.id,
                edit.file,
                edit.find
            );
        }
        *text = text.replacen(edit.find.as_str(), &edit.replace, 1);
    }
    for (relative, text) in &files {
        write_if_changed(&target.join(relative), text)?;
    }
    write_if_changed(
        &target.join("Cargo.toml"),
        &standalone_manifest(&solution, &chapter.crate_name())?,
    )?;
    Ok(())
}

/// The solution's source files (src/, tests/, examples/), as (relative path, text).
fn crate_files(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for folder in ["src", "tests", "examples"] {
        collect(dir, &dir.join(folder), &mut files)?;
    }
    Ok(files)
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, files)?;
        } else {
            let relative = path
                .strip_prefix(root)
                .expect("below root")
                .display()
                .to_string();
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push((relative, text));
        }
    }
    Ok(())
}

/// The solution's manifest made stand-alone, under a mutant's package name.
fn standalone_manifest(solution: &Path, crate_name: &str) -> Result<String> {
    let manifest = CrateManifest::read(solution)?;
    let mut table = Table::new();
    table.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            (
                "name".to_owned(),
                Value::String(format!("{crate_name}_mutant")),
            ),
            ("version".to_owned(), Value::String("0.0.0".to_owned())),
            ("edition".to_owned(), Value::String("2024".to_owned())),
            ("publish".to_owned(), Value::Boolean(false)),
        ])),
    );
    for section in ["dependencies", "dev-dependencies"] {
        table.insert(
            section.to_owned(),
            Value::Table(manifest.resolved_dependencies(section)?),
        );
    }
    Ok(format!(
        "# Generated by `cargo xtask verify` from the solution; every run rewrites it.\n{}",
        toml::to_string(&table).context("writing a mutant's manifest")?
    ))
}
