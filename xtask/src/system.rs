//! System packages the whole test suite needs beyond Rust (Chromium for the browser test of the
//! book). On a Debian machine where we are root, `ci` installs what is missing; elsewhere it says
//! what to install.

use std::io::Write;
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
    install_missing(requirements, Output::Shown)
}

/// [`ensure`] for a thread working beside other output: apt-get's lines are kept back and shown
/// only when it fails.
pub fn ensure_quietly(requirements: &[Requirement]) -> Result<()> {
    install_missing(requirements, Output::KeptBack)
}

#[derive(Clone, Copy, PartialEq)]
enum Output {
    Shown,
    KeptBack,
}

fn install_missing(requirements: &[Requirement], output: Output) -> Result<()> {
    let missing: Vec<&Requirement> = requirements
        .iter()
        .filter(|r| !Path::new(r.program).exists())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|r| r.package).collect();
    let root = crate::sandbox::running_as_root();
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
    println!(
        "Installing {} with apt-get{}…",
        packages.join(", "),
        if output == Output::KeptBack {
            " in the background"
        } else {
            ""
        }
    );
    let mut update = Command::new("apt-get");
    update.args(["update", "-qq"]);
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    let mut kept_back = Vec::new();
    for command in [&mut update, &mut install] {
        let succeeded = match output {
            Output::Shown => command.status().context("running apt-get")?.success(),
            Output::KeptBack => {
                let ran = command.output().context("running apt-get")?;
                kept_back.extend_from_slice(&ran.stdout);
                kept_back.extend_from_slice(&ran.stderr);
                ran.status.success()
            }
        };
        if !succeeded {
            bail!(
                "apt-get could not install {}{}",
                packages.join(" "),
                if kept_back.is_empty() {
                    String::new()
                } else {
                    format!(":\n{}", String::from_utf8_lossy(&kept_back))
                }
            );
        }
    }
    Ok(())
}

pub const POSTGRES: Requirement = Requirement {
    program: "/usr/bin/pg_lsclusters",
    package: "postgresql",
    why: "the PostgreSQL track of chapter 18",
};

/// The variable that points chapter 18's checks at a PostgreSQL server.
pub const POSTGRES_URL_VAR: &str = "WORKBOOK_POSTGRES_URL";

/// A PostgreSQL server for the test suite: the one `WORKBOOK_POSTGRES_URL` names, or, on a
/// Debian machine where we are root, the local cluster, started and given a `workbook` role and
/// database. `None` when neither is possible (the PostgreSQL checks then say they were skipped).
pub fn postgres_url() -> Result<Option<String>> {
    if let Ok(url) = std::env::var(POSTGRES_URL_VAR) {
        return Ok(Some(url));
    }
    if !crate::sandbox::running_as_root() {
        return Ok(None);
    }
    ensure(&[POSTGRES])?;
    let clusters = Command::new("pg_lsclusters")
        .arg("--no-header")
        .output()
        .context("running pg_lsclusters")?;
    let listing = String::from_utf8_lossy(&clusters.stdout);
    let Some(cluster) = listing.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.len() >= 4).then(|| {
            (
                fields[0].to_owned(),
                fields[1].to_owned(),
                fields[2].to_owned(),
                fields[3].to_owned(),
            )
        })
    }) else {
        bail!("PostgreSQL is installed but has no cluster (pg_createcluster creates one)");
    };
    let (version, name, port, status) = cluster;
    if status != "online" {
        let started = Command::new("pg_ctlcluster")
            .args([&version, &name, "start"])
            .status()
            .context("running pg_ctlcluster")?;
        if !started.success() {
            bail!("pg_ctlcluster {version} {name} start failed");
        }
    }
    // psql reads the script on stdin: `\gexec` works there, not with -c.
    let script = "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'workbook') \
                  THEN CREATE ROLE workbook LOGIN PASSWORD 'workbook' CREATEDB; END IF; END $$;\n\
                  SELECT 'CREATE DATABASE workbook OWNER workbook' \
                  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'workbook')\\gexec\n";
    let mut psql = Command::new("runuser")
        .args([
            "-u",
            "postgres",
            "--",
            "psql",
            "-p",
            &port,
            "-qtA",
            "-v",
            "ON_ERROR_STOP=1",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .context("running psql as postgres")?;
    psql.stdin
        .take()
        .context("psql's stdin")?
        .write_all(script.as_bytes())
        .context("writing to psql")?;
    if !psql.wait().context("waiting for psql")?.success() {
        bail!("could not prepare the workbook role and database in PostgreSQL");
    }
    Ok(Some(format!(
        "postgres://workbook:workbook@127.0.0.1:{port}/workbook"
    )))
}
