//! The record of what was shipped: for every file of a chapter's exercise, its git blob id, in
//! `xtask/shipped/<chapter>.txt`. `reset` restores each file from git's object store by that id
//! (the learner's own commits never change what it restores), and `grade`'s tamper check compares
//! a submission's protected files with it. `verify` keeps it current.
//!
//! A blob id depends only on a file's bytes, so the record holds in a fresh clone, in a fork, and
//! in a classroom repository made from a template (whose first commit has the same blobs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::curriculum::workbook::{Chapter, Rubric, Workbook};

/// One chapter's shipped exercise: relative path → git blob id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Shipped {
    pub files: BTreeMap<String, String>,
}

impl Shipped {
    /// The record file of `chapter`.
    pub fn path(workbook: &Workbook, chapter: &Chapter) -> PathBuf {
        workbook
            .root
            .join("xtask/shipped")
            .join(format!("{}.txt", chapter.id))
    }

    /// Reads the record of `chapter`.
    pub fn load(workbook: &Workbook, chapter: &Chapter) -> Result<Self> {
        let path = Self::path(workbook, chapter);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "reading {} (the record of the shipped exercise; `cargo xtask verify {}` writes it)",
                path.display(),
                chapter.id
            )
        })?;
        let mut files = BTreeMap::new();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let Some((id, file)) = line.split_once(' ') else {
                bail!("{}: `{line}` is not `<blob id> <path>`", path.display());
            };
            files.insert(file.to_owned(), id.to_owned());
        }
        Ok(Self { files })
    }

    /// The record of the files in `dir` as they are now (build output left out).
    pub fn of_folder(dir: &Path) -> Result<Self> {
        let mut files = BTreeMap::new();
        for file in crate_files(dir)? {
            let bytes = std::fs::read(dir.join(&file))
                .with_context(|| format!("reading {}", dir.join(&file).display()))?;
            files.insert(file, blob_id(&bytes));
        }
        Ok(Self { files })
    }

    /// The record as its file holds it.
    pub fn render(&self, chapter: &Chapter) -> String {
        let mut text = format!(
            "# The shipped exercise of {}: the git blob id of each file. `cargo xtask verify` \
             writes this file;\n# `reset` restores from it and `grade` checks submissions \
             against it.\n",
            chapter.id
        );
        for (file, id) in &self.files {
            text.push_str(&format!("{id} {file}\n"));
        }
        text
    }

    /// Whether `file` of the folder `dir` is as shipped (a file that was not shipped must be absent).
    /// A checkout that turned line ends into CRLF (git's `autocrlf` on Windows) still counts.
    pub fn is_as_shipped(&self, dir: &Path, file: &str) -> bool {
        let Ok(bytes) = std::fs::read(dir.join(file)) else {
            return !self.files.contains_key(file);
        };
        let Some(shipped) = self.files.get(file) else {
            return false;
        };
        blob_id(&bytes) == *shipped
            || (bytes.contains(&b'\r') && blob_id(&without_carriage_returns(&bytes)) == *shipped)
    }
}

/// How a file of an exercise departs from the shipped exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// A shipped file that is not there.
    Missing,
    /// A file whose text is not the shipped one (or that was not shipped at all).
    Changed,
}

impl Shipped {
    /// The files a learner leaves as they were shipped: the manifest, a build script (none is
    /// shipped, so any is an addition), the rubric's given files, and with `tests` the visible
    /// tests (a learner may add their own tests; a submission is graded with the shipped ones).
    pub fn protected(&self, rubric: &Rubric, tests: bool) -> Vec<String> {
        let mut protected = vec!["Cargo.toml".to_owned(), "build.rs".to_owned()];
        protected.extend(rubric.given.iter().cloned());
        if tests {
            protected.extend(
                self.files
                    .keys()
                    .filter(|file| file.starts_with("tests/"))
                    .cloned(),
            );
        }
        protected.sort();
        protected.dedup();
        protected
    }

    /// What a learner's exercise at `dir` lacks or changed of the shipped one, by file: every
    /// shipped file that is missing, and every protected file (visible tests aside) that changed.
    pub fn departures(&self, dir: &Path, rubric: &Rubric) -> Vec<(String, Departure)> {
        let missing = self
            .files
            .keys()
            .filter(|file| !dir.join(file).is_file())
            .map(|file| (file.clone(), Departure::Missing));
        let changed = self
            .protected(rubric, false)
            .into_iter()
            .filter(|file| dir.join(file).is_file() && !self.is_as_shipped(dir, file))
            .map(|file| (file, Departure::Changed));
        missing.chain(changed).collect()
    }

    /// The shipped text of `file` of `chapter`'s exercise: the file as it is when it is as
    /// shipped, else the shipped version from git's history (the learner may have changed it).
    pub fn text(&self, workbook: &Workbook, chapter: &Chapter, file: &str) -> Result<String> {
        let dir = workbook.exercise_dir(chapter);
        let Some(id) = self.files.get(file) else {
            bail!(
                "{} is not part of the shipped {} exercise",
                file,
                chapter.id
            );
        };
        let bytes = if self.is_as_shipped(&dir, file) {
            std::fs::read(dir.join(file))
                .with_context(|| format!("reading {}", dir.join(file).display()))?
        } else {
            git_blob(&workbook.root, id, file)?
        };
        String::from_utf8(bytes).with_context(|| format!("the shipped {file} is not UTF-8"))
    }
}

