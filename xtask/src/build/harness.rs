//! The check harness: a crate generated under `target/workbook/harness/` whose one test binary
//! holds a chapter's hidden checks and the exercise's visible tests, compiled against the graded
//! crate under the fixed name `exercise`. It shares the workspace's target folder, so
//! dependencies compile once for every chapter and every graded crate.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::build::freshness;
use crate::build::manifest_toml::{self, CrateManifest};
use crate::build::merged;
use crate::build::rustc_replay;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, rust_files};
use crate::report::model::{CompileError, CompileFailure};
use crate::status::{self, Activity, Mode};
use crate::util::stable_hash;
use crate::util::write_if_changed;

/// The module that holds the visible tests inside the harness.
pub const VISIBLE_MODULE: &str = "visible_tests";

/// The crate being graded.
#[derive(Debug, Clone)]
pub struct Graded {
    pub dir: PathBuf,
    pub package: String,
    /// How a report names it: "your exercise", "the solution", "mutant equal_jitter", a path.
    pub label: String,
    /// Whose harness folder it builds in: its own, or the solution's for a mutant.
    pub harness: HarnessOwner,
    /// The folder of the visible tests to run beside the checks: the graded crate's own `tests/`,
    /// or the exercise's for the solution and the mutants, which ship none.
    pub visible_tests: PathBuf,
    /// The copy of its `src/` that a merged harness compiles (see [`Prepared::copy`]): a path
    /// into the copy in a message is a path into the crate.
    pub copy: Option<PathBuf>,
}

/// The crate a harness folder belongs to. Gradings with the same owner build there one after
/// another, each an edit of the last: `verify` grades the solution and then every mutant in the
/// solution's harness, which stays warm, where a harness of the mutants' own would start cold
/// once per chapter.
#[derive(Debug, Clone)]
pub struct HarnessOwner {
    /// A short name for the folder: `exercise`, `solution`, `path`, `examples`, `suite`.
    pub kind: &'static str,
    pub dir: PathBuf,
}

impl Graded {
    pub fn at(dir: &Path, label: String, kind: &'static str) -> Result<Self> {
        let dir = crate::curriculum::workbook::canonical(dir)
            .with_context(|| format!("{} does not exist", dir.display()))?;
        let package = CrateManifest::read(&dir)?.package_name()?;
        Ok(Self {
            visible_tests: dir.join("tests"),
            harness: HarnessOwner {
                kind,
                dir: dir.clone(),
            },
            dir,
            package,
            label,
            copy: None,
        })
    }

    /// The same crate, built in `owner`'s harness folder instead of one of its own.
    pub fn in_harness_of(mut self, owner: &Graded) -> Self {
        self.harness = owner.harness.clone();
        self
    }

    /// The same crate, compiled from the copy of its `src/` at `copy` (when there is one).
    pub fn compiled_from(mut self, copy: Option<PathBuf>) -> Self {
        self.copy = copy;
        self
    }

    /// The same crate, run with the visible tests of `exercise_dir`.
    pub fn with_visible_tests_of(mut self, exercise_dir: &Path) -> Self {
        self.visible_tests = exercise_dir.join("tests");
        self
    }
}

/// A compiled harness, ready to run.
#[derive(Debug)]
pub struct Built {
    pub test_binary: PathBuf,
    /// Every test the binary holds.
    pub tests: Vec<String>,
    pub compile_time: Duration,
    /// True when the last build was reused without running cargo.
    pub reused: bool,
    /// True when rustc compiled it without cargo (see `rustc_replay`).
    pub replayed: bool,
}

/// How a harness holds the graded crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One crate: a copy of the graded crate's sources with the checks appended to its root
    /// (see `merged`), or `Separate` when the merge cannot hold the crate.
    MergedWherePossible,
    /// The graded crate as a dependency of a crate of checks.
    Separate,
}

/// The module a merged harness puts the checks in, at the graded crate's root: their one name
/// there.
pub const MERGED_MODULE: &str = "workbook_checks";

/// A harness written out, ready to build.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub dir: PathBuf,
    /// Where the graded crate's `src/` is copied, when the harness holds the crate (merged).
    pub copy: Option<PathBuf>,
    /// What the test binary puts before a check's test name: `workbook_checks::` when merged.
    pub test_prefix: String,
}

impl Prepared {
    /// The name in the test binary of the test a rubric calls `name`.
    pub fn binary_name(&self, name: &str) -> String {
        format!("{}{name}", self.test_prefix)
    }

    /// The name a rubric gives the test the binary calls `name`; None for a test the harness did
    /// not add (a merged harness also holds the graded crate's own unit tests, never run).
    pub fn rubric_name<'n>(&self, name: &'n str) -> Option<&'n str> {
        name.strip_prefix(&self.test_prefix)
    }
}

