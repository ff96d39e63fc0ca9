//! The one workspace the cross-platform lint runs over: the workbook's workspace, mirrored under
//! `target/cross/`, with every chapter's check harness as a member beside it.
//!
//! One workspace instead of two saves work twice over. A harness depends on its chapter's
//! solution; in a workspace of their own the harnesses would check every solution again (cargo
//! keeps a crate's build apart for each workspace it is built in). And a member's manifest can
//! be adjusted here without touching the learner's: a library with no tests of its own is not
//! checked a second time as a test (which would check the same code again, on five targets).
//!
//! Each mirrored member is a folder holding its manifest, with every other entry of the real
//! member's folder linked: cargo finds the same sources, which rustc reads where they are.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

use crate::build::harness;
use crate::build::manifest_toml::CrateManifest;
use crate::curriculum::shown_answers::is_ident;
use crate::curriculum::workbook::Workbook;
use crate::grade::grader::{Grader, Target};
use crate::sandbox;
use crate::util::write_if_changed;
use crate::util::{NOT_SOURCE_FOLDERS, files_under};

/// Writes the mirror into `target_dir/lint` and returns its root manifest.
pub fn write(workbook: &Workbook, target_dir: &Path) -> Result<PathBuf> {
    let mirror = target_dir.join("lint");
    let workbook_root = crate::curriculum::workbook::canonical(&workbook.root)
        .with_context(|| format!("finding {}", workbook.root.display()))?;
    let root = CrateManifest::read(&workbook_root)?;
    let mut members = Vec::new();
    let member_dirs = workspace_members(&workbook_root, &root.table)?;
    for member in &member_dirs {
        let relative = member.strip_prefix(&workbook_root)?;
        let nested: Vec<&Path> = member_dirs
            .iter()
            .filter(|other| other.parent() == Some(member))
            .map(PathBuf::as_path)
            .collect();
        mirror_member(
            &workbook_root,
            member,
            &mirror.join(relative),
            &mirror,
            &nested,
        )?;
        members.push(portable(relative)?);
    }
    for harness in write_harnesses(workbook, &workbook_root, &mirror)? {
        members.push(harness);
    }

    let mut workspace = root
        .table
        .get("workspace")
        .and_then(Value::as_table)
        .cloned()
        .context("the workbook's Cargo.toml has a [workspace]")?;
    workspace.insert(
        "members".to_owned(),
        Value::Array(members.into_iter().map(Value::String).collect()),
    );
    workspace.remove("default-members");
    let mut manifest = Table::from_iter([("workspace".to_owned(), Value::Table(workspace))]);
    if let Some(profiles) = root.table.get("profile") {
        manifest.insert("profile".to_owned(), profiles.clone());
    }
    write_if_changed(&mirror.join("Cargo.toml"), &manifest.to_string())?;
    let lock = std::fs::read_to_string(workbook.root.join("Cargo.lock")).unwrap_or_default();
    write_if_changed(&mirror.join("Cargo.lock"), &lock)?;
    Ok(mirror.join("Cargo.toml"))
}

/// The folders of the workspace's members: each entry of `members`, a folder or a folder's
/// children (`exercises/*`), that holds a manifest.
fn workspace_members(root: &Path, manifest: &Table) -> Result<Vec<PathBuf>> {
    let patterns = manifest
        .get("workspace")
        .and_then(|workspace| workspace.get("members"))
        .and_then(Value::as_array)
        .context("the workbook's Cargo.toml lists its members")?;
    let mut members = Vec::new();
    for pattern in patterns {
        let pattern = pattern.as_str().context("a member is a string")?;
        match pattern.strip_suffix("/*") {
            Some(parent) => {
                let parent = root.join(parent);
                let mut children = Vec::new();
                for entry in std::fs::read_dir(&parent)
                    .with_context(|| format!("listing {}", parent.display()))?
                {
                    children.push(entry?.path());
                }
                children.sort();
                members.extend(
                    children
                        .into_iter()
                        .filter(|dir| dir.join("Cargo.toml").is_file()),
                );
            }
            None if pattern.contains('*') => {
                bail!("a workspace member pattern the cross-platform lint cannot read: {pattern}")
            }
            None => members.push(root.join(pattern)),
        }
    }
    Ok(members)
}

