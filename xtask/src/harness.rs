//! The check harness: a crate generated under `target/workbook/harness/` whose one test binary
//! holds a chapter's hidden checks and the exercise's visible tests, compiled against the graded
//! crate under the fixed name `exercise`. It shares the workspace's target folder, so
//! dependencies compile once for every chapter and every graded crate.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::freshness;
use crate::manifest_toml::{self, CrateManifest};
use crate::util::stable_hash;
use crate::util::write_if_changed;
use crate::workbook::{Chapter, Rubric, Workbook, rust_files};

/// The module that holds the visible tests inside the harness.
pub const VISIBLE_MODULE: &str = "visible_tests";

/// The crate being graded.
#[derive(Debug, Clone)]
pub struct Graded {
    pub dir: PathBuf,
    pub package: String,
    /// How a report names it: "your exercise", "the solution", "mutant equal_jitter", a path.
    pub label: String,
    /// A short name for the harness folder: `exercise`, `solution`, `mutant`, `path`.
    pub kind: &'static str,
    /// The folder of the visible tests to run beside the checks: the graded crate's own `tests/`,
    /// or the exercise's for the solution and the mutants, which ship none.
    pub visible_tests: PathBuf,
}

impl Graded {
    pub fn at(dir: &Path, label: String, kind: &'static str) -> Result<Self> {
        let dir = crate::workbook::canonical(dir)
            .with_context(|| format!("{} does not exist", dir.display()))?;
        let package = CrateManifest::read(&dir)?.package_name()?;
        Ok(Self {
            visible_tests: dir.join("tests"),
            dir,
            package,
            label,
            kind,
        })
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
}

/// One compiler error, reduced to what a learner needs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompileError {
    /// The file, relative to the graded crate when it is the learner's, else to the workspace.
    pub file: Option<String>,
    pub line: Option<u64>,
    pub message: String,
    /// The compiler's own rendering, with paths shortened.
    pub rendered: String,
    /// True when the error is in the graded crate itself, false when it is in the checks (which
    /// then usually means the crate's public API differs from the chapter's).
    pub in_graded_crate: bool,
}

/// Why the harness did not compile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompileFailure {
    pub errors: Vec<CompileError>,
    /// Cargo's own complaint when no compiler error explains the failure.
    pub cargo_output: String,
}

/// Writes the harness crate for `chapter` graded on `graded` with the checks of `rubric`.
pub fn prepare(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    graded: &Graded,
) -> Result<PathBuf> {
    let key = harness_key(chapter, rubric, graded);
    let dir = workbook.work_dir().join("harness").join(&key);
    write_if_changed(
        &dir.join("Cargo.toml"),
        &harness_manifest(workbook, rubric, graded, &key)?,
    )?;
    write_if_changed(
        &dir.join("checks.rs"),
        &harness_source(workbook, chapter, rubric, graded)?,
    )?;
    sync_lockfile(&workbook.root, &dir)?;
    Ok(dir)
}

fn harness_key(chapter: &Chapter, rubric: &Rubric, graded: &Graded) -> String {
    let hash = stable_hash(&format!(
        "{}\n{}",
        graded.dir.display(),
        rubric.dir.display()
    ));
    format!("{}-{}-{:08x}", chapter.id, graded.kind, hash as u32)
}

