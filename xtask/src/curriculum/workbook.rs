//! The workbook's manifest (`xtask/workbook.toml`) and each chapter's rubric
//! (`xtask/checks/<id>/chapter.toml`), loaded and validated.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::lang::words::{Key, t, tf};

/// The manifest's path, relative to the workspace root.
pub const MANIFEST: &str = "xtask/workbook.toml";

/// The workbook: where it lives and its chapters in reading order.
#[derive(Debug)]
pub struct Workbook {
    pub root: PathBuf,
    pub parts: Vec<Part>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    part: Vec<Part>,
}

/// A part of the book: a title and its chapters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub title: String,
    pub chapters: Vec<Chapter>,
}

/// One chapter, as the manifest lists it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    pub id: String,
    pub slug: String,
    pub title: String,
    /// False for a chapter that is planned but not written yet.
    pub ready: bool,
    /// The chapter's weight in a whole-workbook grade (default 1).
    #[serde(default = "one")]
    pub weight: u32,
}

fn one() -> u32 {
    1
}

impl Chapter {
    /// The path stem shared by the page, the exercise and the solution: `ch08-full-jitter`.
    pub fn stem(&self) -> String {
        format!("{}-{}", self.id, self.slug)
    }

    /// The exercise's package name: `ch08_full_jitter`.
    pub fn crate_name(&self) -> String {
        self.stem().replace('-', "_")
    }

    /// The solution's package name: `ch08_full_jitter_solution`.
    pub fn solution_crate_name(&self) -> String {
        format!("{}_solution", self.crate_name())
    }

    /// The chapter's number, for section labels: 8 for `ch08`.
    pub fn number(&self) -> u32 {
        self.id[2..].parse().unwrap_or(0)
    }
}

impl fmt::Display for Chapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} · {}", self.id, self.title)
    }
}

impl Workbook {
    /// Loads the manifest of the workspace this command runs in (see [`workspace_root`]).
    pub fn load() -> Result<Self> {
        Self::load_from(workspace_root()?)
    }

    /// Loads the manifest of the workspace at `root`.
    pub fn load_from(root: PathBuf) -> Result<Self> {
        let path = root.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let file: ManifestFile = toml::from_str(&text)
            .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        let workbook = Self {
            root,
            parts: file.part,
        };
        workbook.validate()?;
        Ok(workbook)
    }

    fn validate(&self) -> Result<()> {
        let mut seen = BTreeSet::new();
        let mut previous = 0;
        for chapter in self.chapters() {
            let well_formed = chapter.id.len() == 4
                && chapter.id.starts_with("ch")
                && chapter.id[2..].bytes().all(|b| b.is_ascii_digit());
            if !well_formed {
                bail!(
                    "{MANIFEST}: chapter id `{}` must look like `ch08`",
                    chapter.id
                );
            }
            let slug_ok = !chapter.slug.is_empty()
                && chapter
                    .slug
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !slug_ok {
                bail!(
                    "{MANIFEST}: the slug of {} (`{}`) may hold only a-z, 0-9 and `-`",
                    chapter.id,
                    chapter.slug
                );
            }
            if !seen.insert(chapter.id.clone()) {
                bail!("{MANIFEST}: chapter {} is listed twice", chapter.id);
            }
            if chapter.number() <= previous {
                bail!(
                    "{MANIFEST}: {} is out of order (chapters go in increasing order)",
                    chapter.id
                );
            }
            previous = chapter.number();
        }
        Ok(())
    }

    /// Every chapter, in reading order.
    pub fn chapters(&self) -> impl Iterator<Item = &Chapter> {
        self.parts.iter().flat_map(|part| &part.chapters)
    }

    /// The chapters that are written and graded.
    pub fn ready_chapters(&self) -> impl Iterator<Item = &Chapter> {
        self.chapters().filter(|chapter| chapter.ready)
    }

    /// The chapters named by `ids`, or every ready chapter when there are none.
    pub fn ready_chapters_or(&self, ids: &[String]) -> Result<Vec<&Chapter>> {
        if ids.is_empty() {
            return Ok(self.ready_chapters().collect());
        }
        ids.iter().map(|id| self.ready_chapter(id)).collect()
    }

