//! Tools from crates.io that some commands need (mdBook for the book, rustlings for the
//! benchmark's comparison): one on `PATH` at the right version, or ours in a folder under the
//! target folder, installed with `cargo install` the first time it is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::curriculum::workbook::Workbook;

/// A binary crate the workbook installs on demand, at one version.
pub struct Tool {
    /// The crate's name, which is also its binary's.
    pub name: &'static str,
    pub version: &'static str,
    /// How long the first install takes, for the message that announces it.
    pub install_time: &'static str,
    /// The crate features to build with, in place of its defaults (empty: the defaults).
    pub features: &'static [&'static str],
    /// The folder under the target folder it is installed into.
    pub folder: &'static str,
    /// Installed as a release build; else unoptimised and without debug information, which
    /// halves the install and slows the tool: right for a tool that waits on nothing heavy.
    pub optimized: bool,
}

impl Tool {
    /// The tool's binary, installed into `target/tools/` if no binary at its version is found.
    pub fn ensure(&self, workbook: &Workbook) -> Result<PathBuf> {
        let tools = workbook.target_dir().join(self.folder);
        let ours = tools.join("bin").join(self.name);
        if self.reports_version(&ours) {
            return Ok(ours);
        }
        if self.reports_version(Path::new(self.name)) {
            return Ok(PathBuf::from(self.name));
        }
        println!(
            "Installing {} {} into {} (once; {})…",
            self.name,
            self.version,
            tools.display(),
            self.install_time
        );
        let mut install = Command::new(crate::util::cargo());
        install
            .args(["install", self.name, "--locked", "--quiet", "--version"])
            .arg(self.version)
            .arg("--root")
            .arg(&tools);
        if !self.optimized {
            install.arg("--debug").env("CARGO_PROFILE_DEV_DEBUG", "0");
        }
        if !self.features.is_empty() {
            install
                .arg("--no-default-features")
                .arg("--features")
                .arg(self.features.join(","));
        }
        let status = install
            .status()
            .with_context(|| format!("running cargo install {}", self.name))?;
        if !status.success() || !self.reports_version(&ours) {
            bail!(
                "installing {} failed; `cargo install {} --version {}` by hand may say why",
                self.name,
                self.name,
                self.version
            );
        }
        Ok(ours)
    }

    /// True when `binary --version` runs and names exactly this version (`mdbook v0.5.4`,
    /// `rustlings 6.5.0`: the last word; 0.5.40 is another version).
    fn reports_version(&self, binary: &Path) -> bool {
        Command::new(binary)
            .arg("--version")
            .output()
            .is_ok_and(|output| {
                String::from_utf8_lossy(&output.stdout)
                    .split_whitespace()
                    .last()
                    .is_some_and(|word| word.trim_start_matches('v') == self.version)
            })
    }
}

/// The mdBook release the book is written for, with what `mdbook build` needs (search) and
/// nothing more: the server and the file watcher would double its first install. Unoptimised:
/// on two cores it installs in 40 s instead of 105 s, and builds the book in 3.5 s instead of
/// 1.2 s.
pub const MDBOOK: Tool = Tool {
    name: "mdbook",
    version: "0.5.4",
    install_time: "under a minute",
    features: &["search"],
    folder: "tools",
    optimized: false,
};

/// Builds the book quietly (for verify); true when it built.
pub fn builds(workbook: &Workbook) -> Result<bool> {
    let mdbook = ensure_mdbook(workbook)?;
    let output = Command::new(&mdbook)
        .arg("build")
        .arg(workbook.root.join("book"))
        .output()
        .with_context(|| format!("running {}", mdbook.display()))?;
    if !output.status.success() {
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output.status.success())
}

/// The mdbook binary: one on PATH at the right version, or ours in the target folder's tools/,
/// installed if it is not there yet.
pub fn ensure_mdbook(workbook: &Workbook) -> Result<PathBuf> {
    MDBOOK.ensure(workbook)
}
