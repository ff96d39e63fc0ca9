//! `cargo xtask` the fast way: start the grader that was built beside this launcher.
//!
//! `cargo run --package xtask` resolves the workbook's whole workspace (about two hundred
//! packages) before it starts the grader, which costs 50-80 ms on every check. This launcher is
//! a workspace of its own with no dependencies, so cargo starts it at once. It then does the one
//! part of cargo's work that matters here: it makes sure the grader was built from its sources
//! as they are now (building it with cargo when they changed), and becomes the grader.
//!
//! The grader sets this way in up itself (its `fast_path` module); cargo takes it only while the
//! link `.cargo/fast` leads somewhere (see `.cargo/config.toml`).

mod dep_info;

use std::env;
use std::ffi::OsString;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// What changes the grader's build besides the sources its dep-info lists, from the root.
const BUILD_SETTINGS: [&str; 4] = [
    "Cargo.toml",
    "Cargo.lock",
    "xtask/Cargo.toml",
    ".cargo/config.toml",
];

/// The file beside the grader that records which sources the grader was built from.
const STAMP: &str = "xtask.launch-stamp";

/// The file under a folder that marks it as a copy of the workbook.
const WORKBOOK_MANIFEST: &str = "xtask/workbook.toml";

fn main() -> ExitCode {
    match launch() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

fn launch() -> Result<ExitCode, String> {
    let args: Vec<OsString> = env::args_os().skip(1).collect();
    let root = own_root();
    let cwd = env::current_dir().map_err(|e| format!("reading the current folder: {e}"))?;
    // A copy of the workbook made with its `.cargo/fast` still leads here: grade the copy with
    // its own grader, started the slow way, which sets up the copy's own fast way.
    if let Some(other) = workbook_around(&cwd).filter(|other| !same_folder(other, &root)) {
        let mut command = Command::new(cargo());
        command
            .args(["run", "--quiet", "--package", "xtask", "--manifest-path"])
            .arg(other.join("Cargo.toml"))
            .arg("--")
            .args(&args);
        return hand_over(command);
    }
    let exe = env::current_exe().map_err(|e| format!("finding the launcher: {e}"))?;
    let bin_dir = exe
        .parent()
        .ok_or("the launcher is not in a folder")?
        .to_path_buf();
    let grader = bin_dir.join(format!("xtask{}", env::consts::EXE_SUFFIX));
    if !is_fresh(&root, &grader) {
        let status = build(&root, &grader)?;
        if status != 0 {
            return Ok(ExitCode::from(u8::try_from(status).unwrap_or(1)));
        }
        if !grader.is_file() {
            return Err(format!(
                "cargo built the grader, but not at {}",
                grader.display()
            ));
        }
    }
    let manifest_dir = root.join("xtask");
    let mut command = Command::new(&grader);
    command
        .args(&args)
        // What `cargo run --package xtask` would have told the grader.
        .env("CARGO_MANIFEST_PATH", manifest_dir.join("Cargo.toml"))
        .env("CARGO_MANIFEST_DIR", manifest_dir);
    hand_over(command)
}

/// The workbook this launcher belongs to: two folders above its manifest.
fn own_root() -> PathBuf {
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let root = manifest_dir.join("..").join("..");
    root.canonicalize().unwrap_or(root)
}

/// The closest folder at or above `dir` that is a copy of the workbook.
fn workbook_around(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|folder| folder.join(WORKBOOK_MANIFEST).is_file())
        .map(Path::to_path_buf)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Whether the grader was built from the sources and settings as they are now: the stamp
/// beside it names this very binary and the digest of what it was built from.
fn is_fresh(root: &Path, grader: &Path) -> bool {
    match (identity(grader), sources_digest(root, grader)) {
        (Some(identity), Some(digest)) => std::fs::read_to_string(grader.with_file_name(STAMP))
            .is_ok_and(|stamp| stamp == stamp_text(&identity, digest)),
        _ => false,
    }
}

/// Builds the grader with cargo into the target folder this launcher was built in, and returns
/// cargo's exit status. When the sources did not change while cargo ran, the grader it left is
/// the one built from them, and the stamp says so.
fn build(root: &Path, grader: &Path) -> Result<i32, String> {
    let target_dir = grader
        .parent()
        .and_then(Path::parent)
        .ok_or("the grader is not in a target folder")?;
    let before = sources_digest(root, grader);
    let status = Command::new(cargo())
        .args(["build", "--quiet", "--package", "xtask", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| format!("running cargo to build the grader: {e}"))?;
    if !status.success() {
        return Ok(status.code().unwrap_or(1));
    }
    let after = sources_digest(root, grader);
    if let (Some(before), Some(after), Some(identity)) = (before, after, identity(grader))
        && before == after
    {
        // Without a stamp the next start builds again, which costs time and nothing else.
        let _ = std::fs::write(grader.with_file_name(STAMP), stamp_text(&identity, after));
    }
    Ok(0)
}

fn stamp_text(identity: &str, digest: u64) -> String {
    format!("binary {identity}\nsources {digest:016x}\n")
}

/// The grader binary's size and modification time: any build that replaces it changes them.
fn identity(grader: &Path) -> Option<String> {
    let metadata = std::fs::metadata(grader).ok()?;
    let modified = metadata
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{} {}", metadata.len(), modified.as_nanos()))
}

/// A digest of the text of every file the grader is built from: the files its dep-info
/// (`xtask.d`, which cargo writes beside it) lists, and the manifests, lockfile and cargo
/// configuration. None before the grader's first build.
fn sources_digest(root: &Path, grader: &Path) -> Option<u64> {
    let dep_info = std::fs::read_to_string(grader.with_file_name("xtask.d")).ok()?;
    let (mut files, _) = dep_info::parse(&dep_info);
    files.extend(BUILD_SETTINGS.iter().map(|file| root.join(file)));
    let mut hasher = DefaultHasher::new();
    for file in &files {
        hasher.write(file.as_os_str().as_encoded_bytes());
        match std::fs::read(file) {
            Ok(bytes) => {
                hasher.write_usize(bytes.len());
                hasher.write(&bytes);
            }
            Err(_) => hasher.write_u8(0xff),
        }
    }
    Some(hasher.finish())
}

/// The cargo that started this launcher.
fn cargo() -> OsString {
    env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Replaces this process with `command` (Unix), or runs it and exits as it exits.
#[cfg(unix)]
fn hand_over(mut command: Command) -> Result<ExitCode, String> {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    Err(format!(
        "could not start {}: {error}",
        Path::new(command.get_program()).display()
    ))
}

/// Replaces this process with `command` (Unix), or runs it and exits as it exits.
#[cfg(not(unix))]
fn hand_over(mut command: Command) -> Result<ExitCode, String> {
    #[cfg(windows)]
    console::leave_ctrl_c_to_the_child();
    let status = command.status().map_err(|e| {
        format!(
            "could not start {}: {e}",
            Path::new(command.get_program()).display()
        )
    })?;
    std::process::exit(status.code().unwrap_or(1))
}

#[cfg(windows)]
mod console {
    /// Ctrl-C reaches every process of the console: the grader stops in its own way, and this
    /// launcher waits for it instead of dying first and handing the prompt back too early.
    pub fn leave_ctrl_c_to_the_child() {
        unsafe extern "system" fn handled(_event: u32) -> i32 {
            1
        }
        #[link(name = "kernel32")]
        unsafe extern "system" {
            fn SetConsoleCtrlHandler(
                handler: Option<unsafe extern "system" fn(u32) -> i32>,
                add: i32,
            ) -> i32;
        }
        // SAFETY: `handled` has the signature the console calls and lives as long as the
        // process; a handler that fails to register leaves the default, which is harmless.
        unsafe {
            SetConsoleCtrlHandler(Some(handled), 1);
        }
    }
}