fn harness_manifest(
    workbook: &Workbook,
    rubric: &Rubric,
    graded: &Graded,
    key: &str,
) -> Result<String> {
    let graded_manifest = CrateManifest::read(&graded.dir)?;
    let mut dependencies = Table::new();
    // The checks' own needs first; the graded crate's dev-dependencies may refine them.
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
    for (name, spec) in graded_manifest.resolved_dependencies("dev-dependencies")? {
        dependencies.entry(name).or_insert(spec);
    }
    // The visible tests may come from another crate (the exercise's, for the solution and the
    // mutants): they need that crate's dev-dependencies.
    if let Some(owner) = graded.visible_tests.parent()
        && owner != graded.dir
        && owner.join("Cargo.toml").is_file()
    {
        for (name, spec) in CrateManifest::read(owner)?.resolved_dependencies("dev-dependencies")? {
            dependencies.entry(name).or_insert(spec);
        }
    }
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

    let package = format!("checks_{}", key.replace('-', "_"));
    let mut manifest = Table::new();
    manifest.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            ("name".to_owned(), Value::String(package.clone())),
            ("version".to_owned(), Value::String("0.0.0".to_owned())),
            ("edition".to_owned(), Value::String("2024".to_owned())),
            ("publish".to_owned(), Value::Boolean(false)),
        ])),
    );
    manifest.insert("workspace".to_owned(), Value::Table(Table::new()));
    manifest.insert("dependencies".to_owned(), Value::Table(dependencies));
    manifest.insert(
        "test".to_owned(),
        Value::Array(vec![Value::Table(Table::from_iter([
            ("name".to_owned(), Value::String("checks".to_owned())),
            ("path".to_owned(), Value::String("checks.rs".to_owned())),
        ]))]),
    );
    // Codegen units stay at the incremental default (256): 16 made a trivial edit 25 ms faster
    // but a real one (every mutant's) 20-30% slower.
    let profiles = manifest_toml::without_debug_info(
        manifest_toml::workspace_profiles_for(&workbook.root, &[graded.package.as_str()])?,
        &[&package],
    );
    manifest.insert("profile".to_owned(), profiles);
    Ok(format!(
        "# Generated by `cargo xtask check`; every run rewrites it.\n{}",
        toml::to_string(&manifest).context("writing the harness manifest")?
    ))
}

fn harness_source(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    graded: &Graded,
) -> Result<String> {
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
    let support = workbook.support_file();
    source.push_str(&format!(
        "#[path = {:?}]\nmod support;\n",
        support.display().to_string()
    ));
    for file in rubric.check_files()? {
        let module = module_name(&file)?;
        source.push_str(&format!(
            "#[path = {:?}]\nmod {module};\n",
            file.display().to_string()
        ));
    }
    let visible = rust_files(&graded.visible_tests)?;
    if !visible.is_empty() {
        source.push_str(&format!("\nmod {VISIBLE_MODULE} {{\n"));
        for file in visible {
            let module = module_name(&file)?;
            source.push_str(&format!(
                "    #[path = {:?}]\n    mod {module};\n",
                file.display().to_string()
            ));
        }
        source.push_str("}\n");
    }
    Ok(source)
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

impl CompileFailure {
    /// The first error as the compiler rendered it, or cargo's complaint when there is none.
    pub fn first_message(&self) -> String {
        self.errors
            .first()
            .map_or_else(|| self.cargo_output.clone(), |e| e.rendered.clone())
    }

    /// `file:line` of the first error, where the learner should start.
    pub fn first_location(&self) -> Option<String> {
        let error = self.errors.first()?;
        Some(format!("{}:{}", error.file.as_ref()?, error.line?))
    }
}

/// Compiles the harness at `dir`, or reuses its last build when nothing it was built from has
/// changed (see `freshness`). `sources` are the folders and files the harness compiles beside the
/// graded crate: the checks, the support file, the visible tests.
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
    if let Some(reusable) = inputs
        .as_ref()
        .and_then(|inputs| freshness::reusable(dir, inputs))
    {
        return Ok(BuildOutcome::Built(Built {
            test_binary: reusable.test_binary,
            tests: reusable.tests,
            compile_time: started.elapsed(),
            reused: true,
        }));
    }
    if let Some(inputs) = &inputs {
        freshness::renew_changed_files_that_look_old(dir, inputs);
    }
    freshness::forget(dir);
    let tests = match build_tests(workbook, dir, graded, options)? {
        BuildOutcome::Built(tests) => tests,
        BuildOutcome::Failed(failure) => return Ok(BuildOutcome::Failed(failure)),
    };
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
    let listed = crate::runner::list_tests(&test_binary)?;
    if let Some(inputs) = &inputs {
        freshness::record(dir, inputs, &tests.local_units, &test_binary, &listed)?;
    }
    Ok(BuildOutcome::Built(Built {
        test_binary,
        tests: listed,
        compile_time: tests.compile_time,
        reused: false,
    }))
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

/// Compiles the test targets of the crate at `dir` (`cargo test --no-run --tests`) in the
/// lane's target folder. Errors in `graded` (its sources and its visible tests) are marked as
/// the learner's. `--tests` leaves out what no test binary needs: the examples, and the plain
/// library that only doc tests and examples link (a third of a learner suite's build).
pub fn build_tests(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    options: BuildOptions,
) -> Result<BuildOutcome<BuiltTests>> {
    cargo_build(
        workbook,
        dir,
        graded,
        &["test", "--no-run", "--tests"],
        options,
    )
}

/// Runs `cargo <subcommand…>` on the crate at `dir` with JSON messages, and collects its
/// executables and its errors.
pub fn cargo_build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    subcommand: &[&str],
    options: BuildOptions,
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
    if options.show_progress {
        // Cargo draws its progress bar into the pipe too; the status line below reads it.
        command
            .env("CARGO_TERM_PROGRESS_WHEN", "always")
            .env("CARGO_TERM_PROGRESS_WIDTH", "100")
            .env("CARGO_TERM_COLOR", "never");
    }
    let mut child = command.spawn().context("starting cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let show_progress = options.show_progress;
    let stderr_reader = std::thread::spawn(move || read_cargo_stderr(stderr, show_progress));
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
                    && diagnostic.level.starts_with("error")
                    && !diagnostic.message.starts_with("aborting due to")
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
            file.starts_with(&graded.dir) || file.starts_with(&graded.visible_tests)
        })
}