/// One module the harness adds, and the file it is read from.
struct AddedModule {
    name: String,
    file: PathBuf,
}

/// Writes the harness crate for `chapter` graded on `graded` with the checks of `rubric`.
pub fn prepare(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    graded: &Graded,
    layout: Layout,
) -> Result<Prepared> {
    let key = harness_key(chapter, rubric, graded);
    let harness_dir = workbook.work_dir().join("harness");
    let dir = harness_dir.join(&key);
    let copy = harness_dir.join(format!("{key}.src"));
    let checks = added_modules(workbook, rubric)?;
    let visible = visible_modules(graded)?;
    let merged_manifest = match layout {
        Layout::MergedWherePossible => {
            merged_manifest(workbook, chapter, rubric, graded, &key, &copy, &checks)?
        }
        Layout::Separate => None,
    };
    if let Some(manifest) = merged_manifest {
        let appended = appended_source(chapter, &checks, &visible);
        merged::copy_sources(&graded.dir.join("src"), &copy, &appended)?;
        write_if_changed(&dir.join("Cargo.toml"), &manifest)?;
        sync_lockfile(&workbook.root, &dir)?;
        return Ok(Prepared {
            dir,
            copy: Some(copy),
            test_prefix: format!("{MERGED_MODULE}::"),
        });
    }
    // A folder of its own, so that a crate graded both ways (an edit that stops the merge, the
    // cross-platform lint of the solutions) keeps both builds warm.
    let dir = harness_dir.join(format!("{key}-separate"));
    write_if_changed(
        &dir.join("Cargo.toml"),
        &harness_manifest(workbook, rubric, graded, &key)?,
    )?;
    write_if_changed(
        &dir.join("checks.rs"),
        &harness_source(chapter, &checks, &visible),
    )?;
    sync_lockfile(&workbook.root, &dir)?;
    Ok(Prepared {
        dir,
        copy: None,
        test_prefix: String::new(),
    })
}

fn harness_key(chapter: &Chapter, rubric: &Rubric, graded: &Graded) -> String {
    let owner = &graded.harness;
    let hash = stable_hash(&format!(
        "{}\n{}",
        owner.dir.display(),
        rubric.dir.display()
    ));
    format!("{}-{}-{:08x}", chapter.id, owner.kind, hash as u32)
}

/// The checks' own dependencies, as the workspace specifies them.
fn harness_dependencies(workbook: &Workbook, rubric: &Rubric) -> Result<Table> {
    let mut dependencies = Table::new();
    for name in ["tokio", "rand"]
        .iter()
        .copied()
        .chain(rubric.check_dependencies.iter().map(String::as_str))
    {
        let spec = manifest_toml::workspace_dependency(&workbook.root, name)?;
        let spec = match spec {
            Value::Table(table) => Value::Table(table),
            version => Value::Table(Table::from_iter([("version".to_owned(), version)])),
        };
        dependencies.insert(name.to_owned(), spec);
    }
    Ok(dependencies)
}

/// Adds the dev-dependencies the visible tests may need: the graded crate's, and those of the
/// crate the visible tests come from (the exercise's, for the solution and the mutants). The
/// checks' own specs stay as they are.
fn add_dev_dependencies(dependencies: &mut Table, graded: &Graded) -> Result<()> {
    let graded_manifest = CrateManifest::read(&graded.dir)?;
    for (name, spec) in graded_manifest.resolved_dependencies("dev-dependencies")? {
        dependencies.entry(name).or_insert(spec);
    }
    if let Some(owner) = graded.visible_tests.parent()
        && owner != graded.dir
        && owner.join("Cargo.toml").is_file()
    {
        for (name, spec) in CrateManifest::read(owner)?.resolved_dependencies("dev-dependencies")? {
            dependencies.entry(name).or_insert(spec);
        }
    }
    Ok(())
}

/// A harness package's manifest: `target` is its one target (`[[test]]` or `[lib]`).
fn package_manifest(
    package: &str,
    dependencies: Table,
    target: (&str, Value),
    profiles: Value,
) -> Result<String> {
    let mut manifest = Table::new();
    manifest.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            ("name".to_owned(), Value::String(package.to_owned())),
            ("version".to_owned(), Value::String("0.0.0".to_owned())),
            (
                "edition".to_owned(),
                Value::String(merged::CHECKS_EDITION.to_owned()),
            ),
            ("publish".to_owned(), Value::Boolean(false)),
        ])),
    );
    manifest.insert("workspace".to_owned(), Value::Table(Table::new()));
    manifest.insert("dependencies".to_owned(), Value::Table(dependencies));
    manifest.insert(target.0.to_owned(), target.1);
    manifest.insert("profile".to_owned(), profiles);
    Ok(format!(
        "# Generated by `cargo xtask check`; every run rewrites it.\n{}",
        toml::to_string(&manifest).context("writing the harness manifest")?
    ))
}

