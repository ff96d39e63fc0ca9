//! The grading core: a [`Target`] names the crate, a [`Grader`] grades it. For hidden checks it
//! prepares the harness, compiles it, runs the checks (together, then each failure alone) and
//! maps the results onto the chapter's rubric; learner-tests chapters are planned by `suites`.
//! Both run their test binaries through `runner`. Nothing here knows the command line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::harness::{self, BuildOptions, CompileFailure, Graded, VISIBLE_MODULE};
use crate::mutants;
use crate::runner::{self, Outcome, Planned, Sources};
use crate::sandbox::Limits;
use crate::status::{Activity, Mode};
use crate::util::FolderLock;
use crate::workbook::{Chapter, Rubric, Workbook};

/// The version of the JSON report's layout; it changes when a field changes meaning.
pub const REPORT_SCHEMA: &str = "retry-workbook/check-report/v1";

/// Output any one check may write before it is stopped.
pub const OUTPUT_LIMIT_BYTES: u64 = 8 * 1024 * 1024;

/// Real time each visible test may take when it runs alone (the book's how-to-use page says so).
pub const VISIBLE_TEST_LIMIT: Duration = Duration::from_secs(10);

/// Address space of a process that runs the learner's own tests (visible tests, a suite).
pub const TESTS_MEMORY_BYTES: u64 = 1024 * 1024 * 1024;

/// Which crate of a chapter to grade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The learner's exercise in this workspace (the only target that records progress).
    Exercise,
    /// The reference solution.
    Solution,
    /// Any crate with the chapter's public API.
    Path(PathBuf),
    /// A known-wrong solution of the chapter, by name.
    Mutant(String),
}

impl Target {
    /// The crate this target names, written out first for a mutant.
    pub fn graded_crate(&self, workbook: &Workbook, chapter: &Chapter) -> Result<Graded> {
        let exercise = workbook.exercise_dir(chapter);
        match self {
            Target::Exercise => Graded::at(&exercise, "your exercise".to_owned(), "exercise"),
            Target::Solution => Ok(Graded::at(
                &workbook.solution_dir(chapter),
                "the solution".to_owned(),
                "solution",
            )?
            .with_visible_tests_of(&exercise)),
            Target::Path(dir) => Graded::at(
                &mutants::gradable_copy(workbook, chapter, dir)?,
                format!("the crate in {}", dir.display()),
                "path",
            ),
            Target::Mutant(name) => {
                let mutant = mutants::find(workbook, chapter, name)?;
                let dir = mutants::materialize(workbook, chapter, &mutant)?;
                let solution = Target::Solution.graded_crate(workbook, chapter)?;
                Ok(
                    Graded::at(&dir, format!("mutant {}", mutant.name), "mutant")?
                        .with_visible_tests_of(&exercise)
                        .in_harness_of(&solution),
                )
            }
        }
    }
}

/// Grades chapters of one workbook: the service every command calls.
pub struct Grader<'a> {
    pub workbook: &'a Workbook,
    /// An instructor's private checks: `<dir>/<chapter>/chapter.toml` and its check files.
    pub checks_dir: Option<PathBuf>,
    /// Colour in compiler messages, and cargo's progress while the checks compile.
    pub build: BuildOptions,
    /// Run the graded crate's visible tests beside the hidden checks (they earn nothing; a
    /// mutant's are of no interest to `verify`).
    pub visible_tests: bool,
    /// Grade only these checks of the rubric, by id: `verify` proves a mutant is rejected by
    /// the checks that name it, and a hung mutant then waits out only their time limits.
    pub only_checks: Option<Vec<String>>,
}

impl<'a> Grader<'a> {
    /// A grader with the public checks, no colour and no progress line.
    pub fn new(workbook: &'a Workbook) -> Self {
        Self {
            workbook,
            checks_dir: None,
            build: BuildOptions::default(),
            visible_tests: true,
            only_checks: None,
        }
    }

