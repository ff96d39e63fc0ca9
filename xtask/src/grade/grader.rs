//! The grading core: a [`Target`] names the crate, a [`Grader`] grades it. For hidden checks it
//! prepares the harness, compiles it, runs the checks (together, then each failure alone) and
//! maps the results onto the chapter's rubric; learner-tests chapters are planned by `suites`.
//! Both run their test binaries through `runner`. Nothing here knows the command line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::build::compile;
use crate::build::compile::{BuildOptions, Built};
use crate::build::compiler_messages;
use crate::build::crate_copy;
use crate::build::harness::{self, Graded, Prepared, VISIBLE_MODULE};
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, canonical, display_path};
use crate::grade::request::{Request, start_report};
use crate::grade::runner::{
    self, OUTPUT_LIMIT_BYTES, Planned, Sources, TESTS_MEMORY_BYTES, TestRun, VISIBLE_TEST_LIMIT,
};
use crate::report::model::{CheckKind, CheckResult, Outcome, Report, Section, Timing};
use crate::sandbox::Limits;
use crate::status::{Activity, Mode};
use crate::util::FolderLock;

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
                &crate_copy::gradable_copy(workbook, chapter, dir)?,
                format!("the crate in {}", dir.display()),
                "path",
            ),
            Target::Mutant(name) => {
                let mutant = crate_copy::find(workbook, chapter, name)?;
                let dir = crate_copy::materialize(workbook, chapter, &mutant)?;
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
        crate::curriculum::translation::learners_rubric(
            self.workbook,
            chapter,
            self.checks_dir.as_deref(),
        )
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
            // A crate given by path is copied into one folder per chapter: one at a time too.
            Target::Path(_) => Some(FolderLock::acquire(
                &self.workbook.work_dir().join("outside").join(&chapter.id),
            )?),
            Target::Exercise => None,
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
            Some(spec) => crate::grade::suites::grade(&request, spec)?,
            None => grade_checks(&request)?,
        };
        // A crate graded as a copy (see `crate_copy::gradable_copy`) is named by its own folder
        // wherever the report names a file: an edit made in the copy would be lost on the next run.
        if let Target::Path(dir) = target
            && graded.dir != canonical(dir).unwrap_or_else(|_| dir.clone())
        {
            CopyOf::new(self.workbook, &graded.dir, dir).rename(&mut report);
        }
        Ok(report)
    }
}

/// A crate graded as a copy, and the folder the learner gave: a path into the copy is a path
/// into that folder, as a path into a merged harness's copy of `src/` is one into the crate
/// (see [`Graded::copy`]).
struct CopyOf {
    /// The copy's folder in the forms a report writes it (absolute, then relative to the
    /// workbook), each with a separator after it: the system's, and `/` (which a report's own
    /// paths use on Windows too).
    copy: Vec<(String, char)>,
    /// The folder the learner gave, as given.
    given: String,
}

impl CopyOf {
    fn new(workbook: &Workbook, copy: &Path, given: &Path) -> Self {
        let mut separators = vec![std::path::MAIN_SEPARATOR];
        if !separators.contains(&'/') {
            separators.push('/');
        }
        let forms = [copy.display().to_string(), display_path(workbook, copy)];
        Self {
            copy: forms
                .iter()
                .flat_map(|form| {
                    separators
                        .iter()
                        .map(move |&sep| (format!("{form}{sep}"), sep))
                })
                .collect(),
            given: given.display().to_string(),
        }
    }

    /// `report` with every path into the copy made a path into the given folder.
    fn rename(&self, report: &mut Report) {
        let given = self.given.trim_end_matches(['/', '\\']);
        report.graded_path.clone_from(&self.given);
        for text in texts_naming_files(report) {
            for (copy, separator) in &self.copy {
                if text.contains(copy.as_str()) {
                    *text = text.replace(copy.as_str(), &format!("{given}{separator}"));
                }
            }
        }
    }
}

