//! `cargo xtask new`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct NewArgs {}

pub fn run(_args: NewArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