    /// A chapter by any name a learner may give it, ready or not: its id (`ch08`, `8`, `08`),
    /// its folder (`ch08-full-jitter`, also as a path such as `exercises/ch08-full-jitter/`) or
    /// its slug (`full-jitter`). An unknown name gets the nearest chapter as a suggestion.
    pub fn chapter(&self, wanted: &str) -> Result<&Chapter> {
        let name = chapter_name(wanted);
        let id = normalize_id(&name);
        self.chapters()
            .find(|chapter| chapter.id == id || chapter.stem() == name || chapter.slug == name)
            .with_context(|| self.unknown_chapter(wanted, &name))
    }

    /// What to say of a chapter name that names none: the nearest chapter, or all of them.
    fn unknown_chapter(&self, wanted: &str, name: &str) -> String {
        if chapter_number(name).is_some() {
            // A number is no typo of a nearby one (ch97 of ch07): say which numbers there are.
            let ids: Vec<&str> = self.chapters().map(|c| c.id.as_str()).collect();
            return tf(
                Key::NoChapterNumber,
                &[
                    &wanted,
                    ids.first().unwrap_or(&""),
                    ids.last().unwrap_or(&""),
                ],
            );
        }
        let distance = |chapter: &Chapter| {
            [chapter.id.clone(), chapter.slug.clone(), chapter.stem()]
                .iter()
                .map(|known| strsim::damerau_levenshtein(name, known))
                .min()
                .unwrap_or(usize::MAX)
        };
        // A name a third wrong (two edits at least) is a typo; further off, it names nothing.
        let nearest = self
            .chapters()
            .min_by_key(|chapter| distance(chapter))
            .filter(|chapter| distance(chapter) <= (name.chars().count() / 3).max(2));
        // Each chapter named with its title in the learner's language, as `list` names it.
        let po = crate::report::book_lang::book_po(self);
        let named = |chapter: &Chapter| {
            let title = po.translation(&chapter.title).unwrap_or(&chapter.title);
            format!("{} · {title}", chapter.id)
        };
        match nearest {
            Some(chapter) => tf(
                Key::NoChapterDidYouMean,
                &[&wanted, &named(chapter), &chapter.stem()],
            ),
            None => {
                let known: Vec<String> =
                    self.chapters().map(|c| format!("  {}", named(c))).collect();
                tf(Key::NoChapterNameOne, &[&wanted, &known.join("\n")])
            }
        }
    }

    /// A chapter that can be graded: it must be ready, or be a draft whose exercise an author
    /// has started writing.
    pub fn ready_chapter(&self, wanted: &str) -> Result<&Chapter> {
        let chapter = self.chapter(wanted)?;
        if !chapter.ready && !self.exercise_dir(chapter).is_dir() {
            bail!("{}", tf(Key::ChapterNotWritten, &[chapter, &MANIFEST]));
        }
        Ok(chapter)
    }

    pub fn exercise_dir(&self, chapter: &Chapter) -> PathBuf {
        self.root.join("exercises").join(chapter.stem())
    }

    pub fn solution_dir(&self, chapter: &Chapter) -> PathBuf {
        self.root.join("solutions").join(chapter.stem())
    }

    pub fn page(&self, chapter: &Chapter) -> PathBuf {
        self.root
            .join("book")
            .join("src")
            .join(format!("{}.md", chapter.stem()))
    }

    /// The folder of the chapter's public checks.
    pub fn checks_dir(&self, chapter: &Chapter) -> PathBuf {
        self.root.join("xtask").join("checks").join(&chapter.id)
    }

    /// `xtask/checks/support.rs`: helpers every chapter's checks share, `skip` among them.
    pub fn support_file(&self) -> PathBuf {
        self.root.join("xtask").join("checks").join("support.rs")
    }

    pub fn mutants_dir(&self, chapter: &Chapter) -> PathBuf {
        self.root.join("xtask").join("mutants").join(&chapter.id)
    }

