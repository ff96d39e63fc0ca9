//! The check harness: a crate generated under `target/workbook/harness/` whose one test binary
//! holds a chapter's hidden checks and the exercise's visible tests, compiled against the graded
//! crate under the fixed name `exercise`. It shares the workspace's target folder, so
//! dependencies compile once for every chapter and every graded crate.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::{Table, Value};

use crate::manifest_toml::{self, CrateManifest, write_if_changed};
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
    pub compile_time: Duration,
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
    let mut hasher = DefaultHasher::new();
    graded.dir.hash(&mut hasher);
    rubric.dir.hash(&mut hasher);
    format!(
        "{}-{}-{:08x}",
        chapter.id,
        graded.kind,
        hasher.finish() as u32
    )
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

    let mut manifest = Table::new();
    manifest.insert(
        "package".to_owned(),
        Value::Table(Table::from_iter([
            (
                "name".to_owned(),
                Value::String(format!("checks_{}", key.replace('-', "_"))),
            ),
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
    if let Some(profiles) = manifest_toml::workspace_profiles(&workbook.root)? {
        manifest.insert("profile".to_owned(), profiles);
    }
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
    let support = workbook
        .root
        .join("xtask")
        .join("checks")
        .join("support.rs");
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
fn sync_lockfile(root: &Path, harness_dir: &Path) -> Result<()> {
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
    message: Option<RustcMessage>,
}

#[derive(Deserialize)]
struct CargoTarget {
    name: String,
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

/// Compiles the harness at `dir`; `Ok(Err(..))` is a compile failure to show the learner.
pub fn build(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    color: bool,
) -> Result<Result<Built, CompileFailure>> {
    Ok(
        build_tests(workbook, dir, graded, color)?.and_then(|tests| {
            let test_binary = tests
                .binaries
                .into_iter()
                .find(|(target, _)| target == "checks")
                .map(|(_, path)| path);
            match test_binary {
                Some(test_binary) => Ok(Built {
                    test_binary,
                    compile_time: tests.compile_time,
                }),
                None => Err(CompileFailure {
                    errors: Vec::new(),
                    cargo_output: "the check harness built no test binary".to_owned(),
                }),
            }
        }),
    )
}

/// Every test binary of one crate, by target name.
#[derive(Debug)]
pub struct BuiltTests {
    pub binaries: Vec<(String, PathBuf)>,
    pub compile_time: Duration,
}

/// Compiles the tests of the crate at `dir` (`cargo test --no-run`) in the workspace's target
/// folder. Errors in `graded` are marked as the learner's.
pub fn build_tests(
    workbook: &Workbook,
    dir: &Path,
    graded: &Graded,
    color: bool,
) -> Result<Result<BuiltTests, CompileFailure>> {
    let started = Instant::now();
    let format = if color {
        "json-diagnostic-rendered-ansi"
    } else {
        "json"
    };
    let mut child = Command::new(cargo())
        .args([
            "test",
            "--no-run",
            "--message-format",
            format,
            "--manifest-path",
        ])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", workbook.target_dir())
        .env_remove("RUSTC_BOOTSTRAP")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut binaries = Vec::new();
    let mut errors = Vec::new();
    let graded_id_fragment = graded.dir.display().to_string();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        let Ok(message) = serde_json::from_str::<CargoMessage>(&line) else {
            continue;
        };
        match message.reason.as_str() {
            "compiler-artifact" => {
                if let (Some(target), Some(executable)) = (message.target, message.executable) {
                    binaries.push((target.name, executable));
                }
            }
            "compiler-message" => {
                if let Some(diagnostic) = message.message
                    && diagnostic.level.starts_with("error")
                    && !diagnostic.message.starts_with("aborting due to")
                {
                    let in_graded_crate = message.package_id.contains(&graded_id_fragment);
                    errors.push(compile_error(workbook, graded, diagnostic, in_graded_crate));
                }
            }
            _ => {}
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    let cargo_output = stderr_reader.join().unwrap_or_default();
    if status.success() {
        return Ok(Ok(BuiltTests {
            binaries,
            compile_time: started.elapsed(),
        }));
    }
    // The learner's own errors first, the checks' after.
    errors.sort_by_key(|error| !error.in_graded_crate);
    Ok(Err(CompileFailure {
        errors,
        cargo_output: shorten_paths(workbook, graded, &cargo_output),
    }))
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

/// The cargo that runs this command, or the one on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}
