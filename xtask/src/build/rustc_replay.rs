//! Building a merged harness without cargo. A merged harness is one crate (see `merged`), so
//! after an edit cargo only decides that rustc must run again, then runs it the way it did last
//! time: that decision costs a second process, a workspace load and a look at every dependency
//! (about 45 ms on a 2-core machine, a tenth of a check after an edit).
//!
//! While cargo builds a merged harness, the grader is its `RUSTC_WORKSPACE_WRAPPER`: it runs
//! rustc as cargo asks and keeps the invocation (program, arguments, folder, environment). The
//! next build replays it without cargo when nothing but sources changed since: the same
//! toolchain, environment, manifests, lockfile and cargo configuration (`freshness` digests
//! them), so cargo would run rustc the same way. Rustc itself reads the sources and redoes what
//! changed. When the digest differs, or the replay fails for a reason that is not in the code
//! (a dependency gone after `cargo clean`, the linker), cargo builds as before.
//!
//! Cargo never learns of a replayed build: its next run finds sources newer than its own record
//! and runs rustc again, which is correct.

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Set for the cargo run that builds a merged harness: where the wrapper writes the invocation.
pub const RECORD_VAR: &str = "WORKBOOK_RECORD_RUSTC";

/// The invocation kept in the harness folder, ready to replay.
const KEPT: &str = "rustc-invocation.json";

/// The crate name cargo gives a harness's test target.
const HARNESS_CRATE: &str = "checks";

/// Variables of cargo's environment that only mean something to the cargo run that set them:
/// its jobserver, whose file descriptors a replay does not have.
const NOT_REPLAYED: &[&str] = &["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", RECORD_VAR];

/// One rustc run as cargo made it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Invocation {
    program: String,
    args: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
}

/// An invocation with what it was made under.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    invocation: Invocation,
    /// `freshness::Inputs::settings_digest` of the build that made it.
    settings: String,
    color: bool,
    lane: usize,
}

/// Where cargo's wrapper writes the invocation of the harness at `harness_dir`.
pub fn pending_path(harness_dir: &Path) -> PathBuf {
    harness_dir.join("rustc-invocation.pending.json")
}

