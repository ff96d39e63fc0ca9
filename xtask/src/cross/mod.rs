//! The cross-platform stage of `cargo xtask ci`: the workspace and every chapter's generated
//! harness pass clippy `-D warnings` (which compiles them: clippy is `cargo check` plus lints)
//! for macOS, Windows and musl Linux, and the sandbox's own tests run as a Windows program under
//! Wine.
//!
//! rustup offers only the host's standard library here, so this stage uses Debian's Rust
//! (`rustc-web`, `cargo-web`, `rust-web-clippy`) with its library sources (`rust-web-src`) and
//! builds each target's standard library (`-Zbuild-std`). Bundled SQLite's C part is compiled
//! where a C cross compiler exists (mingw-w64 for windows-gnu, musl-gcc for musl); for macOS and
//! MSVC the build script is told to link a system SQLite instead, which a check never links, so
//! only the Rust side is checked there.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::curriculum::workbook::Workbook;
use crate::system::{self, Requirement};

mod lint_workspace;

/// The targets every learner platform builds for (the host, Linux with glibc, is the rest of CI).
pub const TARGETS: [&str; 5] = [
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "x86_64-pc-windows-gnu",
    "x86_64-unknown-linux-musl",
];

/// The Windows target the sandbox tests run as under Wine: Wine 8 lacks a library today's
/// `x86_64-pc-windows-gnu` standard library needs at start-up; this one makes older calls.
const WINE_TARGET: &str = "x86_64-win7-windows-gnu";

const WINE: &str = "/usr/lib/wine/wine64";
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";

/// Debian packages this stage needs.
const REQUIREMENTS: [Requirement; 7] = [
    Requirement {
        program: "/usr/bin/rustc",
        package: "rustc-web",
        why: "the cross-platform check (a Rust whose standard library can be rebuilt)",
    },
    Requirement {
        program: "/usr/bin/cargo",
        package: "cargo-web",
        why: "the cross-platform check",
    },
    Requirement {
        program: "/usr/lib/rustlib/src/rust/library/std/Cargo.toml",
        package: "rust-web-src",
        why: "building the standard library of each target",
    },
    Requirement {
        program: "/usr/bin/clippy-driver",
        package: "rust-web-clippy",
        why: "clippy on each target",
    },
    Requirement {
        program: "/usr/bin/x86_64-w64-mingw32-gcc",
        package: "gcc-mingw-w64-x86-64",
        why: "SQLite's C part and linking on Windows (GNU)",
    },
    Requirement {
        program: "/usr/bin/musl-gcc",
        package: "musl-tools",
        why: "SQLite's C part on musl Linux",
    },
    Requirement {
        program: WINE,
        package: "wine64",
        why: "running the sandbox tests as a Windows program",
    },
];

/// What the stage found.
pub struct Outcome {
    pub clippy_clean: bool,
    pub wine_tests_pass: bool,
}

/// Installs the stage's system packages on a thread of its own, so that `ci` can run its earlier
/// stages meanwhile (apt-get waits mostly on the network and the disk, they on the processors);
/// [`run`] installs whatever is still missing.
pub fn install_in_background() -> std::thread::JoinHandle<Result<()>> {
    std::thread::spawn(|| system::ensure_quietly(&REQUIREMENTS))
}

/// Runs the stage and prints how long each part took.
///
/// The Windows test build runs beside the lints, in a target folder of its own (cargo locks a
/// target folder for one build at a time): it links and starts Wine with one processor idle,
/// which the lints fill. Its output is kept back and printed when it ends.
pub fn run(workbook: &Workbook) -> Result<Outcome> {
    let started = Instant::now();
    system::ensure(&REQUIREMENTS)?;
    let target_dir = workbook.target_dir().join("cross");
    let finished = std::thread::scope(|scope| -> Result<_> {
        let windows_tests = scope.spawn(|| wine_tests(workbook, &target_dir).output());
        let clean = lint_everything(workbook, &target_dir, started)?;
        let output = windows_tests
            .join()
            .map_err(|_| anyhow::anyhow!("the Windows test build's thread panicked"))?
            .context("starting cargo for the Windows test build")?;
        Ok((clean, output))
    });
    let (clippy_clean, output) = finished?;
    std::io::stdout().write_all(&output.stdout)?;
    std::io::stdout().write_all(&output.stderr)?;
    let wine_tests_pass = output.status.success();
    println!(
        "   the sandbox tests under Wine: {} ({:.0} s so far)",
        verdict(wine_tests_pass),
        started.elapsed().as_secs_f64()
    );
    println!(
        "   the cross-platform stage took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(Outcome {
        clippy_clean,
        wine_tests_pass,
    })
}