/// Mirrors the member in `real` at `mirrored`: its manifest (paths to other members lead to their
/// mirrors, and a library without tests is not checked as a test), and a link to each of its
/// entries but those that are members themselves (`nested`).
fn mirror_member(
    workbook_root: &Path,
    real: &Path,
    mirrored: &Path,
    mirror: &Path,
    nested: &[&Path],
) -> Result<()> {
    let mut manifest = CrateManifest::read(real)?.table;
    redirect_paths(&mut manifest, real, workbook_root, mirror)?;
    if real.join("src/lib.rs").is_file() && !has_tests(&real.join("src"))? {
        let library = manifest
            .entry("lib")
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(library) = library {
            library.insert("test".to_owned(), Value::Boolean(false));
        }
    }
    write_if_changed(&mirrored.join("Cargo.toml"), &manifest.to_string())?;
    for entry in std::fs::read_dir(real).with_context(|| format!("listing {}", real.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let path = entry.path();
        if name == "Cargo.toml" || name == "target" || nested.contains(&path.as_path()) {
            continue;
        }
        let link = mirrored.join(&name);
        if entry.file_type()?.is_dir() {
            if std::fs::read_link(&link).is_ok_and(|target| target == path) {
                continue;
            }
            if std::fs::symlink_metadata(&link).is_ok() {
                sandbox::remove_folder_link(&link)
                    .with_context(|| format!("removing {}", link.display()))?;
            }
            sandbox::link_folder(&path, &link)
                .with_context(|| format!("linking {}", link.display()))?;
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            // A build script, a README: small files, copied.
            write_if_changed(&link, &text)?;
        }
    }
    Ok(())
}

/// Whether any Rust file under `dir` may hold a test: the word `test` on a line that is not a
/// comment (in `#[test]`, `#[tokio::test]`, `cfg(test)`, `cfg(all(test, …))`). The word in a
/// string or a name only costs a check that was not needed.
fn has_tests(dir: &Path) -> Result<bool> {
    for path in files_under(dir, &NOT_SOURCE_FOLDERS)? {
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut code = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"));
        if code.any(|line| has_word(line, "test")) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Makes every dependency `path` of `manifest` (read from the folder `dir`) that leads into the
/// workbook lead to the same place in the mirror instead: an absolute path to it.
fn redirect_paths(manifest: &mut Table, dir: &Path, root: &Path, mirror: &Path) -> Result<()> {
    for (key, value) in manifest.iter_mut() {
        let Value::Table(table) = value else { continue };
        if key.ends_with("dependencies") {
            for (_, dependency) in table.iter_mut() {
                if let Some(Value::String(path)) = dependency.get_mut("path") {
                    let absolute = dir.join(&*path);
                    let absolute = crate::curriculum::workbook::canonical(&absolute)
                        .with_context(|| format!("finding {}", absolute.display()))?;
                    if let Ok(inside) = absolute.strip_prefix(root) {
                        *path = portable(&mirror.join(inside))?;
                    }
                }
            }
        } else if key == "target" {
            for (_, platform) in table.iter_mut() {
                if let Value::Table(platform) = platform {
                    redirect_paths(platform, dir, root, mirror)?;
                }
            }
        }
    }
    Ok(())
}

/// Every ready chapter's check harness, graded on the solution, as members of the mirror; their
/// names relative to it.
fn write_harnesses(
    workbook: &Workbook,
    workbook_root: &Path,
    mirror: &Path,
) -> Result<Vec<String>> {
    let mut members = Vec::new();
    let grader = Grader::new(workbook);
    for chapter in workbook.ready_chapters() {
        let rubric = grader.rubric(chapter)?;
        let graded = Target::Solution.graded_crate(workbook, chapter)?;
        // The separate layout keeps the checks in a file of their own, `checks.rs`.
        let generated = harness::prepare(
            workbook,
            chapter,
            &rubric,
            &graded,
            harness::Layout::Separate,
        )?
        .dir;
        let name = format!("harnesses/{}", chapter.stem());
        let member = mirror.join(&name);
        let mut manifest = CrateManifest::read(&generated)?.table;
        manifest.remove("workspace");
        manifest.remove("profile");
        redirect_paths(&mut manifest, &generated, workbook_root, mirror)?;
        write_if_changed(&member.join("Cargo.toml"), &manifest.to_string())?;
        let source = std::fs::read_to_string(generated.join("checks.rs"))
            .with_context(|| format!("reading {}", generated.display()))?;
        write_if_changed(&member.join("checks.rs"), &source)?;
        members.push(name);
    }
    Ok(members)
}

fn portable(path: &Path) -> Result<String> {
    path.to_str()
        .map(|path| path.replace('\\', "/"))
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirrored_member_reads_the_real_sources_and_leads_to_mirrored_members() {
        let root = crate::util::scratch_dir("lint-mirror");
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"tool\", \"crates/*\"]\n",
        );
        write(
            "tool/Cargo.toml",
            "[package]\nname = \"tool\"\n[dependencies]\nplain = { path = \"../crates/plain\" }\n",
        );
        write("tool/src/lib.rs", "#[cfg(test)]\nmod tests {}\n");
        write("crates/plain/Cargo.toml", "[package]\nname = \"plain\"\n");
        write(
            "crates/plain/src/lib.rs",
            "//! Used by a test, says a comment.\n",
        );
        write("crates/not-a-crate/notes.txt", "");
        let manifest = CrateManifest::read(&root).unwrap().table;
        let members = workspace_members(&root, &manifest).unwrap();
        assert_eq!(members, [root.join("tool"), root.join("crates/plain")]);

        let mirror = root.join("mirror");
        for member in &members {
            let mirrored = mirror.join(member.strip_prefix(&root).unwrap());
            mirror_member(&root, member, &mirrored, &mirror, &[]).unwrap();
        }
        let tool = CrateManifest::read(&mirror.join("tool")).unwrap().table;
        let plain_path = tool["dependencies"]["plain"]["path"].as_str().unwrap();
        assert_eq!(Path::new(plain_path), mirror.join("crates/plain"));
        assert!(tool.get("lib").is_none(), "a library with tests is tested");
        let plain = CrateManifest::read(&mirror.join("crates/plain"))
            .unwrap()
            .table;
        assert_eq!(plain["lib"]["test"].as_bool(), Some(false));
        let source = std::fs::read_to_string(mirror.join("tool/src/lib.rs")).unwrap();
        assert_eq!(source, "#[cfg(test)]\nmod tests {}\n");
    }

    #[test]
    fn a_test_is_found_in_its_attributes_and_not_inside_other_words() {
        assert!(has_word("#[test]\nfn a() {}", "test"));
        assert!(has_word("#[tokio::test]", "test"));
        assert!(has_word("#[cfg(all(test, unix))]", "test"));
        assert!(!has_word("fn fastest_test_case() {} // latest", "test"));
    }
}