/// When cargo runs the grader as its workspace wrapper (`RECORD_VAR` set, rustc's path first):
/// runs rustc as asked and, for the harness crate, writes the invocation. None when this
/// process is not a wrapper.
pub fn run_as_wrapper() -> Option<ExitCode> {
    let record_to = PathBuf::from(std::env::var_os(RECORD_VAR)?);
    let mut args = std::env::args_os().skip(1);
    let program = args.next()?;
    let args: Vec<OsString> = args.collect();
    let status = Command::new(&program)
        .args(&args)
        .env_remove(RECORD_VAR)
        .status();
    let Ok(status) = status else {
        let message = crate::lang::words::tf(
            crate::lang::words::Key::CouldNotStart,
            &[&program.display()],
        );
        eprintln!(
            "{}",
            crate::lang::words::tf(crate::lang::words::Key::ErrorPrefix, &[&message])
        );
        return Some(ExitCode::from(1));
    };
    if let Some(invocation) = invocation_of(&program, &args) {
        // A failed write only costs the next build a cargo run.
        if let Ok(json) = serde_json::to_string(&invocation) {
            let _ = std::fs::write(&record_to, json);
        }
    }
    let code = status.code().unwrap_or(1);
    Some(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The invocation to keep: rustc compiling the harness crate, every argument and variable text.
fn invocation_of(program: &OsString, args: &[OsString]) -> Option<Invocation> {
    let args: Vec<String> = args
        .iter()
        .map(|arg| arg.clone().into_string().ok())
        .collect::<Option<_>>()?;
    let compiles_harness = args
        .windows(2)
        .any(|pair| pair[0] == "--crate-name" && pair[1] == HARNESS_CRATE);
    if !compiles_harness {
        return None;
    }
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect::<Option<_>>()?;
    let env = env
        .into_iter()
        .filter(|(name, _)| !NOT_REPLAYED.contains(&name.as_str()))
        .collect();
    Some(Invocation {
        program: program.clone().into_string().ok()?,
        args,
        cwd: std::env::current_dir().ok()?,
        env,
    })
}

/// Sets up `command` (a cargo build of the harness at `harness_dir`) to run through the grader,
/// which writes rustc's invocation. Nothing is recorded when the learner has a workspace wrapper
/// of their own, which then stays in place.
pub fn record_through_wrapper(command: &mut Command, harness_dir: &Path) {
    let pending = pending_path(harness_dir);
    let _ = std::fs::remove_file(&pending);
    if std::env::var_os("RUSTC_WORKSPACE_WRAPPER").is_some() {
        return;
    }
    if let Some(grader) = grader_binary() {
        command
            .env("RUSTC_WORKSPACE_WRAPPER", grader)
            .env(RECORD_VAR, &pending);
    }
}

/// The grader's binary, to run as the wrapper. A grader that runs long (`watch`, `ci`, whose
/// `cargo test` relinks it) may see its binary replaced under it: Linux then names the running
/// one `<path> (deleted)`, and the binary now at `<path>`, a grader too, serves. None when
/// there is no binary to run.
fn grader_binary() -> Option<PathBuf> {
    let running = std::env::current_exe().ok()?;
    if running.is_file() {
        return Some(running);
    }
    let replacement = PathBuf::from(running.to_str()?.strip_suffix(" (deleted)")?);
    replacement.is_file().then_some(replacement)
}

/// After cargo built the harness at `harness_dir` from inputs whose settings digest is
/// `settings`: keeps the invocation the wrapper wrote, or forgets the last one.
pub fn keep(harness_dir: &Path, settings: Option<String>, color: bool, lane: usize) {
    let kept = harness_dir.join(KEPT);
    let pending = pending_path(harness_dir);
    let invocation = std::fs::read_to_string(&pending)
        .ok()
        .and_then(|json| serde_json::from_str::<Invocation>(&json).ok());
    let _ = std::fs::remove_file(&pending);
    let (Some(invocation), Some(settings)) = (invocation, settings) else {
        let _ = std::fs::remove_file(&kept);
        return;
    };
    let record = Kept {
        invocation,
        settings,
        color,
        lane,
    };
    if let Ok(json) = serde_json::to_string(&record) {
        let _ = std::fs::write(&kept, json);
    }
}

/// Forgets the kept invocation: the next build goes through cargo.
pub fn forget(harness_dir: &Path) {
    let _ = std::fs::remove_file(harness_dir.join(KEPT));
}

/// The invocation kept for the harness at `harness_dir`, when it can build from inputs with
/// `settings` in build lane `lane`: made under the same settings and colour, and every
/// dependency it links still there.
pub fn replayable(harness_dir: &Path, settings: &str, color: bool, lane: usize) -> Option<Replay> {
    let json = std::fs::read_to_string(harness_dir.join(KEPT)).ok()?;
    let kept: Kept = serde_json::from_str(&json).ok()?;
    if kept.settings != settings || kept.color != color || kept.lane != lane {
        return None;
    }
    let invocation = kept.invocation;
    let externs_present = invocation
        .args
        .windows(2)
        .filter(|pair| pair[0] == "--extern")
        .filter_map(|pair| pair[1].split_once('=').map(|(_, path)| path))
        .all(|path| Path::new(path).is_file());
    let test_binary = test_binary_of(&invocation.args)?;
    externs_present.then_some(Replay {
        invocation,
        test_binary,
    })
}

/// The executable a `--test` invocation writes: `<out-dir>/checks<extra-filename><exe suffix>`.
fn test_binary_of(args: &[String]) -> Option<PathBuf> {
    let value = |flag: &str| {
        args.windows(2)
            .find(|pair| pair[0] == flag)
            .map(|pair| pair[1].clone())
    };
    let out_dir = PathBuf::from(value("--out-dir")?);
    let extra = args
        .windows(2)
        .filter(|pair| pair[0] == "-C")
        .find_map(|pair| pair[1].strip_prefix("extra-filename=").map(str::to_owned))
        .unwrap_or_default();
    Some(out_dir.join(format!(
        "{HARNESS_CRATE}{extra}{}",
        std::env::consts::EXE_SUFFIX
    )))
}

/// A kept invocation, ready to run.
#[derive(Debug)]
pub struct Replay {
    invocation: Invocation,
    pub test_binary: PathBuf,
}

/// What a replayed rustc run said.
#[derive(Debug)]
pub struct Replayed {
    pub success: bool,
    /// Rustc's JSON diagnostics, one per line.
    pub diagnostics: Vec<String>,
    /// Whatever else it printed.
    pub other_output: String,
}

impl Replay {
    /// Runs rustc as cargo did.
    pub fn run(&self) -> Result<Replayed> {
        let invocation = &self.invocation;
        let mut command = Command::new(&invocation.program);
        command
            .args(&invocation.args)
            .current_dir(&invocation.cwd)
            .env_clear()
            .envs(invocation.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Started as a build's process, which Ctrl-C ends with the linker it started.
        let mut child = crate::sandbox::BuildChild::spawn(&mut command)
            .with_context(|| format!("starting {}", invocation.program))?;
        let stderr = child.stderr.take().context("rustc's stderr")?;
        let mut diagnostics = Vec::new();
        let mut other_output = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.context("reading rustc's output")?;
            if line.starts_with('{') {
                diagnostics.push(line);
            } else {
                other_output.push_str(&line);
                other_output.push('\n');
            }
        }
        let status = child.wait().context("waiting for rustc")?;
        Ok(Replayed {
            success: status.success(),
            diagnostics,
            other_output,
        })
    }

    /// The folder cargo ran rustc in, where the relative paths of its dep-info start.
    pub fn workspace_dir(&self) -> &Path {
        &self.invocation.cwd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| (*item).to_owned()).collect()
    }

    #[test]
    fn only_the_harness_crate_is_kept() {
        let harness = strings(&["--crate-name", "checks", "--edition=2024", "src/lib.rs"]);
        let dependency = strings(&["--crate-name", "tokio", "--edition=2021"]);
        let program = OsString::from("rustc");
        let as_os = |args: &[String]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(invocation_of(&program, &as_os(&harness)).is_some());
        assert!(invocation_of(&program, &as_os(&dependency)).is_none());
    }

    #[test]
    fn the_test_binary_is_named_as_rustc_names_it() {
        let args = strings(&[
            "--crate-name",
            "checks",
            "--test",
            "-C",
            "metadata=abc",
            "-C",
            "extra-filename=-0123abcd",
            "--out-dir",
            "/t/debug/deps",
        ]);
        assert_eq!(
            test_binary_of(&args),
            Some(PathBuf::from(format!(
                "/t/debug/deps/checks-0123abcd{}",
                std::env::consts::EXE_SUFFIX
            )))
        );
    }

    #[test]
    fn a_kept_invocation_replays_only_under_its_own_settings() {
        let dir = std::env::temp_dir().join(format!("replay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dependency = dir.join("libdep.rlib");
        std::fs::write(&dependency, "").unwrap();
        let invocation = Invocation {
            program: "rustc".to_owned(),
            args: vec![
                "--crate-name".to_owned(),
                "checks".to_owned(),
                "--extern".to_owned(),
                format!("dep={}", dependency.display()),
                "--out-dir".to_owned(),
                dir.display().to_string(),
            ],
            cwd: dir.clone(),
            env: Vec::new(),
        };
        std::fs::write(
            pending_path(&dir),
            serde_json::to_string(&invocation).unwrap(),
        )
        .unwrap();
        keep(&dir, Some("digest".to_owned()), false, 0);
        assert!(!pending_path(&dir).exists());
        assert!(replayable(&dir, "digest", false, 0).is_some());
        assert!(
            replayable(&dir, "other", false, 0).is_none(),
            "settings changed"
        );
        assert!(
            replayable(&dir, "digest", true, 0).is_none(),
            "colour changed"
        );
        assert!(
            replayable(&dir, "digest", false, 1).is_none(),
            "another lane"
        );
        std::fs::remove_file(&dependency).unwrap();
        assert!(
            replayable(&dir, "digest", false, 0).is_none(),
            "a dependency is gone"
        );
        keep(&dir, Some("digest".to_owned()), false, 0);
        assert!(
            !dir.join(KEPT).exists(),
            "no new invocation: the old one goes"
        );
    }
}