/// The package name of the harness with folder name `key`.
fn harness_package(key: &str) -> String {
    format!("checks_{}", key.replace('-', "_"))
}

fn harness_manifest(
    workbook: &Workbook,
    rubric: &Rubric,
    graded: &Graded,
    key: &str,
) -> Result<String> {
    let mut dependencies = harness_dependencies(workbook, rubric)?;
    add_dev_dependencies(&mut dependencies, graded)?;
    dependencies.insert(
        "exercise".to_owned(),
        Value::Table(Table::from_iter([
            (
                "path".to_owned(),
                Value::String(graded.dir.display().to_string()),
            ),
            ("package".to_owned(), Value::String(graded.package.clone())),
        ])),
    );
    let package = harness_package(key);
    // Codegen units stay at the incremental default (256): 16 made a trivial edit 25 ms faster
    // but a real one (every mutant's) 20-30% slower.
    let profiles = manifest_toml::without_debug_info(
        manifest_toml::workspace_profiles_for(&workbook.root, &[graded.package.as_str()])?,
        &[&package],
    );
    let test = Value::Array(vec![Value::Table(Table::from_iter([
        ("name".to_owned(), Value::String("checks".to_owned())),
        ("path".to_owned(), Value::String("checks.rs".to_owned())),
    ]))]);
    package_manifest(&package, dependencies, ("test", test), profiles)
}

/// The manifest of a merged harness, whose library is the copy at `copy`; None when the graded
/// crate cannot be merged (see `merged::refusal`) or its dependencies clash with the checks'.
fn merged_manifest(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    graded: &Graded,
    key: &str,
    copy: &Path,
    checks: &[AddedModule],
) -> Result<Option<String>> {
    let graded_manifest = CrateManifest::read(&graded.dir)?;
    let declared = [
        MERGED_MODULE.to_owned(),
        "exercise".to_owned(),
        chapter.crate_name(),
    ];
    if merged::refusal(&graded.dir, &graded_manifest, &declared).is_some() {
        return Ok(None);
    }
    let check_files: Vec<&Path> = checks.iter().map(|check| check.file.as_path()).collect();
    if merged::checks_reach_the_crate_root(&check_files) {
        return Ok(None);
    }
    let mut dependencies = harness_dependencies(workbook, rubric)?;
    for (name, spec) in graded_manifest.resolved_dependencies("dependencies")? {
        if !merged::add_dependency(&mut dependencies, &name, spec) {
            return Ok(None);
        }
    }
    add_dev_dependencies(&mut dependencies, graded)?;
    let package = harness_package(key);
    // The graded package's own profile settings (an opt-level, say) apply to the one crate.
    let mut profiles =
        manifest_toml::workspace_profiles_for(&workbook.root, &[graded.package.as_str()])?;
    manifest_toml::rename_profile_package(&mut profiles, &graded.package, &package);
    let profiles = manifest_toml::without_debug_info(profiles, &[&package]);
    let lib = Value::Table(Table::from_iter([
        ("name".to_owned(), Value::String("checks".to_owned())),
        (
            "path".to_owned(),
            Value::String(copy.join("lib.rs").display().to_string()),
        ),
        ("doctest".to_owned(), Value::Boolean(false)),
    ]));
    package_manifest(&package, dependencies, ("lib", lib), profiles).map(Some)
}

/// The support file's module and the checks' modules, in the order the harness declares them.
fn added_modules(workbook: &Workbook, rubric: &Rubric) -> Result<Vec<AddedModule>> {
    let mut modules = vec![AddedModule {
        name: "support".to_owned(),
        file: workbook.support_file(),
    }];
    for file in rubric.check_files()? {
        modules.push(AddedModule {
            name: module_name(&file)?,
            file,
        });
    }
    Ok(modules)
}

/// The modules of the visible tests, inside the module [`VISIBLE_MODULE`].
fn visible_modules(graded: &Graded) -> Result<Vec<AddedModule>> {
    rust_files(&graded.visible_tests)?
        .into_iter()
        .map(|file| {
            Ok(AddedModule {
                name: module_name(&file)?,
                file,
            })
        })
        .collect()
}

/// `#[path = "…"] mod name;` for each module, each line after `indent`.
fn module_declarations(modules: &[AddedModule], indent: &str) -> String {
    modules
        .iter()
        .map(|module| {
            format!(
                "{indent}#[path = {:?}]\n{indent}mod {};\n",
                module.file.display().to_string(),
                module.name
            )
        })
        .collect()
}

