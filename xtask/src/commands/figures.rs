//! `cargo xtask figures`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct FiguresArgs {}

pub fn run(_args: FiguresArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
