//! The check harness: a crate generated under `target/workbook/harness/` whose one test binary
//! holds a chapter's hidden checks and the exercise's visible tests, compiled against the graded
//! crate under the fixed name `exercise`. It shares the workspace's target folder, so
//! dependencies compile once for every chapter and every graded crate.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

use crate::build::manifest_toml::{self, CrateManifest};
use crate::build::merged;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, rust_files};
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
        let dir = crate::curriculum::workbook::canonical(dir).with_context(|| {
            crate::lang::words::tf(crate::lang::words::Key::PathDoesNotExist, &[&dir.display()])
        })?;
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