/// The root of a separate harness: the graded crate is the dependency `exercise`.
fn harness_source(chapter: &Chapter, checks: &[AddedModule], visible: &[AddedModule]) -> String {
    let mut source = String::from("// Generated by `cargo xtask check`; every run rewrites it.\n");
    // Checks write instants as tables of `k * MS`, where `0 * MS` is the clearest zero.
    source.push_str(
        "#![allow(dead_code, unused_imports, unused_variables, unused_mut, clippy::erasing_op)]\n\n",
    );
    // Visible tests name the crate by the exercise's name, whichever crate is graded.
    source.push_str(&format!(
        "extern crate exercise as {};\n\n",
        chapter.crate_name()
    ));
    source.push_str(&module_declarations(checks, ""));
    source.push_str(&visible_module(visible, ""));
    source
}

/// The module [`VISIBLE_MODULE`] with the visible tests' modules, after `indent`; nothing
/// without visible tests.
fn visible_module(visible: &[AddedModule], indent: &str) -> String {
    if visible.is_empty() {
        return String::new();
    }
    format!(
        "{indent}mod {VISIBLE_MODULE} {{\n{}{indent}}}\n",
        module_declarations(visible, &format!("{indent}    "))
    )
}

/// What a merged harness appends to its copy of the graded crate's `lib.rs`: the names the
/// checks and the visible tests call the crate by, and one module that holds theirs. The graded
/// crate's own lints (a `#![deny(warnings)]`, say) are not the checks' business.
fn appended_source(chapter: &Chapter, checks: &[AddedModule], visible: &[AddedModule]) -> String {
    let mut source = format!(
        "\n// Appended by `cargo xtask check` to its copy of this file: the hidden checks and the\n\
         // visible tests, compiled into the graded crate.\n\
         extern crate self as exercise;\n\
         extern crate self as {};\n\
         #[allow(warnings)]\n\
         mod {MERGED_MODULE} {{\n",
        chapter.crate_name()
    );
    source.push_str(&module_declarations(checks, "    "));
    source.push_str(&visible_module(visible, "    "));
    source.push_str("}\n");
    source
}

fn module_name(file: &Path) -> Result<String> {
    let stem = file
        .file_stem()
        .and_then(|stem| stem.to_str())
        .with_context(|| format!("{} has no usable name", file.display()))?;
    if stem.is_empty()
        || !stem.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        || stem.as_bytes()[0].is_ascii_digit()
    {
        bail!(
            "{}: a check or test file name must be a Rust identifier",
            file.display()
        );
    }
    Ok(stem.to_owned())
}

/// Keeps the harness on the workspace's resolved versions: copies Cargo.lock when it changed.
pub fn sync_lockfile(root: &Path, harness_dir: &Path) -> Result<()> {
    let source = root.join("Cargo.lock");
    let Ok(lock) = std::fs::read_to_string(&source) else {
        return Ok(());
    };
    let stamp = harness_dir.join("Cargo.lock.source");
    if std::fs::read_to_string(&stamp).is_ok_and(|seen| seen == lock) {
        return Ok(());
    }
    std::fs::write(harness_dir.join("Cargo.lock"), &lock).context("copying Cargo.lock")?;
    std::fs::write(&stamp, &lock).context("writing the lockfile stamp")?;
    Ok(())
}

#[derive(Deserialize)]
struct CargoMessage {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    target: Option<CargoTarget>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    filenames: Vec<PathBuf>,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    message: Option<RustcMessage>,
}

#[derive(Deserialize)]
struct CargoTarget {
    name: String,
    #[serde(default)]
    kind: Vec<String>,
}

#[derive(Deserialize)]
struct RustcMessage {
    message: String,
    level: String,
    #[serde(default)]
    rendered: Option<String>,
    #[serde(default)]
    spans: Vec<RustcSpan>,
}

impl RustcMessage {
    /// An error the learner is shown: not a warning, and not rustc's closing count.
    fn is_reported_error(&self) -> bool {
        self.level.starts_with("error") && !self.message.starts_with("aborting due to")
    }
}

#[derive(Deserialize)]
struct RustcSpan {
    file_name: String,
    line_start: u64,
    is_primary: bool,
}

/// How to run cargo for a build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Colour in the compiler's messages.
    pub color: bool,
    /// Show what cargo compiles and how far along it is, on one line of stderr.
    pub show_progress: bool,
    /// Which target folder to build in: 0 is the workspace's, `n` is `target/lane-n/`. Cargo
    /// builds one thing at a time in a target folder, so `verify` gives each of its lanes its
    /// own, and their builds run side by side.
    pub lane: usize,
}

/// The target folder of build lane `lane` (see [`BuildOptions::lane`]).
pub fn lane_target_dir(workbook: &Workbook, lane: usize) -> PathBuf {
    match lane {
        0 => workbook.target_dir(),
        n => workbook.target_dir().join(format!("lane-{n}")),
    }
}

