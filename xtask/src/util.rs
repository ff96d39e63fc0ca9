//! Small helpers with no better home: a hash that stays the same across Rust releases, files
//! written only when they change, a lock on a folder, and the cargo to run.

use std::path::Path;

use anyhow::{Context, Result};

/// FNV-1a over `text`: stable across toolchains and runs (std's `DefaultHasher` is not), so
/// folder names derived from it survive a Rust update.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Writes `contents` to `path` only if it differs, so cargo sees no change when there is none.
pub fn write_if_changed(path: &Path, contents: &str) -> Result<bool> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}

/// An exclusive lock on a folder the grader rewrites (a mutant's or a suite's copy), held until
/// dropped, so two gradings at once take turns instead of overwriting each other's files.
pub struct FolderLock {
    _file: std::fs::File,
}

impl FolderLock {
    pub fn acquire(dir: &Path) -> Result<Self> {
        let (file, path) = Self::open(dir)?;
        file.lock()
            .with_context(|| format!("locking {}", path.display()))?;
        Ok(Self { _file: file })
    }

    /// Like `acquire`, but `None` at once when someone else holds the lock.
    pub fn try_acquire(dir: &Path) -> Result<Option<Self>> {
        let (file, path) = Self::open(dir)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(error)) => {
                Err(error).with_context(|| format!("locking {}", path.display()))
            }
        }
    }

    fn open(dir: &Path) -> Result<(std::fs::File, std::path::PathBuf)> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(".lock");
        let file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok((file, path))
    }
}

/// The cargo that runs this command, or the one on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

#[cfg(test)]
mod tests {
    use super::stable_hash;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash("foobar"), 0x8594_4171_f739_67e8);
    }
}
