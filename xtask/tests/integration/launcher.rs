//! `cargo xtask` through this repository's cargo configuration and its launcher, in a scratch
//! workbook whose grader is a small program that says who it is: the slow way before the fast
//! way is set up, the fast way once the link leads to it, a grader built again when its sources
//! change, the slow way again when the link leads nowhere, and a copy made with the link graded
//! by its own grader.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Scratch, root};

/// A scratch workbook at `dir`: this repository's `.cargo` configuration and launcher, and a
/// grader that prints `name`, its arguments and the manifest folder cargo told it.
fn scratch_workbook(dir: &Path, name: &str) {
    for file in [".cargo/config.toml", ".cargo/xtask-run.toml"] {
        copy(&root().join(file), &dir.join(file));
    }
    for file in ["Cargo.toml", "Cargo.lock", "src/main.rs", "src/dep_info.rs"] {
        copy(
            &root().join("xtask/launcher").join(file),
            &dir.join("xtask/launcher").join(file),
        );
    }
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"xtask\"]\nresolver = \"3\"\n",
    );
    write(
        &dir.join("xtask/Cargo.toml"),
        "[package]\nname = \"xtask\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    write(&dir.join("xtask/workbook.toml"), "");
    grader_says(dir, name);
    std::fs::create_dir_all(dir.join("exercises/ch01-first/src")).unwrap();
}

fn grader_says(dir: &Path, name: &str) {
    write(
        &dir.join("xtask/src/main.rs"),
        &format!(
            "fn main() {{\n    let args: Vec<String> = std::env::args().skip(1).collect();\n    \
             println!(\"{name} {{}} {{}}\", args.join(\" \"), \
             std::env::var(\"CARGO_MANIFEST_DIR\").unwrap_or_default());\n}}\n"
        ),
    );
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `cargo xtask <args>` in `dir`: what it printed.
fn cargo_xtask(dir: &Path, args: &[&str]) -> String {
    cargo_xtask_with_stderr(dir, args).0
}

/// `cargo xtask <args>` in `dir`: what it printed, and what cargo and the launcher said on
/// stderr.
fn cargo_xtask_with_stderr(dir: &Path, args: &[&str]) -> (String, String) {
    let output = Command::new(env!("CARGO"))
        .arg("xtask")
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo xtask {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).unwrap().trim().to_owned(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// What the grader writes: the fast part of the alias, in a folder under target/, and the link
/// `.cargo/fast` to that folder.
fn set_up_fast_way(workbook: &Path) -> PathBuf {
    let folder = workbook.join("target/fast");
    let text = format!(
        "[alias]\nxtask = [\"--quiet\", \"--manifest-path\", {:?}, \"--target-dir\", {:?}]\n",
        workbook
            .join("xtask/launcher/Cargo.toml")
            .display()
            .to_string(),
        workbook.join("target").display().to_string(),
    );
    write(&folder.join("xtask.toml"), &text);
    link(&folder, &workbook.join(".cargo/fast"));
    folder
}

#[cfg(unix)]
fn link(folder: &Path, link: &Path) {
    std::os::unix::fs::symlink(folder, link).unwrap();
}

#[cfg(windows)]
fn link(folder: &Path, link: &Path) {
    let status = Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(link)
        .arg(folder)
        .status()
        .unwrap();
    assert!(status.success());
}

fn launched(workbook: &Path) -> bool {
    workbook.join("target/debug/xtask.launch-stamp").is_file()
}

#[test]
fn cargo_xtask_takes_the_fast_way_while_it_is_set_up_and_the_slow_way_otherwise() {
    let base = Scratch::new("launcher");
    let (first, copied) = (base.join("first"), base.join("copied"));
    scratch_workbook(&first, "first");
    let exercise = first.join("exercises/ch01-first/src");
    let grader_dir = first.join("xtask").display().to_string();

    let (said, progress) = cargo_xtask_with_stderr(&exercise, &["check", "ch01"]);
    assert_eq!(
        said,
        format!("first check ch01 {grader_dir}"),
        "without the link, the slow way"
    );
    assert!(
        progress.contains("Compiling xtask"),
        "the slow way shows cargo's progress while it builds the grader: {progress}"
    );
    assert!(!launched(&first), "the launcher did not run");

    let fast = set_up_fast_way(&first);
    assert_eq!(
        cargo_xtask(&exercise, &["check", "--path", "a b"]),
        format!("first check --path a b {grader_dir}"),
        "through the launcher, arguments and the manifest folder are what cargo run gives"
    );
    assert!(launched(&first), "the launcher ran and stamped the grader");

    let (_, quiet) = cargo_xtask_with_stderr(&exercise, &["list"]);
    assert_eq!(
        quiet, "",
        "the fast way with a built grader says nothing of itself"
    );

    grader_says(&first, "edited");
    let (said, progress) = cargo_xtask_with_stderr(&first, &["list"]);
    assert_eq!(
        said,
        format!("edited list {grader_dir}"),
        "a grader whose sources changed is built again before it runs"
    );
    assert!(
        progress.contains("sources changed") && progress.contains("Compiling xtask"),
        "and says so, with cargo's progress: {progress}"
    );

    // A copy made with its link still leading to the first workbook's fast way.
    scratch_workbook(&copied, "copied");
    link(&fast, &copied.join(".cargo/fast"));
    assert_eq!(
        cargo_xtask(&copied.join("exercises"), &["list"]),
        format!("copied list {}", copied.join("xtask").display()),
        "a copy is graded by its own grader"
    );

    std::fs::remove_dir_all(&fast).unwrap();
    assert_eq!(
        cargo_xtask(&first, &["hint"]),
        format!("edited hint {grader_dir}"),
        "a link that leads nowhere is skipped"
    );
}

#[test]
fn while_cargo_cannot_load_the_workspace_the_grader_built_before_starts() {
    let base = Scratch::new("launcher-unloadable");
    let workbook = base.join("workbook");
    scratch_workbook(&workbook, "first");
    write(
        &workbook.join("Cargo.toml"),
        "[workspace]\nmembers = [\"xtask\", \"exercises/*\"]\nresolver = \"3\"\n",
    );
    let exercise = workbook.join("exercises/ch01-first");
    let manifest = "[package]\nname = \"ch01_first\"\nversion = \"0.1.0\"\nedition = \"2024\"\n";
    write(&exercise.join("Cargo.toml"), manifest);
    write(&exercise.join("src/lib.rs"), "");
    set_up_fast_way(&workbook);
    let grader_dir = workbook.join("xtask").display().to_string();
    assert_eq!(
        cargo_xtask(&workbook, &["list"]),
        format!("first list {grader_dir}")
    );

    // The grader's sources change while a learner's manifest is broken: cargo can build nothing.
    grader_says(&workbook, "edited");
    write(
        &exercise.join("Cargo.toml"),
        &format!("{manifest}garbage\n"),
    );
    let output = Command::new(env!("CARGO"))
        .args(["xtask", "reset"])
        .current_dir(&workbook)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    let (said, warned) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{said}{warned}");
    assert_eq!(said.trim(), format!("first reset {grader_dir}"), "{warned}");
    assert!(
        warned.contains("cargo cannot load the workbook's workspace")
            && warned.contains("exercises/ch01-first"),
        "the launcher says why, with cargo's words: {warned}"
    );

    write(&exercise.join("Cargo.toml"), manifest);
    assert_eq!(
        cargo_xtask(&workbook, &["list"]),
        format!("edited list {grader_dir}"),
        "once the workspace loads, the grader is built again"
    );
}
