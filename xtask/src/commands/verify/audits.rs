//! The audits of the workbook as a whole: the manifest, folders and book agree, and clippy and
//! rustfmt pass on the solutions and the workbook's own crates.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::chapter::stray_list;
use super::findings::Findings;
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Workbook};

/// clippy -D warnings on the crates `linted` selects, and rustfmt on those `formatted` selects
/// (cargo's `-p NAME…` or `--manifest-path PATH`); `names` says which they are.
pub fn lint(
    workbook: &Workbook,
    findings: &mut Findings,
    names: &str,
    linted: &[OsString],
    formatted: &[OsString],
) -> Result<()> {
    let mut clippy = Command::new(crate::util::cargo());
    clippy
        .args(["clippy", "--quiet", "--all-targets"])
        .args(linted)
        .args(["--", "-D", "warnings"]);
    findings.require(
        quiet_success(&mut clippy, &workbook.root)?,
        format!("clippy -D warnings is clean on {names}"),
    );
    let mut fmt = Command::new(crate::util::cargo());
    fmt.args(["fmt", "--check"]).args(formatted);
    findings.require(
        quiet_success(&mut fmt, &workbook.root)?,
        format!("rustfmt is clean on {names}"),
    );
    Ok(())
}

/// clippy -D warnings and rustfmt on the solutions (and the workbook's own crates).
pub fn lint_solutions(
    workbook: &Workbook,
    chapters: &[&Chapter],
    findings: &mut Findings,
) -> Result<()> {
    let mut packages: Vec<String> = chapters.iter().map(|c| c.solution_crate_name()).collect();
    packages.extend(["xtask", "workbook-figures"].map(str::to_owned));
    let selected = |names: &[String]| -> Vec<OsString> {
        names
            .iter()
            .flat_map(|name| ["-p".into(), name.into()])
            .collect()
    };
    // The exercises are shipped code too: formatted, though unfinished.
    let mut formatted = packages.clone();
    formatted.extend(chapters.iter().map(|chapter| chapter.crate_name()));
    lint(
        workbook,
        findings,
        &packages.join(", "),
        &selected(&packages),
        &selected(&formatted),
    )?;
    // The launcher is a workspace of its own (xtask/launcher/Cargo.toml says why).
    let launcher: Vec<OsString> = vec![
        "--manifest-path".into(),
        workbook
            .root
            .join(crate::build::fast_path::LAUNCHER_MANIFEST)
            .into(),
    ];
    let mut linted = launcher.clone();
    linted.extend(["--target-dir".into(), workbook.target_dir().into()]);
    lint(workbook, findings, "the launcher", &linted, &launcher)?;
    // The hidden checks are code too, though no crate of the workspace holds them.
    let mut check_files = vec![workbook.support_file()];
    for chapter in chapters {
        check_files.extend(crate::curriculum::workbook::rust_files(
            &workbook.checks_dir(chapter),
        )?);
    }
    let mut rustfmt = Command::new("rustfmt");
    rustfmt
        .args(["--check", "--edition", "2024"])
        .args(&check_files);
    findings.require(
        quiet_success(&mut rustfmt, &workbook.root)?,
        "rustfmt is clean on the chapters' hidden checks",
    );
    Ok(())
}

/// Runs a command in `dir`, showing its output only when it fails.
pub fn quiet_success(command: &mut Command, dir: &Path) -> Result<bool> {
    let output = command
        .current_dir(dir)
        .output()
        .with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        print!("{}", String::from_utf8_lossy(&output.stdout));
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output.status.success())
}

/// The manifest, the folders and book/src/SUMMARY.md must agree.
pub fn verify_layout(workbook: &Workbook, findings: &mut Findings) -> Result<()> {
    let summary_path = workbook.root.join("book/src/SUMMARY.md");
    let summary = std::fs::read_to_string(&summary_path).unwrap_or_default();
    findings.require(!summary.is_empty(), "book/src/SUMMARY.md exists");
    for part in &workbook.parts {
        findings.require(
            summary.contains(&format!("# {}", part.title)),
            format!("SUMMARY.md has the part \"{}\"", part.title),
        );
    }
    for chapter in workbook.chapters() {
        let entry = if chapter.ready {
            format!("[{}]({}.md)", chapter.title, chapter.stem())
        } else {
            format!("[{}]()", chapter.title)
        };
        let kind = if chapter.ready {
            "a page"
        } else {
            "a draft entry"
        };
        findings.require(
            summary.contains(&entry),
            format!("SUMMARY.md lists {} as {kind}: {entry}", chapter.id),
        );
        let folders = [
            workbook.exercise_dir(chapter),
            workbook.solution_dir(chapter),
            workbook.checks_dir(chapter),
        ];
        if !chapter.ready {
            let stray: Vec<String> = folders
                .iter()
                .filter(|dir| dir.exists())
                .map(|dir| display_path(workbook, dir))
                .collect();
            findings.require(
                stray.is_empty(),
                format!(
                    "{}: a draft chapter has no folders yet{}",
                    chapter.id,
                    stray_list("present", &stray)
                ),
            );
        }
    }
    for folder in ["exercises", "solutions", "xtask/checks", "xtask/mutants"] {
        let dir = workbook.root.join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.path().is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let known = workbook
                .chapters()
                .any(|c| name == c.stem() || name == c.id);
            findings.require(
                known,
                format!("{folder}/{name} belongs to a chapter of the manifest"),
            );
        }
    }
    Ok(())
}
