//! System packages the whole test suite needs beyond Rust (Chromium for the browser test of the
//! book). On a Debian machine where we are root, `ci` installs what is missing; elsewhere it says
//! what to install.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// A program and the Debian package that provides it.
pub struct Requirement {
    pub program: &'static str,
    pub package: &'static str,
    pub why: &'static str,
}

pub const CHROMIUM: Requirement = Requirement {
    program: "/usr/bin/chromium",
    package: "chromium",
    why: "the browser test of the book",
};

/// Makes sure every requirement is present, installing missing ones with apt-get when possible.
pub fn ensure(requirements: &[Requirement]) -> Result<()> {
    let missing: Vec<&Requirement> = requirements
        .iter()
        .filter(|r| !Path::new(r.program).exists())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|r| r.package).collect();
    // SAFETY: geteuid only reads the process's user id.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || !Path::new("/usr/bin/apt-get").exists() {
        let needs: Vec<String> = missing
            .iter()
            .map(|r| format!("{} (for {})", r.package, r.why))
            .collect();
        bail!(
            "missing system packages: {}; on Debian or Ubuntu: sudo apt-get install {}",
            needs.join(", "),
            packages.join(" ")
        );
    }
    println!("Installing {} with apt-get…", packages.join(", "));
    let updated = Command::new("apt-get")
        .args(["update", "-qq"])
        .status()
        .context("running apt-get update")?;
    let installed = Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&packages)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .context("running apt-get install")?;
    if !updated.success() || !installed.success() {
        bail!("apt-get could not install {}", packages.join(" "));
    }
    Ok(())
}
