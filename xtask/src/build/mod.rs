//! Turning a graded crate into a test binary: the generated harness (or the merged crate), the
//! freshness stamp that skips cargo when nothing changed, the rustc replay when only sources did,
//! the seeded target folders, stand-alone manifests, and the launcher's fast start.

pub mod compile;
pub mod compiler_messages;
pub mod crate_copy;
#[path = "../../launcher/src/dep_info.rs"]
pub mod dep_info;
pub mod fast_path;
pub mod freshness;
pub mod harness;
pub mod manifest_toml;
pub mod merged;
pub mod rustc_replay;
pub mod target_seed;