    /// The rubric the grader uses for `chapter`.
    pub fn rubric(&self, chapter: &Chapter) -> Result<Rubric> {
        Rubric::for_chapter(self.workbook, chapter, self.checks_dir.as_deref())
            .with_context(|| format!("loading the checks of {}", chapter.id))
    }

    /// Grades `chapter` on the crate `target` names.
    pub fn grade(&self, chapter: &Chapter, target: &Target) -> Result<Report> {
        let mut rubric = self.rubric(chapter)?;
        if let Some(only) = &self.only_checks {
            rubric.checks.retain(|check| only.contains(&check.id));
        }
        // A mutant's crate is one folder per chapter, rewritten for each mutant, and it builds in
        // the solution's harness: one mutant or solution grading of a chapter at a time.
        let _lock = match target {
            Target::Mutant(_) | Target::Solution => Some(FolderLock::acquire(
                &self.workbook.work_dir().join("mutants").join(&chapter.id),
            )?),
            _ => None,
        };
        let graded = target.graded_crate(self.workbook, chapter)?;
        let request = Request {
            workbook: self.workbook,
            chapter,
            rubric: &rubric,
            graded: &graded,
            build: self.build,
            visible_tests: self.visible_tests,
        };
        let mut report = match &rubric.learner_tests {
            Some(spec) => crate::suites::grade(&request, spec)?,
            None => grade_checks(&request)?,
        };
        // A crate graded as a copy (see `mutants::gradable_copy`) is named by its own folder:
        // an edit made in the copy would be lost on the next run.
        if let Target::Path(dir) = target
            && graded.dir != crate::workbook::canonical(dir).unwrap_or_else(|_| dir.clone())
        {
            let copy = display_path(self.workbook, &graded.dir);
            let original = dir.display().to_string();
            report.graded_path.clone_from(&original);
            if let Some(place) = &mut report.start_here {
                *place = place.replacen(&copy, &original, 1);
            }
        }
        Ok(report)
    }
}

/// One grading, as the two planners (hidden checks, learner suites) receive it.
pub struct Request<'a> {
    pub workbook: &'a Workbook,
    pub chapter: &'a Chapter,
    pub rubric: &'a Rubric,
    pub graded: &'a Graded,
    pub build: BuildOptions,
    pub visible_tests: bool,
}

/// The result of grading one chapter.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub chapter: String,
    pub title: String,
    /// What was graded, in words: "your exercise", "the solution", "mutant equal_jitter".
    pub graded: String,
    /// The graded folder, relative to the workspace when it is inside it.
    pub graded_path: String,
    /// The workspace whose checks graded it (absolute): which copy of the workbook this is.
    pub workspace: String,
    pub compiled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_failure: Option<CompileFailure>,
    pub results: Vec<CheckResult>,
    pub score: u32,
    pub max_score: u32,
    /// True when it compiled and no check or visible test failed: each passed, or was skipped.
    pub passed: bool,
    /// Checks that could not run here (they earn nothing); each result says how to run it.
    pub skipped: usize,
    pub compile_ms: u64,
    /// True when nothing the checks are built from had changed since the last build, so its
    /// binary ran without asking cargo.
    pub build_reused: bool,
    /// True when only sources had changed, so rustc compiled the checks without cargo, as cargo
    /// had run it for the last build.
    pub build_replayed: bool,
    pub run_ms: u64,
    /// Where the learner should look first, when something failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_here: Option<String>,
    /// Every test the compiled check binary holds (for `verify`'s rubric check).
    #[serde(skip)]
    pub available_tests: Vec<String>,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub id: String,
    pub kind: CheckKind,
    pub title: String,
    pub points: u32,
    pub earned: u32,
    #[serde(flatten)]
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<Section>,
    pub elapsed_ms: u64,
    /// Peak resident memory of the process the check ran in, in KiB.
    pub peak_memory_kib: u64,
    /// Whether `elapsed_ms` and `peak_memory_kib` are the check's own or shared with others.
    pub timing: Timing,
}