    /// Cargo's target folder: `CARGO_TARGET_DIR` when set (relative to the current directory,
    /// as cargo reads it); else the one this grader was built in (`<target>/debug/xtask`, which
    /// also follows a `build.target-dir` in cargo's configuration); else `target/` at the root.
    pub fn target_dir(&self) -> PathBuf {
        target_dir_of(&self.root)
    }

    /// Where the grader keeps its generated crates and scratch files: one folder per copy of the
    /// workbook (`target/workbook/<folder>-<hash of the root>`), so copies that share a target
    /// folder never share a harness, a mutant or a scratch file.
    pub fn work_dir(&self) -> PathBuf {
        work_dir_of(&self.root)
    }
}

/// [`Workbook::target_dir`] of the workbook at `root`, without reading its manifest.
pub fn target_dir_of(root: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        return std::env::current_dir()
            .map(|cwd| cwd.join(&dir))
            .unwrap_or_else(|_| root.join(dir));
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .filter(|dir| dir.join("CACHEDIR.TAG").is_file())
        .unwrap_or_else(|| root.join("target"))
}

/// [`Workbook::work_dir`] of the workbook at `root`, without reading its manifest.
pub fn work_dir_of(root: &Path) -> PathBuf {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target_dir_of(root).join("workbook").join(format!(
        "{name}-{:08x}",
        crate::util::stable_hash(&root.display().to_string()) as u32
    ))
}

/// The chapter name in `wanted`, lower case: the last part of a path (`exercises/ch08-full-jitter/`
/// names `ch08-full-jitter`, as a shell's completion writes it).
fn chapter_name(wanted: &str) -> String {
    let lower = wanted.trim().to_ascii_lowercase();
    let trimmed = lower.trim_end_matches(['/', '\\']);
    trimmed
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(trimmed)
        .to_owned()
}

/// `8`, `08`, `ch8` and `CH08` all mean `ch08`.
pub fn normalize_id(wanted: &str) -> String {
    let lower = wanted.trim().to_ascii_lowercase();
    match chapter_number(&lower) {
        Some(number) => format!("ch{number:02}"),
        None => lower,
    }
}

/// The number a chapter name in lower case gives: 8 for `8`, `08`, `ch8` and `ch08`.
fn chapter_number(name: &str) -> Option<u32> {
    name.strip_prefix("ch").unwrap_or(name).parse().ok()
}

/// The workspace this command grades, found when it runs (never fixed when it was built: two
/// copies of the workbook that share one target folder share one grader binary).
///
/// The closest folder at or above the current directory that holds `xtask/workbook.toml`; else
/// the workspace of the package cargo ran (`CARGO_MANIFEST_DIR`, which `cargo run` sets).
pub fn workspace_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let from_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .and_then(|dir| dir.parent().map(Path::to_path_buf));
    cwd.ancestors()
        .map(Path::to_path_buf)
        .chain(from_cargo)
        .find(|dir| dir.join(MANIFEST).is_file())
        .map(|dir| canonical(&dir).unwrap_or(dir))
        .with_context(|| tf(Key::NotInWorkbook, &[&cwd.display(), &MANIFEST]))
}

/// A chapter's rubric: its checks, hints and given files.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Rubric {
    /// Files the exercise provides ready-made; identical in the exercise and the solution.
    #[serde(default)]
    pub given: Vec<String>,
    /// Workspace dependencies the checks use beyond the graded crate's own.
    #[serde(default)]
    pub check_dependencies: Vec<String>,
    #[serde(default)]
    pub hints: Vec<String>,
    #[serde(default, rename = "check")]
    pub checks: Vec<CheckSpec>,
    /// In an instructor's private rubric: keep the public checks and add these to them, instead
    /// of replacing them.
    #[serde(default)]
    pub include_public: bool,
    /// Set when the learner writes the tests: the grader then runs the learner's suite against
    /// the shipped code and against every mutant, and the checks are derived from the mutants.
    pub learner_tests: Option<LearnerTests>,
    /// The folder the rubric was read from: its `.rs` files are the checks.
    #[serde(skip)]
    pub dir: PathBuf,
    /// The public checks folder, when a private rubric includes it.
    #[serde(skip)]
    pub public_dir: Option<PathBuf>,
}

