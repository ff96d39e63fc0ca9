//! Mutants: known-wrong solutions, written as edits to the reference solution
//! (`xtask/mutants/<chapter>/<bug>.toml`). Each must be rejected by the check it names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::manifest_toml::{CrateManifest, write_if_changed};
use crate::workbook::{Chapter, Workbook, read_text_lf};

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
    /// In a learner-tests chapter: the points for a suite that kills this mutant.
    #[serde(default = "one_point")]
    pub points: u32,
    /// In a learner-tests chapter: the book section that helps to write the killing test.
    #[serde(default)]
    pub section: Option<String>,
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

fn one_point() -> u32 {
    1
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

impl Mutant {
    /// No mutation at all: the code as it is.
    pub fn unchanged() -> Self {
        Self {
            name: "unchanged".to_owned(),
            description: String::new(),
            rejected_by: String::new(),
            points: 0,
            section: None,
            edits: Vec::new(),
        }
    }
}

/// An unchanged, stand-alone copy of the solution under `target/workbook/<purpose>/<chapter>/`.
pub fn copy_of_solution(workbook: &Workbook, chapter: &Chapter, purpose: &str) -> Result<PathBuf> {
    let target = workbook.work_dir().join(purpose).join(&chapter.id);
    let package = format!("{}_{purpose}", chapter.crate_name());
    write_crate_copy(
        &workbook.solution_dir(chapter),
        &target,
        &package,
        &[],
        &Mutant::unchanged(),
    )?;
    Ok(target)
}

fn write_solution_copy(
    workbook: &Workbook,
    chapter: &Chapter,
    target: &Path,
    mutant: &Mutant,
) -> Result<()> {
    let package = format!("{}_mutant", chapter.crate_name());
    write_crate_copy(
        &workbook.solution_dir(chapter),
        target,
        &package,
        &[],
        mutant,
    )
}

/// Writes a stand-alone copy of the crate at `source` into `target` under the name `package`:
/// `replaced` files (relative path, text) are put in first, then `mutant`'s edits are applied.
/// Files are rewritten only when they change, so an unchanged copy costs no rebuild.
pub fn write_crate_copy(
    source: &Path,
    target: &Path,
    package: &str,
    replaced: &[(String, String)],
    mutant: &Mutant,
) -> Result<()> {
    let mut files = crate_files(source)?;
    for (relative, text) in replaced {
        match files.iter_mut().find(|(file, _)| file == relative) {
            Some((_, old)) => old.clone_from(text),
            None => files.push((relative.clone(), text.clone())),
        }
    }
    for edit in &mutant.edits {
        let Some((_, text)) = files
            .iter_mut()
            .find(|(relative, _)| *relative == edit.file)
        else {
            bail!(
                "mutant {}: the crate has no file {}",
                mutant.name,
                edit.file
            );
        };
        let found = text.matches(edit.find.as_str()).count();
        if found != 1 {
            bail!(
                "mutant {}: `find` must occur exactly once in {}, but occurs {found} times:\n{}",
                mutant.name,
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
        &standalone_manifest(source, package)?,
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
            // Written with `/` whatever the platform, as mutant edits name their files.
            let relative = path
                .strip_prefix(root)
                .expect("below root")
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            // Unix line endings whatever the checkout, as mutant `find` strings are written.
            let text = read_text_lf(&path)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .with_context(|| format!("reading {} as text", path.display()))?;
            files.push((relative, text));
        }
    }
    Ok(())
}

/// The solution's manifest made stand-alone, under a mutant's package name.
fn standalone_manifest(source: &Path, package: &str) -> Result<String> {
    let manifest = CrateManifest::read(source)?;
    let mut table = Table::new();
    table.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            ("name".to_owned(), Value::String(package.to_owned())),
            ("version".to_owned(), Value::String("0.0.0".to_owned())),
            ("edition".to_owned(), Value::String("2024".to_owned())),
            ("publish".to_owned(), Value::Boolean(false)),
        ])),
    );
    // The library keeps the source's name, so code and tests that `use` it still compile.
    let library = manifest.package_name()?.replace('-', "_");
    table.insert(
        "lib".to_owned(),
        Value::Table(Table::from_iter([(
            "name".to_owned(),
            Value::String(library),
        )])),
    );
    for section in ["dependencies", "dev-dependencies"] {
        table.insert(
            section.to_owned(),
            Value::Table(manifest.resolved_dependencies(section)?),
        );
    }
    // Its own workspace, built like the real one, so it shares the compiled dependencies.
    table.insert("workspace".to_owned(), Value::Table(Table::new()));
    let root = crate::manifest_toml::enclosing_workspace(source)?;
    if let Some(profiles) = crate::manifest_toml::workspace_profiles(&root)? {
        table.insert("profile".to_owned(), profiles);
    }
    Ok(format!(
        "# Generated by the grader from {}; every run rewrites it.\n{}",
        source.display(),
        toml::to_string(&table).context("writing a crate copy's manifest")?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_checkout_is_read_with_unix_paths_and_line_endings() {
        let dir = std::env::temp_dir().join(format!("workbook-crate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src").join("retry")).unwrap();
        std::fs::write(dir.join("src").join("lib.rs"), "mod retry;\r\n").unwrap();
        std::fs::write(
            dir.join("src").join("retry").join("policy.rs"),
            "pub fn attempts() -> u32 {\r\n    3\r\n}\r\n",
        )
        .unwrap();
        let mut files = crate_files(&dir).unwrap();
        files.sort();
        assert_eq!(
            files,
            [
                ("src/lib.rs".to_owned(), "mod retry;\n".to_owned()),
                (
                    "src/retry/policy.rs".to_owned(),
                    "pub fn attempts() -> u32 {\n    3\n}\n".to_owned()
                ),
            ]
        );
    }
}