/// Every text of `report` that may name a file of the graded crate: where to start, the
/// compiler's messages, and what each check and visible test reported.
fn texts_naming_files(report: &mut Report) -> Vec<&mut String> {
    let mut texts: Vec<&mut String> = report.start_here.iter_mut().collect();
    if let Some(failure) = &mut report.compile_failure {
        texts.push(&mut failure.cargo_output);
        for error in &mut failure.errors {
            texts.extend(error.file.as_mut());
            texts.push(&mut error.message);
            texts.push(&mut error.rendered);
        }
    }
    for result in &mut report.results {
        match &mut result.outcome {
            Outcome::Failed {
                message, location, ..
            } => {
                texts.push(message);
                texts.extend(location.as_mut());
            }
            Outcome::Crashed { reason } | Outcome::Skipped { reason } => texts.push(reason),
            Outcome::Passed
            | Outcome::TimedOut { .. }
            | Outcome::OutputFlood { .. }
            | Outcome::Missing => {}
        }
    }
    texts
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
    let mut report = start_report(workbook, chapter, rubric, graded);
    let mut compiled_sources = rubric.dirs();
    compiled_sources.push(workbook.support_file());
    compiled_sources.push(graded.visible_tests.clone());
    compiled_sources.extend(prepared.copy.clone());
    let built = match compile::build(workbook, &prepared.dir, graded, &compiled_sources, build)? {
        compile::BuildOutcome::Built(built) => built,
        compile::BuildOutcome::Failed(failure) => {
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
        .iter()
        .filter(|name| prepared.rubric_name(name).is_some())
        .cloned()
        .collect();
    let visible_prefix = prepared.binary_name(&format!("{VISIBLE_MODULE}::"));
    let plan = plan_tests(
        rubric,
        &prepared,
        &available,
        visible_tests,
        &visible_prefix,
    );
    let started = Instant::now();
    let runs = run_planned(request, &prepared, &built, &plan, &available)?;
    report.run_ms = started.elapsed().as_millis() as u64;
    crate::timings::phase("checks run");
    record_results(&mut report, request, graded, &runs, &visible_prefix);
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

/// Every hidden check under its own limits, then (when wanted) every visible test the binary
/// holds under the visible tests' limits.
fn plan_tests(
    rubric: &Rubric,
    prepared: &Prepared,
    available: &[String],
    visible_tests: bool,
    visible_prefix: &str,
) -> Vec<Planned> {
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
    plan.extend(
        available
            .iter()
            .filter(|name| visible_tests && name.starts_with(visible_prefix))
            .map(|name| Planned {
                name: name.clone(),
                label: visible_id(name.trim_start_matches(visible_prefix)),
                limits: Limits {
                    wall: VISIBLE_TEST_LIMIT,
                    memory_bytes: TESTS_MEMORY_BYTES,
                    output_bytes: OUTPUT_LIMIT_BYTES,
                },
            }),
    );
    plan
}

/// Runs the plan in a scratch folder of this process's own, with a status line.
fn run_planned(
    request: &Request,
    prepared: &Prepared,
    built: &Built,
    plan: &[Planned],
    available: &[String],
) -> Result<Vec<TestRun>> {
    let Request {
        workbook,
        rubric,
        build,
        ..
    } = *request;
    // One scratch folder per grading process, so two gradings of one chapter (a `watch` and a
    // `check`, say) never share the checks' working folders.
    let scratch = workbook
        .work_dir()
        .join("runs")
        .join(prepared.dir.file_name().unwrap_or_default())
        .join(std::process::id().to_string());
    let parallel = std::thread::available_parallelism().map_or(2, usize::from);
    // The run of all tests together ends after the longest time one hidden check may take (the
    // visible tests' generous 10 s would make every hang cost 10 s before its own run).
    let together_wall = rubric
        .checks
        .iter()
        .map(|check| Duration::from_millis(check.timeout_ms))
        .max()
        .unwrap_or(Duration::from_secs(10));
    let status = Activity::start(
        Mode::for_stderr(build.show_progress),
        crate::lang::words::t(crate::lang::words::Key::StatusRunningChecks),
    );
    let runs = runner::run_all(
        &built.test_binary,
        plan,
        available,
        &scratch,
        &sources(workbook, rubric),
        parallel,
        together_wall,
        &status,
    )?;
    drop(status);
    // The checks are done with their folders; a failure to clean up only costs disk space.
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(runs)
}

/// One result per hidden check (in rubric order, with its points and book section), then one
/// per visible test that ran.
fn record_results(
    report: &mut Report,
    request: &Request,
    graded: &Graded,
    runs: &[TestRun],
    visible_prefix: &str,
) {
    let Request {
        workbook,
        chapter,
        rubric,
        ..
    } = *request;
    let headings = page_headings(&workbook.page(chapter));
    for (check, run) in rubric.checks.iter().zip(runs) {
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
        let test = run.name.trim_start_matches(visible_prefix);
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
            message: compiler_messages::shorten_paths(workbook, graded, &message),
            location: location.map(|l| compiler_messages::shorten_paths(workbook, graded, &l)),
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