/// How a chapter whose exercise is a test suite is graded.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LearnerTests {
    /// The files of the code under test, restored from the shipped exercise before grading, so
    /// the suite always meets the real code (and the mutants edit exactly these files).
    pub under_test: Vec<String>,
    /// The real time the suite may take on the correct code (virtual time makes it fast).
    #[serde(default = "default_suite_ms")]
    pub max_suite_ms: u64,
    /// The file the learner writes the tests in (it ships without tests).
    #[serde(default = "default_suite_file")]
    pub suite: String,
    /// Rewrites of the code under test that behave exactly like it but read differently
    /// (comments, names, layout), as mutant files beside the rubric: the suite must pass on each
    /// of them too, so a test that pins the text of the code, not what it does, earns nothing.
    #[serde(default)]
    pub rewrites: Vec<String>,
}

fn default_suite_file() -> String {
    "src/suite.rs".to_owned()
}

impl Rubric {
    /// The file the learner edits: the suite of a learner-tests chapter, else `src/lib.rs`.
    pub fn learner_file(&self) -> &str {
        self.learner_tests
            .as_ref()
            .map_or("src/lib.rs", |spec| spec.suite.as_str())
    }
}

fn default_suite_ms() -> u64 {
    1_000
}

/// Check ids of a learner-tests chapter.
pub const SUITE_GREEN: &str = "suite.passes_on_correct_code";
pub const SUITE_FAST: &str = "suite.runs_on_virtual_time";

/// The id of the check that a learner's suite kills `mutant`.
pub fn kill_check_id(mutant: &str) -> String {
    format!("kills.{mutant}")
}

/// One hidden check of a rubric.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckSpec {
    /// `<file stem>.<test fn>`, e.g. `jitter.not_deterministic`.
    pub id: String,
    pub points: u32,
    /// The rule the check enforces, as the learner reads it.
    pub title: String,
    /// The book section that explains the rule, e.g. `8.3`.
    pub section: Option<String>,
    /// Real time the check may take before it is stopped.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Address space the check's process may use.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
}

fn default_timeout_ms() -> u64 {
    2_000
}

fn default_memory_mb() -> u64 {
    1_024
}

impl CheckSpec {
    /// The test's path in the check binary: `jitter::not_deterministic`.
    pub fn test_name(&self) -> String {
        self.id.replace('.', "::")
    }
}

/// The rubric's file name inside a checks folder.
pub const RUBRIC: &str = "chapter.toml";

impl Rubric {
    /// Reads `<dir>/chapter.toml` and checks that it is coherent.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(RUBRIC);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut rubric: Rubric = toml::from_str(&text)
            .map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        rubric.dir = dir.to_path_buf();
        let mut seen = BTreeSet::new();
        for check in &rubric.checks {
            let parts: Vec<&str> = check.id.split('.').collect();
            let valid = parts.len() == 2
                && parts.iter().all(|p| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            if !valid {
                bail!(
                    "{}: check id `{}` must be `<file stem>.<test fn>`, e.g. `jitter.not_deterministic`",
                    path.display(),
                    check.id
                );
            }
            if rubric.learner_tests.is_none() && !dir.join(format!("{}.rs", parts[0])).is_file() {
                bail!(
                    "{}: check `{}` names {}.rs, which is not in {}",
                    path.display(),
                    check.id,
                    parts[0],
                    dir.display()
                );
            }
            if !seen.insert(check.id.as_str()) {
                bail!("{}: check `{}` is listed twice", path.display(), check.id);
            }
        }
        if rubric.checks.is_empty() && rubric.learner_tests.is_none() {
            bail!("{}: a chapter needs at least one [[check]]", path.display());
        }
        Ok(rubric)
    }