/// Whose time and memory a result shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// The check ran alone: its own time and its process's peak memory.
    Own,
    /// The check passed in a run with others: an equal share of that run's time, and its peak.
    Shared,
}

impl Timing {
    pub fn of(shared: bool) -> Self {
        if shared { Timing::Shared } else { Timing::Own }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A hidden check of the rubric.
    Check,
    /// A test from the graded crate's `tests/` folder.
    Visible,
}

/// A book section a check points to.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub number: String,
    pub title: Option<String>,
    /// `book/src/<page>.md#<anchor>`.
    pub link: String,
}

impl Report {
    pub fn hidden(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(|r| r.kind == CheckKind::Check)
    }

    pub fn visible(&self) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(|r| r.kind == CheckKind::Visible)
    }

    /// The result of one check by id.
    pub fn result(&self, id: &str) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.id == id)
    }
}

impl Report {
    /// A report with nothing graded yet: not compiled, no results, no points.
    pub fn empty(
        chapter: &Chapter,
        graded: String,
        graded_path: String,
        workspace: String,
        max_score: u32,
    ) -> Self {
        Self {
            schema: REPORT_SCHEMA,
            chapter: chapter.id.clone(),
            title: chapter.title.clone(),
            graded,
            graded_path,
            workspace,
            compiled: false,
            compile_failure: None,
            results: Vec::new(),
            score: 0,
            max_score,
            passed: false,
            skipped: 0,
            compile_ms: 0,
            build_reused: false,
            build_replayed: false,
            run_ms: 0,
            start_here: None,
            available_tests: Vec::new(),
        }
    }

    /// Sets the score, the pass and the skip count from the results.
    pub fn total(&mut self) {
        self.score = self.results.iter().map(|r| r.earned).sum();
        self.skipped = self.results.iter().filter(|r| r.outcome.skipped()).count();
        self.passed = self.compiled && !self.results.iter().any(|r| r.outcome.failed());
    }

    /// The report of a chapter whose crate is not there at all: nothing compiled, no points.
    pub fn missing(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric, path: String) -> Self {
        let mut report = Self::empty(
            chapter,
            "a missing crate".to_owned(),
            path.clone(),
            workbook.root.display().to_string(),
            rubric.max_points(),
        );
        report.compile_failure = Some(CompileFailure {
            errors: Vec::new(),
            cargo_output: format!("{path} does not exist"),
        });
        report
    }

    /// The report of `graded` for `chapter`, before anything has run.
    pub fn start(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric, graded: &Graded) -> Self {
        Self::empty(
            chapter,
            graded.label.clone(),
            display_path(workbook, &graded.dir),
            workbook.root.display().to_string(),
            rubric.max_points(),
        )
    }
}