/// A build that either worked or failed for a reason the learner must see.
#[derive(Debug)]
pub enum BuildOutcome<T> {
    Built(T),
    Failed(CompileFailure),
}

impl<T> BuildOutcome<T> {
    /// What was built, turned by `f`; a failure stays as it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> BuildOutcome<U> {
        match self {
            BuildOutcome::Built(built) => BuildOutcome::Built(f(built)),
            BuildOutcome::Failed(failure) => BuildOutcome::Failed(failure),
        }
    }
}

/// Compiles the harness at `dir`, or reuses its last build when nothing it was built from has
/// changed (see `freshness`). `sources` are the folders and files the harness compiles beside the
/// graded crate: the checks, the support file, the visible tests. A merged harness whose build
/// settings have not changed is compiled by rustc alone (see `rustc_replay`).
pub fn build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    sources: &[PathBuf],
    options: BuildOptions,
) -> Result<BuildOutcome<Built>> {
    let started = Instant::now();
    // Reading the inputs, building and stamping happen as one step for each harness, so a stamp
    // always describes the binary that is there.
    let _lock = crate::util::FolderLock::acquire(dir)?;
    let inputs = freshness::inputs(dir, &graded.dir, sources);
    crate::timings::phase("build inputs read");
    if let Some(reusable) = inputs
        .as_ref()
        .and_then(|inputs| freshness::reusable(dir, inputs))
    {
        return Ok(BuildOutcome::Built(Built {
            test_binary: reusable.test_binary,
            tests: reusable.tests,
            compile_time: started.elapsed(),
            reused: true,
            replayed: false,
        }));
    }
    if let Some(inputs) = &inputs {
        freshness::renew_changed_files_that_look_old(dir, inputs);
    }
    // The copy of the graded crate holds the learner's text; the other sources name the tests.
    let test_sources: Vec<PathBuf> = sources
        .iter()
        .filter(|source| Some(*source) != graded.copy.as_ref())
        .cloned()
        .collect();
    let known_tests = inputs
        .as_ref()
        .and_then(|inputs| freshness::tests_if_unchanged(dir, inputs, &test_sources));
    freshness::forget(dir);
    let merged = graded.copy.is_some();
    let settings = inputs.as_ref().map(freshness::Inputs::settings_digest);
    let replay = match (&settings, merged) {
        (Some(settings), true) => {
            rustc_replay::replayable(dir, settings, options.color, options.lane)
        }
        _ => None,
    };
    if let Some(replay) = replay
        && let Some(outcome) = build_by_replay(workbook, dir, graded, &replay, options)?
    {
        let (test_binary, units) = match outcome {
            BuildOutcome::Built(built) => built,
            BuildOutcome::Failed(failure) => return Ok(BuildOutcome::Failed(failure)),
        };
        let built = finish_build(dir, inputs.as_ref(), &units, test_binary, known_tests)?;
        return Ok(BuildOutcome::Built(Built {
            compile_time: started.elapsed(),
            replayed: true,
            ..built
        }));
    }
    // `--tests` leaves out what no test binary needs: the examples, and the plain library that
    // only doc tests and examples link.
    let build = |record_rustc| {
        cargo_build(
            workbook,
            dir,
            graded,
            &["test", "--no-run", "--tests"],
            options,
            record_rustc,
        )
    };
    let mut outcome = build(merged)?;
    // A wrapper that cargo could not run fails the build without a compiler error: once more
    // without it.
    if merged && matches!(&outcome, BuildOutcome::Failed(failure) if failure.errors.is_empty()) {
        outcome = build(false)?;
    }
    let tests = match outcome {
        BuildOutcome::Built(tests) => tests,
        BuildOutcome::Failed(failure) => {
            rustc_replay::keep(dir, settings, options.color, options.lane);
            return Ok(BuildOutcome::Failed(failure));
        }
    };
    rustc_replay::keep(dir, settings, options.color, options.lane);
    let test_binary = tests
        .binaries
        .iter()
        .find(|binary| binary.target == "checks")
        .map(|binary| binary.path.clone());
    let Some(test_binary) = test_binary else {
        return Ok(BuildOutcome::Failed(CompileFailure {
            errors: Vec::new(),
            cargo_output: "the check harness built no test binary".to_owned(),
        }));
    };
    let built = finish_build(dir, inputs.as_ref(), &tests.local_units, test_binary, None)?;
    Ok(BuildOutcome::Built(Built {
        compile_time: tests.compile_time,
        ..built
    }))
}

