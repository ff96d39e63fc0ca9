//! Small helpers with no better home: a hash that stays the same across Rust releases, numbers
//! graded code cannot predict, files written only when they change, a lock on a folder, the one
//! walk over a folder tree and the copy of one, and the cargo to run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// FNV-1a over `text`: stable across toolchains and runs (std's `DefaultHasher` is not), so
/// folder names derived from it survive a Rust update.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A number that graded code can neither guess nor work out from earlier ones: `salt` hashed
/// with keys the standard library draws from the system's randomness (fresh keys each call). Not
/// for cryptography; enough that a run cannot tell where it stands among a grading's runs.
pub fn unpredictable(salt: u64) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(salt)
}

/// A small generator of unpredictable numbers (SplitMix64, seeded by [`unpredictable`]), for
/// orders graded code must not foresee.
pub struct Shuffler(u64);

impl Shuffler {
    pub fn unpredictable() -> Self {
        Self(unpredictable(0))
    }

    /// A generator that always gives the same numbers, for tests.
    #[cfg(test)]
    pub fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Puts `items` in a random order, each order equally likely (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            // The modulo's bias is below 2^-40 for any slice that fits in memory.
            let pick = (self.next() % (last as u64 + 1)) as usize;
            items.swap(last, pick);
        }
    }
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

/// Copies the file `from` to `to` as a file written now. `std::fs::copy` keeps the source's
/// modification time on macOS and Windows, and cargo decides by modification times: a graded file
/// that looks older than the last build in the same folder would not be compiled again, and the
/// previous build's binary would be graded instead.
pub fn copy_as_new(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    std::fs::write(to, bytes).with_context(|| format!("writing {}", to.display()))
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

/// Folders never part of what is graded: build output, version control, the grader's state.
pub const NOT_SOURCE_FOLDERS: [&str; 5] = ["target", ".git", ".workbook", "node_modules", "build"];

/// One thing [`entries_under`] found below a folder.
pub struct Entry {
    pub path: PathBuf,
    pub is_dir: bool,
}

/// Everything below `dir` (not `dir` itself), each folder's entries in name order, each folder
/// before what it holds. Symbolic links are followed (a student's folder may link to shared
/// files), but never more than 16 folders deep; folders named in `skip` are left out with all
/// they hold, and so is anything that is neither a file nor a folder (a broken link). A missing
/// `dir` holds nothing; a folder that cannot be listed is an error.
pub fn entries_under(dir: &Path, skip: &[&str]) -> Result<Vec<Entry>> {
    fn walk(dir: &Path, skip: &[&str], depth: usize, out: &mut Vec<Entry>) -> Result<()> {
        if depth > 16 || !dir.is_dir() {
            return Ok(());
        }
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if !skip.contains(&name.as_ref()) {
                    out.push(Entry {
                        path: path.clone(),
                        is_dir: true,
                    });
                    walk(&path, skip, depth + 1, out)?;
                }
            } else if path.is_file() {
                out.push(Entry {
                    path,
                    is_dir: false,
                });
            }
        }
        Ok(())
    }
    let mut entries = Vec::new();
    walk(dir, skip, 0, &mut entries)?;
    Ok(entries)
}

/// The files below `dir`, as [`entries_under`] walks it.
pub fn files_under(dir: &Path, skip: &[&str]) -> Result<Vec<PathBuf>> {
    Ok(entries_under(dir, skip)?
        .into_iter()
        .filter(|entry| !entry.is_dir)
        .map(|entry| entry.path)
        .collect())
}

/// A relative path written with `/` whatever the platform, as the grader's records name files.
pub fn slash_path(relative: &Path) -> String {
    relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Copies the folder `from` to `to`, files and subfolders (empty ones too), leaving out the
/// folders named in `skip`.
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in entries_under(from, skip)? {
        let Ok(relative) = entry.path.strip_prefix(from) else {
            continue;
        };
        let copy = to.join(relative);
        if entry.is_dir {
            std::fs::create_dir_all(&copy)
                .with_context(|| format!("creating {}", copy.display()))?;
        } else {
            std::fs::copy(&entry.path, &copy).with_context(|| {
                format!("copying {} to {}", entry.path.display(), copy.display())
            })?;
        }
    }
    Ok(())
}

/// The cargo that runs this command, or the one on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// A new empty folder of its own for one test, named after it.
#[cfg(test)]
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("workbook-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::{copy_as_new, stable_hash};

    #[test]
    fn a_copy_is_newer_than_an_old_source() {
        let dir = std::env::temp_dir().join(format!("workbook-copy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (source, copy) = (dir.join("lib.rs"), dir.join("copy.rs"));
        std::fs::write(&source, "pub fn answer() -> u32 { 42 }\n").unwrap();
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let file = std::fs::File::options().write(true).open(&source).unwrap();
        file.set_modified(long_ago).unwrap();
        drop(file);
        let before = SystemTime::now() - Duration::from_secs(60);
        copy_as_new(&source, &copy).unwrap();
        let modified = std::fs::metadata(&copy).unwrap().modified().unwrap();
        let same_text = std::fs::read(&copy).unwrap() == std::fs::read(&source).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(same_text, "the copy holds the source's bytes");
        assert!(
            modified > before,
            "the copy must look newer than any earlier build, not carry the source's time from 2001"
        );
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash("foobar"), 0x8594_4171_f739_67e8);
    }
}
