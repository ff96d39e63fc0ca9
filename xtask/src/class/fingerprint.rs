//! Fingerprints: short hashes of files, to tell whether a student's copy or the checks changed
//! since the last grading. They detect change; they are no defence against forgery.

use std::path::Path;

use anyhow::Result;

use crate::curriculum::workbook::{Chapter, Rubric, Workbook};

/// FNV-1a with 128 bits: stable across platforms and Rust versions, unlike `DefaultHasher`.
pub struct Fingerprint(u128);

impl Default for Fingerprint {
    fn default() -> Self {
        Self(0x6c62_272e_07bb_0142_62b8_2175_6295_c58d)
    }
}

impl Fingerprint {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        for &byte in bytes {
            self.0 ^= u128::from(byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
        // The length ends the field, so "ab"+"c" and "a"+"bc" differ.
        for byte in (bytes.len() as u64).to_le_bytes() {
            self.0 ^= u128::from(byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
        self
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        self.bytes(text.as_bytes())
    }

    /// A file's name (relative to `base`) and contents, with CRLF read as LF so a Windows
    /// checkout fingerprints like a Unix one. A missing file counts as its name alone.
    pub fn file(&mut self, base: &Path, file: &Path) -> Result<&mut Self> {
        let name = file.strip_prefix(base).unwrap_or(file);
        self.text(&name.to_string_lossy().replace('\\', "/"));
        if let Ok(contents) = std::fs::read(file) {
            let normalized: Vec<u8> = contents
                .iter()
                .enumerate()
                .filter(|&(i, &b)| !(b == b'\r' && contents.get(i + 1) == Some(&b'\n')))
                .map(|(_, &b)| b)
                .collect();
            self.bytes(&normalized);
        }
        Ok(self)
    }

    /// Every file under `dir` (sorted, build output and version control left out).
    pub fn tree(&mut self, base: &Path, dir: &Path) -> Result<&mut Self> {
        for file in crate::util::files_under(dir, &crate::util::NOT_SOURCE_FOLDERS)? {
            self.file(base, &file)?;
        }
        Ok(self)
    }

    pub fn finish(&self) -> String {
        format!("{:032x}", self.0)
    }
}

/// The checks a grade uses: for each chapter its weight, rubric and check files (public and
/// private), the mutants of a learner-tests chapter, and the shared check helpers.
pub fn checks(
    workbook: &Workbook,
    chapters: &[&Chapter],
    private: Option<&Path>,
) -> Result<String> {
    let mut hash = Fingerprint::default();
    let mut sorted: Vec<&&Chapter> = chapters.iter().collect();
    sorted.sort_by_key(|chapter| &chapter.id);
    for chapter in sorted {
        let rubric = Rubric::for_chapter(workbook, chapter, private)?;
        hash.text(&chapter.id).text(&chapter.weight.to_string());
        for dir in rubric.dirs() {
            hash.tree(&dir, &dir)?;
        }
        if rubric.learner_tests.is_some() {
            let mutants = rubric.mutants_dir(workbook, chapter);
            hash.tree(&mutants, &mutants)?;
        }
    }
    let support = workbook.root.join("xtask/checks");
    hash.file(&support, &support.join("support.rs"))?;
    Ok(hash.finish())
}

/// What grading a student's copy reads: the workspace manifest and lockfile, and the exercise
/// folder of every graded chapter.
pub fn copy(dir: &Path, chapters: &[&Chapter]) -> Result<String> {
    let mut hash = Fingerprint::default();
    for file in ["Cargo.toml", "Cargo.lock"] {
        hash.file(dir, &dir.join(file))?;
    }
    for chapter in chapters {
        hash.text(&chapter.stem());
        hash.tree(dir, &dir.join("exercises").join(chapter.stem()))?;
    }
    Ok(hash.finish())
}

/// A short form for people: the first 12 hex digits.
pub fn short(fingerprint: &str) -> &str {
    &fingerprint[..fingerprint.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::Fingerprint;

    #[test]
    fn fields_are_delimited_and_stable() {
        let ab_c = Fingerprint::default().text("ab").text("c").finish();
        let a_bc = Fingerprint::default().text("a").text("bc").finish();
        assert_ne!(ab_c, a_bc);
        assert_eq!(ab_c, Fingerprint::default().text("ab").text("c").finish());
        assert_eq!(ab_c.len(), 32);
    }
}