/// Lists the tests of a freshly built `test_binary` (unless `known_tests` already says what
/// they are) and stamps the build. The build's time and how it was made are the caller's to
/// fill in.
fn finish_build(
    dir: &Path,
    inputs: Option<&freshness::Inputs>,
    units: &freshness::LocalUnits,
    test_binary: PathBuf,
    known_tests: Option<Vec<String>>,
) -> Result<Built> {
    crate::timings::phase("compiled");
    let listed = match known_tests {
        Some(tests) => tests,
        None => list_tests(&test_binary)?,
    };
    crate::timings::phase("tests listed");
    if let Some(inputs) = inputs {
        freshness::record(dir, inputs, units, &test_binary, &listed)?;
        crate::timings::phase("build recorded");
    }
    Ok(Built {
        test_binary,
        tests: listed,
        compile_time: Duration::ZERO,
        reused: false,
        replayed: false,
    })
}

/// Compiles a merged harness by replaying rustc's last invocation. None when the replay failed
/// for a reason outside the code (see [`is_code_failure`]): cargo then builds it.
fn build_by_replay(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    replay: &rustc_replay::Replay,
    options: BuildOptions,
) -> Result<Option<BuildOutcome<(PathBuf, freshness::LocalUnits)>>> {
    let activity = Activity::start(
        Mode::for_stderr(options.show_progress),
        format!("Compiling the checks with {}", graded.package),
    );
    let replayed = replay.run();
    drop(activity);
    let replayed = replayed?;
    if replayed.success {
        let Some(dep_info) = freshness::dep_info_of(&replay.test_binary) else {
            return Ok(None);
        };
        let units = freshness::LocalUnits::single(
            &dir.join("Cargo.toml"),
            dep_info,
            replay.workspace_dir(),
        );
        return Ok(Some(BuildOutcome::Built((
            replay.test_binary.clone(),
            units,
        ))));
    }
    let mut errors: Vec<CompileError> = Vec::new();
    for line in &replayed.diagnostics {
        let Ok(diagnostic) = serde_json::from_str::<RustcMessage>(line) else {
            continue;
        };
        if !diagnostic.is_reported_error() {
            continue;
        }
        let in_graded_crate = is_learners_file(graded, &diagnostic);
        let mut error = compile_error(workbook, graded, diagnostic, in_graded_crate);
        // Rustc renders in colour for cargo, which takes it out when asked for none; replayed,
        // the grader does.
        if !options.color {
            error.rendered = crate::term::strip_ansi(&error.rendered);
        }
        errors.push(error);
    }
    if !is_code_failure(&errors) {
        rustc_replay::forget(dir);
        return Ok(None);
    }
    errors.sort_by_key(|error| !error.in_graded_crate);
    Ok(Some(BuildOutcome::Failed(CompileFailure {
        errors,
        cargo_output: shorten_paths(workbook, graded, &replayed.other_output),
    })))
}

/// True when a failed build's errors are about the code: each has a place in a file, and none
/// is about finding a compiled dependency. Anything else (a dependency gone or rebuilt, the
/// linker) is cargo's to sort out.
fn is_code_failure(errors: &[CompileError]) -> bool {
    const LOADING_ERRORS: &[&str] = &[
        "can't find crate",
        "found possibly newer version of crate",
        "found crate",
        "couldn't read",
        "linking with",
        "could not compile",
    ];
    !errors.is_empty()
        && errors.iter().all(|error| {
            error.file.is_some()
                && !LOADING_ERRORS
                    .iter()
                    .any(|loading| error.message.contains(loading))
        })
}

/// Every executable of one build.
#[derive(Debug)]
pub struct BuiltTests {
    pub binaries: Vec<Executable>,
    pub compile_time: Duration,
    /// What the build read for the crates of this workspace (not the registry's).
    pub local_units: freshness::LocalUnits,
}

/// One executable a build produced.
#[derive(Debug, Clone)]
pub struct Executable {
    /// The name of its target (a test's file stem, an example's name, the library's name).
    pub target: String,
    pub path: PathBuf,
    /// The folder of the package it belongs to (one build of a workspace builds several).
    pub package_dir: Option<PathBuf>,
}

