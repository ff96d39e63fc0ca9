//! The fast way into the grader. `cargo xtask` is `cargo run --package xtask`, and cargo first
//! resolves the whole workspace (about two hundred packages): 50-80 ms of every check. The
//! launcher (`xtask/launcher`) is a workspace of its own with no dependencies, so cargo starts it
//! at once, and it starts the grader. Cargo can only be pointed at it by an absolute path, which
//! a file in the repository cannot hold; so the grader writes the alias's middle part into its
//! folder under `target/`, and links `.cargo/fast` to that folder (see `.cargo/config.toml`).
//! When the workbook moves or `target/` is cleaned, the link leads nowhere, cargo skips it, the
//! slow way runs, and the grader makes the link again.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::curriculum::workbook::{target_dir_of, work_dir_of, workspace_root};
use crate::sandbox;
use crate::util::write_if_changed;

/// The link cargo's configuration includes the alias's fast part through.
const LINK: &str = ".cargo/fast";
/// The file the alias's fast part is in, in the folder the link leads to.
const ALIAS_FILE: &str = "xtask.toml";
/// The launcher's manifest, from the root.
pub const LAUNCHER_MANIFEST: &str = "xtask/launcher/Cargo.toml";

/// Sets up the fast way for the workbook around the current folder, when this grader is the one
/// that `cargo xtask` builds there. Best effort: without it, `cargo xtask` takes the slow way.
pub fn set_up() {
    let Ok(root) = workspace_root() else {
        return;
    };
    if !built_in(&target_dir_of(&root)) {
        return;
    }
    // A failure here costs the next check its speed, never its result: say nothing.
    let _ = link(&root);
}

/// Whether this grader lives in `target_dir` (a class slot or a lane grades with a grader built
/// elsewhere, and must not point the fast way at its own target folder).
fn built_in(target_dir: &Path) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let ours = exe.parent().and_then(Path::parent).map(canonical);
    ours.is_some_and(|ours| ours == canonical(target_dir))
}

fn link(root: &Path) -> Result<()> {
    let launcher = root.join(LAUNCHER_MANIFEST);
    if !launcher.is_file() {
        return Ok(());
    }
    let folder = work_dir_of(root).join("fast");
    write_if_changed(
        &folder.join(ALIAS_FILE),
        &alias_text(&launcher, &target_dir_of(root))?,
    )?;
    let link = root.join(LINK);
    // A link to this copy's launcher through another target folder (a grader run with another
    // CARGO_TARGET_DIR, as the benchmark's cold start does) still works: leave it.
    if leads_to(&link, &folder) || starts_launcher(&link.join(ALIAS_FILE), &launcher) {
        return Ok(());
    }
    match std::fs::symlink_metadata(&link) {
        Ok(metadata) if metadata.file_type().is_symlink() => sandbox::remove_folder_link(&link)
            .with_context(|| format!("removing {}", link.display()))?,
        // A file or folder someone put there is theirs: leave the slow way.
        Ok(_) => return Ok(()),
        Err(_) => {}
    }
    sandbox::link_folder(&folder, &link)
        .with_context(|| format!("linking {} to {}", link.display(), folder.display()))
}

/// The alias's fast part: the options that point `cargo run` at the launcher, for the target
/// folder this grader was built in. Quiet: cargo only starts the launcher (the slow way is
/// not quiet, so that cargo's progress shows while a fresh clone builds the grader).
fn alias_text(launcher: &Path, target_dir: &Path) -> Result<String> {
    let path = |path: &Path| toml::Value::String(path.display().to_string());
    let alias = toml::Value::Array(vec![
        toml::Value::String("--quiet".into()),
        toml::Value::String("--manifest-path".into()),
        path(launcher),
        toml::Value::String("--target-dir".into()),
        path(target_dir),
    ]);
    let table = toml::Table::from_iter([(
        "alias".to_owned(),
        toml::Value::Table(toml::Table::from_iter([("xtask".to_owned(), alias)])),
    )]);
    Ok(format!(
        "# Written by the grader: `cargo xtask` starts the launcher (see .cargo/config.toml).\n{}",
        toml::to_string(&table).context("writing the fast alias")?
    ))
}

/// Whether the alias part in `alias_file` starts the launcher at `launcher`.
fn starts_launcher(alias_file: &Path, launcher: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(alias_file) else {
        return false;
    };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else {
        return false;
    };
    let options = table
        .get("alias")
        .and_then(|alias| alias.get("xtask"))
        .and_then(toml::Value::as_array);
    options.is_some_and(|options| {
        options.windows(2).any(|pair| {
            pair[0].as_str() == Some("--manifest-path")
                && pair[1]
                    .as_str()
                    .is_some_and(|path| canonical(Path::new(path)) == canonical(launcher))
        })
    })
}

fn leads_to(link: &Path, folder: &Path) -> bool {
    match (link.canonicalize(), folder.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alias_part_keeps_paths_whole() {
        let text = alias_text(
            Path::new("/my work/wb/xtask/launcher/Cargo.toml"),
            Path::new("C:\\Users\\Ana Lee\\wb\\target"),
        )
        .unwrap();
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            parsed["alias"]["xtask"],
            toml::Value::Array(vec![
                "--quiet".into(),
                "--manifest-path".into(),
                "/my work/wb/xtask/launcher/Cargo.toml".into(),
                "--target-dir".into(),
                "C:\\Users\\Ana Lee\\wb\\target".into(),
            ])
        );
    }

    #[test]
    fn an_alias_part_is_known_by_the_launcher_it_starts() {
        let dir = std::env::temp_dir().join(format!("workbook-fast-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ours, theirs) = (dir.join("ours/Cargo.toml"), dir.join("theirs/Cargo.toml"));
        let file = dir.join(ALIAS_FILE);
        std::fs::write(&file, alias_text(&ours, &dir.join("target")).unwrap()).unwrap();
        let (starts_ours, starts_theirs) = (
            starts_launcher(&file, &ours),
            starts_launcher(&file, &theirs),
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(starts_ours);
        assert!(!starts_theirs);
    }

    /// Cargo hands these fields to the program it runs, and the harness stamps record them:
    /// the launcher must tell the grader what `cargo run --package xtask` would.
    #[test]
    fn the_launcher_has_the_package_fields_of_the_grader() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |path: &str| -> toml::Table {
            toml::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
        };
        let workspace = read("Cargo.toml")["workspace"]["package"].clone();
        let grader = read("xtask/Cargo.toml")["package"].clone();
        let launcher = read(LAUNCHER_MANIFEST)["package"].clone();
        for field in [
            "name",
            "version",
            "authors",
            "description",
            "homepage",
            "repository",
            "license",
            "license-file",
            "readme",
            "rust-version",
        ] {
            let graders = match grader.get(field) {
                Some(toml::Value::Table(inherited)) if inherited.contains_key("workspace") => {
                    workspace.get(field)
                }
                value => value,
            };
            assert_eq!(launcher.get(field), graders, "the field {field}");
        }
    }
}
