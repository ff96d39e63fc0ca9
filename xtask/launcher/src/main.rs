//! `cargo xtask` the fast way: start the grader that was built beside this launcher.
//!
//! `cargo run --package xtask` resolves the workbook's whole workspace (about two hundred
//! packages) before it starts the grader, which costs 50-80 ms on every check. This launcher is
//! a workspace of its own with no dependencies, so cargo starts it at once. It then does the one
//! part of cargo's work that matters here: it makes sure the grader was built from its sources
//! as they are now (building it with cargo when they changed), and becomes the grader.
//!
//! The grader sets up this way in itself (its `fast_path` module); cargo takes it only while the
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
    // its own grader, started the slow way, which sets up the copy's own fast way (not quietly:
    // cargo may have to build that grader first).
    if let Some(other) = workbook_around(&cwd).filter(|other| !same_folder(other, &root)) {
        let mut command = Command::new(cargo());
        command
            .args(["run", "--package", "xtask", "--manifest-path"])
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
    let freshness = freshness(&root, &grader);
    if freshness != Freshness::Fresh {
        // A learner's broken exercise manifest must not take `cargo xtask reset` down with it:
        // while cargo cannot load the workspace, the grader built before starts, and it says
        // which file is broken.
        let unloadable = grader.is_file().then(|| workspace_error(&root)).flatten();
        if let Some(error) = unloadable {
            eprintln!(
                "warning: cargo cannot load the workbook's workspace, so the grader was not \
                 built again; starting the one built before. Cargo says:\n  {}",
                error.trim_end().replace('\n', "\n  ")
            );
        } else {
            // Cargo's progress shows while it compiles; when it only has to look (the grader
            // was just built the slow way), the look is quiet.
            let loud = freshness == Freshness::Changed || !grader.is_file();
            if freshness == Freshness::Changed {
                eprintln!("The grader's sources changed since it was built: building it again.");
            }
            let status = build(&root, &grader, loud)?;
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

/// What the launcher knows of the grader beside it.
#[derive(Debug, PartialEq, Eq)]
enum Freshness {
    /// Built from the sources and settings as they are now.
    Fresh,
    /// The stamp fits this very binary, and the files it was built from changed since.
    Changed,
    /// No grader, no stamp, or a stamp of another binary (cargo built the grader the slow way
    /// since): cargo decides.
    Unknown,
}

/// Whether the grader was built from the sources and settings as they are now: the stamp
/// beside it names this very binary, and the files it was built from have the sizes and times
/// they had then or, failing that, the same texts.
fn freshness(root: &Path, grader: &Path) -> Freshness {
    let (Some(identity), Some(files)) = (identity(grader), source_files(root, grader)) else {
        return Freshness::Unknown;
    };
    let Some(stamp) = Stamp::read(grader) else {
        return Freshness::Unknown;
    };
    if stamp.binary != identity {
        return Freshness::Unknown;
    }
    if stamp.times == times_digest(&files) {
        return Freshness::Fresh;
    }
    if stamp.sources != text_digest(&files) {
        return Freshness::Changed;
    }
    // The texts are the same with new times (a checkout, a save without changes): note the
    // times, so the next start compares times alone again.
    Stamp::new(identity, &files).write(grader);
    Freshness::Fresh
}

/// Cargo's complaint when it cannot load the workspace at `root` (a member's manifest that is
/// not TOML, say), without resolving or fetching anything; None when it loads.
fn workspace_error(root: &Path) -> Option<String> {
    let output = Command::new(cargo())
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .ok()?;
    (!output.status.success()).then(|| String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Builds the grader with cargo into the target folder this launcher was built in, and returns
/// cargo's exit status; `loud`, with cargo's progress. When the sources did not change while
/// cargo ran, the grader it left is the one built from them, and the stamp says so.
fn build(root: &Path, grader: &Path, loud: bool) -> Result<i32, String> {
    let target_dir = grader
        .parent()
        .and_then(Path::parent)
        .ok_or("the grader is not in a target folder")?;
    let before = source_files(root, grader).map(|files| text_digest(&files));
    let mut command = Command::new(cargo());
    command.args(["build", "--package", "xtask"]);
    if !loud {
        command.arg("--quiet");
    }
    let status = command
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| format!("running cargo to build the grader: {e}"))?;
    if !status.success() {
        return Ok(status.code().unwrap_or(1));
    }
    if let (Some(files), Some(identity)) = (source_files(root, grader), identity(grader))
        && before == Some(text_digest(&files))
    {
        // Without a stamp the next start builds again, which costs time and nothing else.
        Stamp::new(identity, &files).write(grader);
    }
    Ok(0)
}

/// The record beside the grader of what it was built from.
struct Stamp {
    /// The grader binary's [`identity`].
    binary: String,
    /// [`text_digest`] of the files it was built from.
    sources: u64,
    /// [`times_digest`] of the same files.
    times: u64,
}

impl Stamp {
    fn new(binary: String, files: &[PathBuf]) -> Self {
        Self {
            binary,
            sources: text_digest(files),
            times: times_digest(files),
        }
    }

    fn read(grader: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(grader.with_file_name(STAMP)).ok()?;
        let mut lines = text.lines();
        let binary = lines.next()?.strip_prefix("binary ")?.to_owned();
        let mut number = |name: &str| {
            let value = lines.next()?.strip_prefix(name)?;
            u64::from_str_radix(value, 16).ok()
        };
        let sources = number("sources ")?;
        let times = number("times ")?;
        Some(Self {
            binary,
            sources,
            times,
        })
    }

    fn write(&self, grader: &Path) {
        let text = format!(
            "binary {}\nsources {:016x}\ntimes {:016x}\n",
            self.binary, self.sources, self.times
        );
        // A stamp that cannot be written costs the next start a build, nothing else.
        let _ = std::fs::write(grader.with_file_name(STAMP), text);
    }
}

/// The grader binary's size and modification time: any build that replaces it changes them.
fn identity(grader: &Path) -> Option<String> {
    let metadata = std::fs::metadata(grader).ok()?;
    Some(format!("{} {}", metadata.len(), modified_nanos(&metadata)?))
}

fn modified_nanos(metadata: &std::fs::Metadata) -> Option<u128> {
    let modified = metadata.modified().ok()?;
    Some(
        modified
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos(),
    )
}

/// Every file the grader is built from: those its dep-info (`xtask.d`, which cargo writes
/// beside it) lists, and the manifests, lockfile and cargo configuration. None before the
/// grader's first build, and when the dep-info's paths are not absolute.
fn source_files(root: &Path, grader: &Path) -> Option<Vec<PathBuf>> {
    let dep_info = std::fs::read_to_string(grader.with_file_name("xtask.d")).ok()?;
    let (mut files, _) = dep_info::parse(&dep_info);
    // Paths relative to a `build.dep-info-basedir` would read other files from other folders:
    // without absolute paths, cargo decides every time.
    if files.iter().any(|file| file.is_relative()) {
        return None;
    }
    files.extend(BUILD_SETTINGS.iter().map(|file| root.join(file)));
    Some(files)
}

/// A digest of the name and text of every file (a missing file counts as one state of it).
fn text_digest(files: &[PathBuf]) -> u64 {
    digest(files, |file, hasher| {
        let bytes = std::fs::read(file).ok()?;
        hasher.write_usize(bytes.len());
        hasher.write(&bytes);
        Some(())
    })
}

/// A digest of the name, size and modification time of every file: it changes whenever cargo
/// would look again, without reading any text.
fn times_digest(files: &[PathBuf]) -> u64 {
    digest(files, |file, hasher| {
        let metadata = std::fs::metadata(file).ok()?;
        hasher.write_u64(metadata.len());
        hasher.write_u128(modified_nanos(&metadata)?);
        Some(())
    })
}

/// Hashes each file's name and what `feed` adds of it; a file `feed` cannot read counts as one
/// state of its own.
fn digest(files: &[PathBuf], mut feed: impl FnMut(&Path, &mut DefaultHasher) -> Option<()>) -> u64 {
    let mut hasher = DefaultHasher::new();
    for file in files {
        hasher.write(file.as_os_str().as_encoded_bytes());
        if feed(file, &mut hasher).is_none() {
            hasher.write_u8(0xff);
        }
    }
    hasher.finish()
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
#[allow(
    clippy::disallowed_methods,
    reason = "the grader's exit code is an i32 (Windows codes exceed what ExitCode holds)"
)]
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
