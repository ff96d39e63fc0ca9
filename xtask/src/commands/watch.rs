//! `cargo xtask watch`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;

/// (being written)
#[derive(Debug, Args)]
pub struct WatchArgs {}

pub fn run(_args: WatchArgs) -> Result<ExitCode> {
    bail!("not written yet")
}