/// Grades a chapter's hidden checks (and the visible tests) on the graded crate.
fn grade_checks(request: &Request) -> Result<Report> {
    let Request {
        workbook,
        chapter,
        rubric,
        graded,
        build,
        visible_tests,
    } = *request;
    let prepared = harness::prepare(
        workbook,
        chapter,
        rubric,
        graded,
        harness::Layout::MergedWherePossible,
    )?;
    crate::timings::phase("harness prepared");
    let graded = &graded.clone().compiled_from(prepared.copy.clone());
    let harness_dir = prepared.dir.clone();
    let mut report = Report::start(workbook, chapter, rubric, graded);
    let mut compiled_sources = rubric.dirs();
    compiled_sources.push(workbook.support_file());
    compiled_sources.push(graded.visible_tests.clone());
    compiled_sources.extend(prepared.copy.clone());
    let built = match harness::build(workbook, &harness_dir, graded, &compiled_sources, build)? {
        harness::BuildOutcome::Built(built) => built,
        harness::BuildOutcome::Failed(failure) => {
            report.start_here = failure.first_location();
            report.compile_failure = Some(failure);
            return Ok(report);
        }
    };
    report.compiled = true;
    report.compile_ms = built.compile_time.as_millis() as u64;
    report.build_reused = built.reused;
    report.build_replayed = built.replayed;

    // The binary's names; a merged harness also holds the graded crate's own unit tests, which
    // are never planned and never run.
    let available: Vec<String> = built
        .tests
        .into_iter()
        .filter(|name| prepared.rubric_name(name).is_some())
        .collect();
    let mut plan: Vec<Planned> = rubric
        .checks
        .iter()
        .map(|check| Planned {
            name: prepared.binary_name(&check.test_name()),
            label: check.id.clone(),
            limits: Limits {
                wall: Duration::from_millis(check.timeout_ms),
                memory_bytes: check.memory_mb * 1024 * 1024,
                output_bytes: OUTPUT_LIMIT_BYTES,
            },
        })
        .collect();
    let visible_prefix = prepared.binary_name(&format!("{VISIBLE_MODULE}::"));
    plan.extend(
        available
            .iter()
            .filter(|name| visible_tests && name.starts_with(&visible_prefix))
            .map(|name| Planned {
                name: name.clone(),
                label: visible_id(name.trim_start_matches(&visible_prefix)),
                limits: Limits {
                    wall: VISIBLE_TEST_LIMIT,
                    memory_bytes: TESTS_MEMORY_BYTES,
                    output_bytes: OUTPUT_LIMIT_BYTES,
                },
            }),
    );
    // One scratch folder per grading process, so two gradings of one chapter (a `watch` and a
    // `check`, say) never share the checks' working folders.
    let scratch = workbook
        .work_dir()
        .join("runs")
        .join(harness_dir.file_name().unwrap_or_default())
        .join(std::process::id().to_string());
    let started = Instant::now();
    let parallel = std::thread::available_parallelism().map_or(2, usize::from);
    // The run of all tests together ends after the longest time one hidden check may take (the
    // visible tests' generous 10 s would make every hang cost 10 s before its own run).
    let together_wall = rubric
        .checks
        .iter()
        .map(|check| Duration::from_millis(check.timeout_ms))
        .max()
        .unwrap_or(Duration::from_secs(10));
    let status = Activity::start(Mode::for_stderr(build.show_progress), "Running the checks");
    let runs = runner::run_all(
        &built.test_binary,
        &plan,
        &available,
        &scratch,
        &sources(workbook, rubric),
        parallel,
        together_wall,
        &status,
    )?;
    drop(status);
    report.run_ms = started.elapsed().as_millis() as u64;
    crate::timings::phase("checks run");
    // The checks are done with their folders; a failure to clean up only costs disk space.
    let _ = std::fs::remove_dir_all(&scratch);

    let headings = page_headings(&workbook.page(chapter));
    for (check, run) in rubric.checks.iter().zip(&runs) {
        let earned = if run.outcome.passed() {
            check.points
        } else {
            0
        };
        report.results.push(CheckResult {
            id: check.id.clone(),
            kind: CheckKind::Check,
            title: check.title.clone(),
            points: check.points,
            earned,
            outcome: shorten(workbook, graded, run.outcome.clone()),
            section: check
                .section
                .as_ref()
                .map(|number| section(workbook, chapter, &headings, number)),
            elapsed_ms: run.elapsed.as_millis() as u64,
            peak_memory_kib: run.peak_memory_kib,
            timing: Timing::of(run.shared),
        });
    }
    for run in runs.iter().skip(rubric.checks.len()) {
        let test = run.name.trim_start_matches(&visible_prefix);
        let function = test.split_once("::").map_or(test, |(_, function)| function);
        report.results.push(CheckResult {
            id: visible_id(test),
            kind: CheckKind::Visible,
            title: function.replace('_', " "),
            points: 0,
            earned: 0,
            outcome: shorten(workbook, graded, run.outcome.clone()),
            section: None,
            elapsed_ms: run.elapsed.as_millis() as u64,
            peak_memory_kib: run.peak_memory_kib,
            timing: Timing::of(run.shared),
        });
    }
    report.available_tests = available
        .iter()
        .filter_map(|name| prepared.rubric_name(name))
        .map(str::to_owned)
        .collect();
    report.total();
    if !report.passed {
        report.start_here = start_here(workbook, graded, rubric, &report);
    }
    Ok(report)
}