/// Runs `cargo <subcommand…>` on the crate at `dir` with JSON messages, and collects its
/// executables and its errors. With `record_rustc`, the grader is cargo's workspace wrapper and
/// keeps how rustc ran (see `rustc_replay`).
pub fn cargo_build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    subcommand: &[&str],
    options: BuildOptions,
    record_rustc: bool,
) -> Result<BuildOutcome<BuiltTests>> {
    let started = Instant::now();
    let format = if options.color {
        "json-diagnostic-rendered-ansi"
    } else {
        "json"
    };
    let mut command = Command::new(crate::util::cargo());
    command
        .args(subcommand)
        .args(["--message-format", format, "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", lane_target_dir(workbook, options.lane))
        .env_remove("RUSTC_BOOTSTRAP")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if record_rustc {
        rustc_replay::record_through_wrapper(&mut command, dir);
    }
    let mode = Mode::for_stderr(options.show_progress);
    if mode != Mode::Off {
        // Cargo draws its progress bar into the pipe too; the status line below reads it.
        command
            .env("CARGO_TERM_PROGRESS_WHEN", "always")
            .env("CARGO_TERM_PROGRESS_WIDTH", "100")
            .env("CARGO_TERM_COLOR", "never");
    }
    let activity = Arc::new(Activity::start(mode, COMPILING));
    let mut child = command.spawn().context("starting cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let reader_activity = Arc::clone(&activity);
    let stderr_reader = std::thread::spawn(move || read_cargo_stderr(stderr, &reader_activity));
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut binaries = Vec::new();
    let mut local_units = freshness::LocalUnits::default();
    let mut errors: Vec<CompileError> = Vec::new();
    let graded_id_fragment = graded.dir.display().to_string();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        let Ok(message) = serde_json::from_str::<CargoMessage>(&line) else {
            continue;
        };
        match message.reason.as_str() {
            "compiler-artifact" => {
                if message.package_id.starts_with("path+") {
                    local_units.add(
                        message.manifest_path.as_deref(),
                        message.target.as_ref().map_or(&[][..], |t| &t.kind[..]),
                        &message.filenames,
                        dir,
                    );
                }
                if let (Some(target), Some(executable)) = (message.target, message.executable) {
                    binaries.push(Executable {
                        target: target.name,
                        path: executable,
                        package_dir: message
                            .manifest_path
                            .as_deref()
                            .and_then(Path::parent)
                            .map(Path::to_path_buf),
                    });
                }
            }
            "compiler-message" => {
                if let Some(diagnostic) = message.message
                    && diagnostic.is_reported_error()
                {
                    let in_graded_crate = message.package_id.contains(&graded_id_fragment)
                        || is_learners_file(graded, &diagnostic);
                    let error = compile_error(workbook, graded, diagnostic, in_graded_crate);
                    // A file compiled twice (a crate's lib and its tests) reports an error twice.
                    if !errors.iter().any(|seen| seen.rendered == error.rendered) {
                        errors.push(error);
                    }
                }
            }
            _ => {}
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    let cargo_output = stderr_reader.join().unwrap_or_default();
    drop(activity);
    if status.success() {
        return Ok(BuildOutcome::Built(BuiltTests {
            binaries,
            compile_time: started.elapsed(),
            local_units,
        }));
    }
    // The learner's own errors first, the checks' after.
    errors.sort_by_key(|error| !error.in_graded_crate);
    Ok(BuildOutcome::Failed(CompileFailure {
        errors,
        cargo_output: shorten_paths(workbook, graded, &cargo_output),
    }))
}

/// True when the error's primary span is in a file the learner writes: the graded crate or the
/// visible tests compiled beside the checks.
fn is_learners_file(graded: &Graded, diagnostic: &RustcMessage) -> bool {
    diagnostic
        .spans
        .iter()
        .find(|span| span.is_primary)
        .is_some_and(|span| {
            let file = Path::new(&span.file_name);
            file.starts_with(&graded.dir)
                || file.starts_with(&graded.visible_tests)
                || graded
                    .copy
                    .as_ref()
                    .is_some_and(|copy| file.starts_with(copy))
        })
}

/// Shows `line` as the one status line on stderr: in place of the last one on a terminal, as a
/// line of its own elsewhere.
pub fn show_status(line: &str) {
    status::say(Mode::for_stderr(true), line);
}

/// Clears the status line.
pub fn clear_status() {
    show_status("");
}

/// What the status says while cargo compiles a harness.
const COMPILING: &str = "Compiling the checks";

/// Collects cargo's stderr (its complaints, when no compiler error explains a failure), and
/// tells `activity` what cargo compiles and how far along it is.
fn read_cargo_stderr(stderr: std::process::ChildStderr, activity: &Activity) -> String {
    use std::io::Read;
    let mut text = String::new();
    let mut status = progress::Status::default();
    let mut pending = Vec::new();
    let mut bytes = std::io::BufReader::new(stderr).bytes();
    while let Some(Ok(byte)) = bytes.next() {
        if byte != b'\n' && byte != b'\r' {
            pending.push(byte);
            continue;
        }
        let line = String::from_utf8_lossy(&pending).into_owned();
        pending.clear();
        let is_progress = status.read(&line);
        if !is_progress && byte == b'\n' {
            text.push_str(&line);
            text.push('\n');
        }
        if let Some((cold, detail)) = status.changed() {
            if cold {
                activity.headline(format!(
                    "{COMPILING} and the chapter's dependencies (only the first time)"
                ));
            }
            activity.detail(detail);
        }
    }
    text
}

/// Reading cargo's human output for a one-line status.
mod progress {
    /// What cargo has said so far about its build.
    #[derive(Debug, Default)]
    pub struct Status {
        compiling: Option<String>,
        done: usize,
        total: usize,
        /// More crates than the graded one and the checks were left to compile at some point
        /// (cargo counts those it finds up to date as done): dependencies, on a first build.
        cold: bool,
        changed: bool,
    }

    impl Status {
        /// Takes one line of cargo's stderr; true when it was the progress bar (not a message).
        pub fn read(&mut self, line: &str) -> bool {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("Compiling ") {
                self.compiling = rest.split_whitespace().next().map(str::to_owned);
                self.changed = true;
                return false;
            }
            // `Building [=====>     ] 37/120: tokio, rand`
            let Some(rest) = line.strip_prefix("Building [") else {
                return false;
            };
            let Some((_, counts)) = rest.split_once("] ") else {
                return true;
            };
            let (counts, names) = counts.split_once(':').unwrap_or((counts, ""));
            if let Some((done, total)) = counts.trim().split_once('/')
                && let (Ok(done), Ok(total)) = (done.parse(), total.parse())
            {
                (self.done, self.total) = (done, total);
                // A build after an edit compiles the graded crate and the checks; more crates
                // left are dependencies, compiled once.
                self.cold |= total.saturating_sub(done) > 3;
                if let Some(name) = names.split(',').next().map(str::trim)
                    && !name.is_empty()
                {
                    self.compiling = Some(name.to_owned());
                }
                self.changed = true;
            }
            true
        }

        /// Whether the build is cold (every dependency is compiled), and how far along it is
        /// (`37/120 crates · tokio`); once per change.
        pub fn changed(&mut self) -> Option<(bool, String)> {
            if !std::mem::take(&mut self.changed) {
                return None;
            }
            let crate_name = self.compiling.as_deref()?;
            let detail = if self.total > 0 {
                format!("{}/{} crates · {crate_name}", self.done, self.total)
            } else {
                crate_name.to_owned()
            };
            Some((self.cold, detail))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Status;

        #[test]
        fn reads_cargo_progress_and_compiling_lines() {
            let mut status = Status::default();
            assert!(!status.read("   Compiling tokio v1.48.0"));
            assert_eq!(status.changed(), Some((false, "tokio".to_owned())));
            assert_eq!(status.changed(), None, "said once per change");
            assert!(status.read("    Building [=======>        ] 37/120: rand, serde"));
            assert_eq!(
                status.changed(),
                Some((true, "37/120 crates · rand".to_owned()))
            );
            assert!(!status.read("warning: unused variable"));
        }

        #[test]
        fn a_build_with_few_crates_left_is_not_called_the_first() {
            let mut status = Status::default();
            assert!(status.read("    Building [=============>  ] 56/58: suite(test)"));
            assert_eq!(
                status.changed(),
                Some((false, "56/58 crates · suite(test)".to_owned()))
            );
        }
    }
}

fn compile_error(
    workbook: &Workbook,
    graded: &Graded,
    diagnostic: RustcMessage,
    in_graded_crate: bool,
) -> CompileError {
    let primary = diagnostic.spans.iter().find(|span| span.is_primary);
    CompileError {
        file: primary.map(|span| shorten_paths(workbook, graded, &span.file_name)),
        line: primary.map(|span| span.line_start),
        message: diagnostic.message,
        rendered: shorten_paths(
            workbook,
            graded,
            diagnostic.rendered.as_deref().unwrap_or_default(),
        ),
        in_graded_crate,
    }
}

/// Replaces absolute paths by paths relative to the graded crate or the workspace.
pub fn shorten_paths(workbook: &Workbook, graded: &Graded, text: &str) -> String {
    let separator = std::path::MAIN_SEPARATOR;
    let graded_prefix = format!("{}{separator}", graded.dir.display());
    let root_prefix = format!("{}{separator}", workbook.root.display());
    let graded_relative = graded
        .dir
        .strip_prefix(&workbook.root)
        .map(|relative| format!("{}{separator}", relative.display()))
        .unwrap_or_default();
    let text = match &graded.copy {
        Some(copy) => text.replace(
            &format!("{}{separator}", copy.display()),
            &format!("{graded_prefix}src{separator}"),
        ),
        None => text.to_owned(),
    };
    text.replace(&graded_prefix, &graded_relative)
        .replace(&root_prefix, "")
}

/// The names of the tests in a test binary.
pub fn list_tests(binary: &Path) -> Result<Vec<String>> {
    let output = Command::new(binary)
        .args(["--list", "--format", "terse"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .with_context(|| format!("listing the tests of {}", binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}