/// Clippy on every target for the workspace with every chapter's harness, and for the launcher;
/// whether both were clean.
fn lint_everything(workbook: &Workbook, target_dir: &Path, started: Instant) -> Result<bool> {
    let lint = |what: &str, manifest: &Path| -> Result<bool> {
        let mut clippy = debian_cargo(workbook, target_dir, "clippy");
        clippy
            .args(["--workspace", "--all-targets", "--manifest-path"])
            .arg(manifest);
        let clean = with_targets(&mut clippy).status()?.success();
        println!(
            "   {what} on {} targets: {} ({:.0} s so far)",
            TARGETS.len(),
            verdict(clean),
            started.elapsed().as_secs_f64()
        );
        Ok(clean)
    };
    let everything = lint_workspace::write(workbook, target_dir)?;
    let workspace_clean = lint("the workspace and every chapter's harness", &everything)?;
    // The launcher is a workspace of its own, with code for Windows alone.
    let launcher_clean = lint(
        "the launcher",
        &workbook
            .root
            .join(crate::build::fast_path::LAUNCHER_MANIFEST),
    )?;
    Ok(workspace_clean && launcher_clean)
}

/// The grader's tests that hold Windows code (the sandbox, and the reading of Windows checkouts),
/// built for Windows and run under Wine.
fn wine_tests(workbook: &Workbook, target_dir: &Path) -> Command {
    let mut wine = debian_cargo(workbook, &target_dir.join("windows"), "test");
    let runner_variable = format!(
        "CARGO_TARGET_{}_",
        WINE_TARGET.to_uppercase().replace('-', "_")
    );
    wine.args(["-p", "xtask", "--bin", "xtask"])
        .args(["-Zbuild-std=std,panic_unwind", "--target", WINE_TARGET])
        .arg(WITHOUT_BACKTRACES)
        .args([
            "--",
            "sandbox::",
            "mutants::tests",
            "workbook::tests::a_crlf",
        ])
        .arg("workbook::tests::canonical")
        // Copies that look new to cargo: std::fs::copy keeps old times on Windows.
        .arg("util::tests::a_copy")
        .arg("freshness::tests::a_changed_file")
        .env(format!("{runner_variable}LINKER"), MINGW_GCC)
        .env(format!("{runner_variable}RUNNER"), WINE)
        .env("WINEDEBUG", "-all")
        .env("WINEPREFIX", target_dir.join("wine"));
    wine
}

/// The standard library's features without `backtrace`, which would add its symbol readers
/// (`object`, `gimli`, `addr2line`) to every target's build; no check needs a symbolised
/// backtrace, and the library's interface is the same either way.
const WITHOUT_BACKTRACES: &str = "-Zbuild-std-features=panic-unwind";

fn verdict(ok: bool) -> &'static str {
    if ok { "clean" } else { "FAILED" }
}

/// Debian's cargo running `subcommand`, building into `target_dir` (apart from the host build,
/// which it would otherwise invalidate).
fn debian_cargo(workbook: &Workbook, target_dir: &Path, subcommand: &str) -> Command {
    let mut command = Command::new("/usr/bin/cargo");
    // Debian's cargo-clippy and clippy-driver before any rustup proxy of the same name.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(PathBuf::from("/usr/bin")).chain(std::env::split_paths(&path)),
    )
    .unwrap_or(path);
    command
        .arg(subcommand)
        .arg("--quiet")
        .current_dir(&workbook.root)
        .env("PATH", path)
        .env("CARGO", "/usr/bin/cargo")
        .env("RUSTC", "/usr/bin/rustc")
        .env("RUSTDOC", "/usr/bin/rustdoc")
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", target_dir)
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        // No C compiler for macOS or MSVC here: the SQLite build script then only names the
        // library to link, which a check never does.
        .env("LIBSQLITE3_SYS_USE_PKG_CONFIG", "1")
        .env("CC_x86_64_pc_windows_gnu", MINGW_GCC)
        .env("CC_x86_64_unknown_linux_musl", "musl-gcc");
    command
}

/// Adds every target, the standard library build, and clippy's `-D warnings`; one run reports
/// every crate's findings.
fn with_targets(command: &mut Command) -> &mut Command {
    command
        .args([
            "--keep-going",
            "-Zbuild-std=std,panic_abort",
            WITHOUT_BACKTRACES,
        ])
        // Cargo builds the standard library in full even for a check; only its metadata is
        // read here, so its machine code would be thrown away. (Flags given this way reach
        // only the targets' crates, not build scripts and macros, which run.)
        .env("RUSTFLAGS", "-Zno-codegen");
    for target in TARGETS {
        command.args(["--target", target]);
    }
    command.args(["--", "-D", "warnings"])
}

#[cfg(test)]
mod tests {
    use crate::curriculum::workbook::workspace_root;

    #[test]
    fn the_manifest_requires_the_rust_the_readme_names() {
        let root = workspace_root().unwrap();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let before = &readme[..readme
            .find(" or newer")
            .expect("the README names a minimum Rust")];
        let named = before.rsplit_once("Rust ").expect("`Rust X.Y or newer`").1;
        let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let required = manifest["workspace"]["package"]["rust-version"].as_str();
        assert_eq!(required, Some(named));
    }
}