/// How a visible test (`file::function` in the harness) is named in the report:
/// `tests/file.rs: function`.
fn visible_id(test: &str) -> String {
    let (file, function) = test.split_once("::").unwrap_or(("tests", test));
    format!("tests/{file}.rs: {function}")
}

/// The checks' source folders and the support file, as the runner needs them.
pub fn sources(workbook: &Workbook, rubric: &Rubric) -> Sources {
    let mut checks_dirs = rubric.dirs();
    checks_dirs.push(workbook.root.join("xtask").join("checks"));
    Sources {
        checks_dirs,
        support_file: workbook.support_file(),
    }
}

/// Absolute paths in a failure's text, made relative.
fn shorten(workbook: &Workbook, graded: &Graded, outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Failed {
            message,
            location,
            in_graded_code,
        } => Outcome::Failed {
            message: harness::shorten_paths(workbook, graded, &message),
            location: location.map(|l| harness::shorten_paths(workbook, graded, &l)),
            in_graded_code,
        },
        other => other,
    }
}

/// The first place to look: the first `todo!()` left in the graded crate, or the panic site.
fn start_here(
    workbook: &Workbook,
    graded: &Graded,
    rubric: &Rubric,
    report: &Report,
) -> Option<String> {
    let first_failure = report.results.iter().find(|r| r.outcome.failed())?;
    if let Outcome::Failed {
        location: Some(location),
        in_graded_code: true,
        ..
    } = &first_failure.outcome
    {
        return Some(location.clone());
    }
    let lib = graded.dir.join(rubric.learner_file());
    let source = std::fs::read_to_string(&lib).ok()?;
    let line = source.lines().position(|line| line.contains("todo!("))?;
    Some(format!("{}:{}", display_path(workbook, &lib), line + 1))
}

/// A path relative to the workspace when it is inside it.
pub fn display_path(workbook: &Workbook, path: &Path) -> String {
    path.strip_prefix(&workbook.root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `## N.M Title` headings of a chapter page.
fn page_headings(page: &Path) -> Vec<String> {
    std::fs::read_to_string(page)
        .map(|text| {
            text.lines()
                .filter_map(|line| {
                    line.strip_prefix("## ")
                        .or_else(|| line.strip_prefix("### "))
                })
                .map(|heading| heading.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Section `number` of `chapter`'s page, with its title and link.
pub fn chapter_section(workbook: &Workbook, chapter: &Chapter, number: &str) -> Section {
    section(
        workbook,
        chapter,
        &page_headings(&workbook.page(chapter)),
        number,
    )
}

fn section(workbook: &Workbook, chapter: &Chapter, headings: &[String], number: &str) -> Section {
    let page = display_path(workbook, &workbook.page(chapter));
    let heading = headings
        .iter()
        .find(|heading| heading.split_whitespace().next() == Some(number));
    Section {
        number: number.to_owned(),
        title: heading.map(|h| h[number.len()..].trim().to_owned()),
        link: match heading {
            Some(heading) => format!("{page}#{}", anchor(heading)),
            None => page,
        },
    }
}

/// The anchor mdBook gives a heading: lower case, spaces to dashes, punctuation dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// Whether a section heading `number` exists on the chapter's page.
pub fn page_has_section(page: &Path, number: &str) -> bool {
    page_headings(page)
        .iter()
        .any(|heading| heading.split_whitespace().next() == Some(number))
}

#[cfg(test)]
mod tests {
    use super::anchor;

    #[test]
    fn anchors_match_mdbook() {
        assert_eq!(anchor("8.3 The formula"), "83-the-formula");
        assert_eq!(anchor("8.10 Pitfalls"), "810-pitfalls");
        assert_eq!(anchor("Retry-After, done"), "retry-after-done");
    }
}