    /// A chapter's rubric: the public one, or an instructor's private one from
    /// `<private>/<chapter>/`, which replaces the public checks or, with `include-public = true`,
    /// adds to them (in English: `translation::learners_rubric` gives the learner's language).
    pub fn for_chapter(
        workbook: &Workbook,
        chapter: &Chapter,
        private: Option<&Path>,
    ) -> Result<Self> {
        let mut rubric = Self::load_for(workbook, chapter, private)?;
        if let Some(learner_tests) = &rubric.learner_tests {
            rubric.checks = suite_checks(learner_tests, &rubric.mutants_dir(workbook, chapter))?;
        }
        Ok(rubric)
    }

    /// Where a learner-tests chapter's mutants are: `mutants/` beside a private rubric, else
    /// the chapter's public mutants folder.
    pub fn mutants_dir(&self, workbook: &Workbook, chapter: &Chapter) -> PathBuf {
        let private = self.dir.join("mutants");
        if self.public_dir.is_none() && private.is_dir() {
            private
        } else {
            workbook.mutants_dir(chapter)
        }
    }

    fn load_for(workbook: &Workbook, chapter: &Chapter, private: Option<&Path>) -> Result<Self> {
        let public = workbook.checks_dir(chapter);
        let Some(private) = private else {
            return Self::load(&public);
        };
        let dir = private.join(&chapter.id);
        let dir = canonical(&dir).with_context(|| {
            format!("the private checks folder {} does not exist", dir.display())
        })?;
        let mut rubric = Self::load(&dir)?;
        if rubric.include_public {
            let base = Self::load(&public)?;
            let private_ids: BTreeSet<&str> = rubric.checks.iter().map(|c| c.id.as_str()).collect();
            if let Some(clash) = base
                .checks
                .iter()
                .find(|c| private_ids.contains(c.id.as_str()))
            {
                bail!(
                    "{}: check `{}` is also a public check of {}",
                    dir.display(),
                    clash.id,
                    chapter.id
                );
            }
            let mut checks = base.checks;
            checks.append(&mut rubric.checks);
            rubric.checks = checks;
            if rubric.hints.is_empty() {
                rubric.hints = base.hints;
            }
            rubric.given.extend(base.given);
            rubric.public_dir = Some(public);
        }
        Ok(rubric)
    }

    /// The folders whose `.rs` files are the checks.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.public_dir.iter().chain([&self.dir]).cloned().collect()
    }

    /// The check files of every folder of the rubric, public ones first; two files of one name
    /// would be one module, so that is an error.
    pub fn check_files(&self) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        let mut stems = BTreeSet::new();
        for dir in self.dirs() {
            for file in rust_files(&dir)? {
                let stem = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !stems.insert(stem.clone()) {
                    bail!(
                        "{}: {stem}.rs is also a public check file; rename one of them",
                        dir.display()
                    );
                }
                files.push(file);
            }
        }
        Ok(files)
    }

    pub fn max_points(&self) -> u32 {
        self.checks.iter().map(|check| check.points).sum()
    }
}

/// `path` made absolute with every link resolved, in the form cargo and rustc print: without
/// the `\\?\` prefix Windows' canonical paths carry, which no other path of the workbook has.
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let resolved = path.canonicalize()?;
    let plain = resolved
        .to_str()
        .and_then(|text| text.strip_prefix(r"\\?\"))
        .filter(|rest| rest.as_bytes().get(1) == Some(&b':'))
        .map(PathBuf::from);
    Ok(plain.unwrap_or(resolved))
}

/// A file's contents, with Windows line endings read as Unix ones when it is text, so a
/// checkout made with `core.autocrlf` compares equal to the files the workbook ships.
pub fn read_text_lf(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text.replace("\r\n", "\n").into_bytes(),
        Err(binary) => binary.into_bytes(),
    })
}