/// Every file below `dir`, relative and with `/` separators, outside `target/` folders.
pub fn crate_files(dir: &Path) -> Result<Vec<String>> {
    let mut files: Vec<String> = crate::util::files_under(dir, &["target"])?
        .iter()
        .map(|path| crate::util::slash_path(path.strip_prefix(dir).expect("below dir")))
        .collect();
    files.sort();
    Ok(files)
}

/// What `restore` did.
#[derive(Debug, Default)]
pub struct Restored {
    pub rewritten: Vec<String>,
    pub removed: Vec<String>,
}

/// Puts the folder `dir` back as `shipped` records it: each changed or missing file comes from
/// git's object store (`git cat-file blob <id>` in `repo`), and files that were not shipped go.
pub fn restore(repo: &Path, dir: &Path, shipped: &Shipped) -> Result<Restored> {
    let mut restored = Restored::default();
    // Read every blob first, so a missing one changes nothing.
    let mut contents = Vec::new();
    for (file, id) in &shipped.files {
        if !shipped.is_as_shipped(dir, file) {
            contents.push((file, git_blob(repo, id, file)?));
        }
    }
    for (file, bytes) in contents {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        restored.rewritten.push(file.clone());
    }
    for file in crate_files(dir)? {
        if !shipped.files.contains_key(&file) {
            let path = dir.join(&file);
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            restored.removed.push(file);
        }
    }
    Ok(restored)
}

/// The bytes of blob `id` (the shipped `file`) from the history of the repository at `repo`.
pub fn git_blob(repo: &Path, id: &str, file: &str) -> Result<Vec<u8>> {
    let output = Command::new("git")
        .args(["cat-file", "blob", id])
        .current_dir(repo)
        .output()
        .context("running git (reset reads the shipped files from the repository's history)")?;
    if !output.status.success() || blob_id(&output.stdout) != id {
        bail!(
            "the shipped {file} (blob {id}) is not in this repository's history, so it cannot be \
             restored from it: `git fetch` the workbook's history, or copy the file from the \
             workbook's repository"
        );
    }
    Ok(output.stdout)
}

/// The bytes with every CRLF turned into LF.
fn without_carriage_returns(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (index, &byte) in bytes.iter().enumerate() {
        if byte != b'\r' || bytes.get(index + 1) != Some(&b'\n') {
            out.push(byte);
        }
    }
    out
}

/// Git's id of a file's contents: SHA-1 of `blob <length>\0<bytes>`, in hex.
pub fn blob_id(bytes: &[u8]) -> String {
    let mut data = format!("blob {}\0", bytes.len()).into_bytes();
    data.extend_from_slice(bytes);
    sha1(&data)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// SHA-1 (FIPS 180-4). Used only to name contents as git does, not for security.
fn sha1(message: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut padded = message.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&((message.len() as u64) * 8).to_be_bytes());
    for block in padded.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*word);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, next);
        }
        for (state, value) in h.iter_mut().zip([a, b, c, d, e]) {
            *state = state.wrapping_add(value);
        }
    }
    let mut digest = [0u8; 20];
    for (chunk, word) in digest.chunks_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_match_git() {
        // `git hash-object` of an empty file and of "hello\n".
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn a_crlf_checkout_is_as_shipped_and_an_edit_is_not() {
        let dir = std::env::temp_dir().join(format!("shipped-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let shipped = Shipped {
            files: [("a.rs".to_owned(), blob_id(b"fn a() {}\nfn b() {}\n"))].into(),
        };
        std::fs::write(dir.join("a.rs"), "fn a() {}\r\nfn b() {}\r\n").unwrap();
        assert!(shipped.is_as_shipped(&dir, "a.rs"));
        std::fs::write(dir.join("a.rs"), "fn a() {}\nfn b() { 1 }\n").unwrap();
        assert!(!shipped.is_as_shipped(&dir, "a.rs"));
        assert!(
            shipped.is_as_shipped(&dir, "build.rs"),
            "not shipped and absent"
        );
        std::fs::write(dir.join("build.rs"), "fn main() {}\n").unwrap();
        assert!(
            !shipped.is_as_shipped(&dir, "build.rs"),
            "not shipped, yet present"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn departures_are_missing_files_and_changed_given_ones_never_the_learners_own() {
        let dir = crate::util::scratch_dir("departures");
        let checks = crate::curriculum::workbook::workspace_root()
            .unwrap()
            .join("xtask/checks/ch08");
        let rubric = Rubric::load(&checks).unwrap();
        assert!(rubric.given.contains(&"src/stubs.rs".to_owned()));
        let files = [
            "Cargo.toml",
            "src/lib.rs",
            "src/stubs.rs",
            "tests/visible.rs",
        ];
        // Each shipped file holds its own name.
        let shipped = Shipped {
            files: files
                .iter()
                .map(|file| ((*file).to_owned(), blob_id(file.as_bytes())))
                .collect(),
        };
        for file in files {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.join(file), file).unwrap();
        }
        assert_eq!(shipped.departures(&dir, &rubric), []);
        std::fs::write(dir.join("src/lib.rs"), "my work").unwrap();
        std::fs::write(dir.join("tests/visible.rs"), "my own tests").unwrap();
        std::fs::write(dir.join("src/stubs.rs"), "an edit").unwrap();
        std::fs::remove_file(dir.join("Cargo.toml")).unwrap();
        let departures = shipped.departures(&dir, &rubric);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            departures,
            [
                ("Cargo.toml".to_owned(), Departure::Missing),
                ("src/stubs.rs".to_owned(), Departure::Changed)
            ]
        );
    }

    #[test]
    fn sha1_matches_fips_vectors_across_block_boundaries() {
        let hex = |d: [u8; 20]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }
}