/// Shows `line` as the one status line on stderr, in place of the last one.
pub fn show_status(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{line}");
    let _ = err.flush();
}

/// Clears the status line.
pub fn clear_status() {
    show_status("");
}

/// Collects cargo's stderr (its complaints, when no compiler error explains a failure); with
/// `show_progress`, also keeps one status line on our stderr: what cargo compiles, how far along.
fn read_cargo_stderr(stderr: std::process::ChildStderr, show_progress: bool) -> String {
    use std::io::Read;
    let mut text = String::new();
    let mut status = progress::Status::default();
    let mut pending = Vec::new();
    let mut bytes = std::io::BufReader::new(stderr).bytes();
    let mut shown = false;
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
        if show_progress && let Some(shown_line) = status.line() {
            show_status(&shown_line);
            shown = true;
        }
    }
    if shown {
        clear_status();
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
        /// Many crates were left to compile at some point: a cold build.
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
                self.cold |= total.saturating_sub(done) > 30;
                if let Some(name) = names.split(',').next().map(str::trim)
                    && !name.is_empty()
                {
                    self.compiling = Some(name.to_owned());
                }
                self.changed = true;
            }
            true
        }

        /// The status line to show, once per change.
        pub fn line(&mut self) -> Option<String> {
            if !std::mem::take(&mut self.changed) {
                return None;
            }
            let crate_name = self.compiling.as_deref()?;
            let mut line = format!("Compiling the checks: {crate_name}");
            if self.total > 0 {
                line = format!(
                    "Compiling the checks: {}/{} crates · {crate_name}",
                    self.done, self.total
                );
            }
            // Only a cold build has this many crates left to compile: every dependency, once.
            // (Cargo counts the crates it finds up to date as well.)
            if self.cold {
                line.push_str(" (the first check compiles every dependency once)");
            }
            Some(line)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Status;

        #[test]
        fn reads_cargo_progress_and_compiling_lines() {
            let mut status = Status::default();
            assert!(!status.read("   Compiling tokio v1.48.0"));
            assert_eq!(
                status.line().as_deref(),
                Some("Compiling the checks: tokio")
            );
            assert_eq!(status.line(), None, "shown once per change");
            assert!(status.read("    Building [=======>        ] 37/120: rand, serde"));
            let line = status.line().unwrap();
            assert!(
                line.starts_with("Compiling the checks: 37/120 crates · rand"),
                "{line}"
            );
            assert!(line.ends_with("(the first check compiles every dependency once)"));
            assert!(!status.read("warning: unused variable"));
        }

        #[test]
        fn a_build_with_few_crates_left_is_not_called_the_first() {
            let mut status = Status::default();
            assert!(status.read("    Building [=============>  ] 56/58: suite(test)"));
            assert_eq!(
                status.line().as_deref(),
                Some("Compiling the checks: 56/58 crates · suite(test)")
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
    text.replace(&graded_prefix, &graded_relative)
        .replace(&root_prefix, "")
}
