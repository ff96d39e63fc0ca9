//! `cargo xtask book`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct BookArgs {}

pub fn run(_args: BookArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
