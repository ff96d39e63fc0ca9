//! `cargo xtask ci`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct CiArgs {}

pub fn run(_args: CiArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
