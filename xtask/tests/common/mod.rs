//! Helpers shared by the grader's integration tests (each test file is its own binary and uses
//! part of them).
#![allow(dead_code, reason = "each test binary uses only some of the helpers")]

use std::path::{Path, PathBuf};

/// The workspace root: the folder above the xtask crate.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Whether process `pid` has ended. A zombie has ended; only its exit status is left for a
/// parent to collect.
pub fn process_is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}
