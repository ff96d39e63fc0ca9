//! `cargo xtask bench`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct BenchArgs {}

pub fn run(_args: BenchArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
