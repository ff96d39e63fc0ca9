//! Stand-alone copies of a chapter's crate under the work folder: the solution with a mutant's
//! edits applied (what `verify` and learner suites grade), or unchanged (a seed for other lanes).
//! A copy lives outside the workspace, so its manifest spells out what the workspace gave it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

use crate::build::manifest_toml::CrateManifest;
use crate::curriculum::mutants::{Mutant, apply, load, load_all};
use crate::curriculum::workbook::{Chapter, Workbook, read_text_lf};
use crate::util::write_if_changed;

/// The mutant `name` of `chapter`, or an error that lists the ones it has.
pub fn find(workbook: &Workbook, chapter: &Chapter, name: &str) -> Result<Mutant> {
    let dir = workbook.mutants_dir(chapter);
    let file = dir.join(format!("{}.toml", name.trim_end_matches(".toml")));
    if !file.is_file() {
        let known: Vec<String> = load_all(&dir)?.into_iter().map(|m| m.name).collect();
        bail!(
            "{} has no mutant `{name}`; it has: {}",
            chapter.id,
            known.join(", ")
        );
    }
    load(&file)
}

/// Writes the mutant as a crate under `target/workbook/…/mutants/<chapter>/` and returns its
/// folder. Every `find` must occur exactly once in its file, so a mutant cannot silently go stale.
pub fn materialize(workbook: &Workbook, chapter: &Chapter, mutant: &Mutant) -> Result<PathBuf> {
    let target = workbook.work_dir().join("mutants").join(&chapter.id);
    write_crate_copy(
        &workbook.solution_dir(chapter),
        &target,
        &CrateCopy {
            package: &format!("{}_mutant", chapter.crate_name()),
            mutant: Some(mutant),
            ..CrateCopy::default()
        },
    )?;
    Ok(target)
}

/// An unchanged, stand-alone copy of the solution under `target/workbook/…/<purpose>/<chapter>/`.
pub fn copy_of_solution(workbook: &Workbook, chapter: &Chapter, purpose: &str) -> Result<PathBuf> {
    let target = workbook.work_dir().join(purpose).join(&chapter.id);
    write_crate_copy(
        &workbook.solution_dir(chapter),
        &target,
        &CrateCopy {
            package: &format!("{}_{purpose}", chapter.crate_name()),
            ..CrateCopy::default()
        },
    )?;
    Ok(target)
}

/// The folder to grade for a crate given by path. A crate that no workspace encloses but whose
/// manifest inherits from one (an exercise copied out with `cp -r`) is graded as a stand-alone
/// copy under `target/workbook/…/outside/<chapter>/`, each `workspace = true` read from the
/// workbook's own manifest; any other crate is graded where it is.
pub fn gradable_copy(workbook: &Workbook, chapter: &Chapter, dir: &Path) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let enclosed = crate::build::manifest_toml::enclosing_workspace(dir).is_ok();
    if enclosed || !text.contains("workspace") {
        return Ok(dir.to_path_buf());
    }
    let copy = workbook.work_dir().join("outside").join(&chapter.id);
    // Its manifest is read as if it sat in its exercise's folder: each `workspace = true` is the
    // workbook's, and a relative path means what it means there.
    let manifest = CrateManifest {
        dir: workbook.exercise_dir(chapter),
        ..CrateManifest::read(dir)?
    };
    write_copy(
        dir,
        &manifest,
        &workbook.root,
        &copy,
        &CrateCopy {
            package: &format!("{}_outside", chapter.crate_name()),
            ..CrateCopy::default()
        },
    )?;
    Ok(copy)
}

/// How a stand-alone copy of a crate differs from its source.
#[derive(Debug, Default)]
pub struct CrateCopy<'a> {
    /// The copy's package name (cargo tells builds apart by it).
    pub package: &'a str,
    /// The library's name; by default the source's package name, so code that `use`s it compiles.
    pub library: Option<&'a str>,
    /// Files (relative path, text) put in place of the source's, or added.
    pub replaced: &'a [(String, String)],
    /// Edits applied after that.
    pub mutant: Option<&'a Mutant>,
    /// A member of a workspace the caller writes (which holds the profiles), rather than a
    /// workspace of its own.
    pub workspace_member: bool,
}

/// Writes a stand-alone copy of the crate at `source` into `target`, as `copy` describes.
/// Files are rewritten only when they change, so an unchanged copy costs no rebuild.
pub fn write_crate_copy(source: &Path, target: &Path, copy: &CrateCopy) -> Result<()> {
    let root = crate::build::manifest_toml::enclosing_workspace(source)?;
    write_copy(source, &CrateManifest::read(source)?, &root, target, copy)
}