/// The `.rs` files directly inside `dir`, sorted by name.
pub fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if !dir.is_dir() {
        return Ok(files);
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "rs") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The checks of a learner-tests chapter: the suite passes on the correct code, runs fast, and
/// kills each mutant (worth the mutant's points).
fn suite_checks(spec: &LearnerTests, mutants_dir: &Path) -> Result<Vec<CheckSpec>> {
    let check = |id: String, points: u32, title: String, section: Option<String>| CheckSpec {
        id,
        points,
        title,
        section,
        timeout_ms: default_timeout_ms(),
        memory_mb: default_memory_mb(),
    };
    let mut checks = vec![
        check(
            SUITE_GREEN.to_owned(),
            0,
            t(Key::SuitePassesOnCorrectCode).to_owned(),
            None,
        ),
        check(
            SUITE_FAST.to_owned(),
            0,
            tf(Key::SuiteRunsOnVirtualTime, &[&spec.max_suite_ms]),
            None,
        ),
    ];
    for mutant in crate::curriculum::mutants::load_all(mutants_dir)? {
        checks.push(check(
            kill_check_id(&mutant.name),
            mutant.points,
            tf(Key::CatchesHiddenBug, &[&mutant.description]),
            mutant.section.clone(),
        ));
    }
    Ok(checks)
}

/// A path relative to the workspace when it is inside it.
pub fn display_path(workbook: &Workbook, path: &Path) -> String {
    path.strip_prefix(&workbook.root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::scratch_dir as scratch;

    #[test]
    fn a_crlf_checkout_reads_like_the_shipped_file() {
        let dir = scratch("crlf");
        std::fs::write(dir.join("unix.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        std::fs::write(dir.join("windows.rs"), "fn a() {}\r\nfn b() {}\r\n").unwrap();
        std::fs::write(dir.join("changed.rs"), "fn a() {}\r\nfn c() {}\r\n").unwrap();
        let read = |name: &str| read_text_lf(&dir.join(name)).unwrap();
        assert_eq!(read("unix.rs"), read("windows.rs"));
        assert_ne!(read("unix.rs"), read("changed.rs"));
    }

    #[test]
    fn canonical_paths_compare_with_the_workspace_root() {
        let workspace = workspace_root().unwrap();
        let root = canonical(&workspace).unwrap();
        let xtask = canonical(&workspace.join("xtask")).unwrap();
        assert!(
            xtask.starts_with(&root),
            "{} {}",
            xtask.display(),
            root.display()
        );
        assert!(!root.display().to_string().starts_with(r"\\?\"));
    }

    #[test]
    fn chapter_ids_are_normalized() {
        for wanted in ["8", "08", "ch8", "CH08", " ch08 "] {
            assert_eq!(normalize_id(wanted), "ch08");
        }
    }

    #[test]
    fn a_chapter_is_found_by_id_number_folder_or_slug() {
        let workbook = Workbook::load().unwrap();
        for name in [
            "ch08",
            "8",
            "08",
            "ch08-full-jitter",
            "full-jitter",
            "Full-Jitter",
            "exercises/ch08-full-jitter/",
        ] {
            assert_eq!(workbook.chapter(name).unwrap().id, "ch08", "{name}");
        }
    }

    #[test]
    fn an_unknown_chapter_gets_the_nearest_with_its_title() {
        let workbook = Workbook::load().unwrap();
        let error = |name: &str| workbook.chapter(name).unwrap_err().to_string();
        for typo in ["full-jiter", "ch08-full-jiter", "ful-jitter"] {
            assert!(
                error(typo).contains("did you mean ch08 · Full jitter"),
                "{}",
                error(typo)
            );
        }
        assert!(
            error("ch97").contains("they go from ch01 to ch"),
            "{}",
            error("ch97")
        );
        let far = error("banana");
        assert!(!far.contains("did you mean"), "{far}");
        assert!(far.contains("ch08 · Full jitter"), "{far}");
    }

    #[test]
    fn names_derive_from_the_stem() {
        let chapter = Chapter {
            id: "ch08".into(),
            slug: "full-jitter".into(),
            title: "Full jitter".into(),
            ready: true,
            weight: 1,
        };
        assert_eq!(chapter.stem(), "ch08-full-jitter");
        assert_eq!(chapter.crate_name(), "ch08_full_jitter");
        assert_eq!(chapter.solution_crate_name(), "ch08_full_jitter_solution");
    }

    #[test]
    fn the_repository_manifest_loads() {
        let workbook = Workbook::load().expect("xtask/workbook.toml loads");
        assert!(workbook.ready_chapters().count() >= 20);
        assert_eq!(workbook.chapter("22").unwrap().slug, "saga-retries");
    }
}