/// Writes into `target` the files of the crate at `source`, as `copy` describes, and then its
/// `manifest` made stand-alone with the settings of the workspace at `root`. A file no longer in
/// the source is removed from the copy.
fn write_copy(
    source: &Path,
    manifest: &CrateManifest,
    root: &Path,
    target: &Path,
    copy: &CrateCopy,
) -> Result<()> {
    let mut files = crate_files(source)?;
    for (relative, text) in copy.replaced {
        match files.iter_mut().find(|(file, _)| file == relative) {
            Some((_, old)) => old.clone_from(text),
            None => files.push((relative.clone(), text.clone())),
        }
    }
    if let Some(mutant) = copy.mutant {
        apply(mutant, &mut files)?;
    }
    for (relative, text) in &files {
        write_if_changed(&target.join(relative), text)?;
    }
    // A file the source no longer has (a visible test deleted, say) must not be graded.
    for (relative, path) in crate_paths(target)? {
        if !files.iter().any(|(file, _)| *file == relative) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    write_if_changed(
        &target.join("Cargo.toml"),
        &standalone_manifest(source, manifest, root, copy)?,
    )?;
    Ok(())
}

/// The solution's source files (src/, tests/, examples/), as (relative path, text).
pub fn crate_files(dir: &Path) -> Result<Vec<(String, String)>> {
    crate_paths(dir)?
        .into_iter()
        .map(|(relative, path)| {
            // Unix line endings whatever the checkout, as mutant `find` strings are written.
            let text = read_text_lf(&path)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .with_context(|| format!("reading {} as text", path.display()))?;
            Ok((relative, text))
        })
        .collect()
}

/// The source files of the crate at `dir` (src/, tests/, examples/), as (relative path, path).
fn crate_paths(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut paths = Vec::new();
    for folder in ["src", "tests", "examples"] {
        for path in crate::util::files_under(&dir.join(folder), &[])? {
            // Written with `/` whatever the platform, as mutant edits name their files.
            let relative = crate::util::slash_path(path.strip_prefix(dir).expect("below dir"));
            paths.push((relative, path));
        }
    }
    Ok(paths)
}

/// The manifest of the crate at `source` made stand-alone, under another package name, with the
/// profiles of the workspace at `root`.
fn standalone_manifest(
    source: &Path,
    manifest: &CrateManifest,
    root: &Path,
    copy: &CrateCopy,
) -> Result<String> {
    let (package, library) = (copy.package, copy.library);
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
    let library = match library {
        Some(name) => name.to_owned(),
        None => manifest.package_name()?.replace('-', "_"),
    };
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
    if !copy.workspace_member {
        table.insert("workspace".to_owned(), Value::Table(Table::new()));
        if let Some(profiles) =
            crate::build::manifest_toml::workspace_profiles_for(root, &[package])?
        {
            table.insert("profile".to_owned(), profiles);
        }
    }
    Ok(format!(
        "# Generated by the grader from {}; every run rewrites it.\n{}",
        source.display(),
        toml::to_string(&table).context("writing a crate copy's manifest")?
    ))
}

/// Writes, at `root`, the manifest of a workspace of copies of the crate at `source` (each
/// written with `workspace_member`): `members` are their folders under `root` and their package
/// names. The workspace holds the profiles, as a stand-alone copy does, with the copies built
/// without debug info.
pub fn write_workspace(source: &Path, root: &Path, members: &[(&str, &str)]) -> Result<()> {
    let folders = members.iter().map(|(folder, _)| Value::from(*folder));
    let workspace = Table::from_iter([
        ("members".to_owned(), Value::Array(folders.collect())),
        ("resolver".to_owned(), Value::from("3")),
    ]);
    let mut manifest = Table::from_iter([("workspace".to_owned(), Value::Table(workspace))]);
    let packages: Vec<&str> = members.iter().map(|(_, package)| *package).collect();
    // The copies' suites are run only to see whether they pass: no debug info needed.
    let profiles = crate::build::manifest_toml::without_debug_info(
        source_profiles(source, &packages)?,
        &packages,
    );
    manifest.insert("profile".to_owned(), profiles);
    write_if_changed(
        &root.join("Cargo.toml"),
        &format!(
            "# Generated by the grader: copies of {}, built side by side.\n{}",
            source.display(),
            toml::to_string(&manifest).context("writing a workspace manifest")?
        ),
    )?;
    Ok(())
}

/// The profiles of the workspace around `source`, for a build of `packages`.
fn source_profiles(source: &Path, packages: &[&str]) -> Result<Option<Value>> {
    let root = crate::build::manifest_toml::enclosing_workspace(source)?;
    crate::build::manifest_toml::workspace_profiles_for(&root, packages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curriculum::mutants::Edit;

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
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn mutant(find: &str) -> Mutant {
        Mutant {
            name: "m".to_owned(),
            description: String::new(),
            rejected_by: vec!["x.y".to_owned()],
            points: 1,
            section: None,
            edits: vec![Edit {
                file: "src/lib.rs".to_owned(),
                find: find.to_owned(),
                replace: "2".to_owned(),
            }],
        }
    }

    #[test]
    fn a_copy_applies_each_edit_exactly_once_or_refuses() {
        let dir = std::env::temp_dir().join(format!("mutant-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("source/src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"source\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("source/Cargo.toml"),
            "[package]\nname = \"source_solution\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("source/src/lib.rs"),
            "pub const A: u8 = 1;\npub const B: u8 = 7;\n",
        )
        .unwrap();
        let copy = |find: &str, library: Option<&str>| {
            write_crate_copy(
                &dir.join("source"),
                &dir.join("copy"),
                &CrateCopy {
                    package: "copy_pkg",
                    library,
                    mutant: Some(&mutant(find)),
                    ..CrateCopy::default()
                },
            )
        };
        copy("7", Some("source")).unwrap();
        let lib = std::fs::read_to_string(dir.join("copy/src/lib.rs")).unwrap();
        assert_eq!(lib, "pub const A: u8 = 1;\npub const B: u8 = 2;\n");
        let manifest = std::fs::read_to_string(dir.join("copy/Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"copy_pkg\""), "{manifest}");
        assert!(
            manifest.contains("name = \"source\""),
            "the library's name: {manifest}"
        );
        let twice = copy("u8 =", None).unwrap_err();
        assert!(format!("{twice:#}").contains("occurs 2 times"), "{twice:#}");
        let stale = copy("no such text", None).unwrap_err();
        assert!(format!("{stale:#}").contains("occurs 0 times"), "{stale:#}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
