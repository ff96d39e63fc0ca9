//! `cargo xtask verify [chapters…]`: prove that every chapter is sound. The untouched exercise
//! fails every hidden check; the solution passes every check and is clippy- and rustfmt-clean;
//! each mutant is rejected by the check it names; the manifest, the folders and the book agree.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

use crate::grade::grader::{self, Grader, Target};

use crate::build::crate_copy;
use crate::build::harness;
use crate::build::manifest_toml::CrateManifest;
use crate::curriculum::mutants;
use crate::curriculum::shipped::{self, Shipped};
use crate::curriculum::shown_answers;
use crate::curriculum::translation::{self, Coverage};
use crate::curriculum::workbook::display_path;
use crate::curriculum::workbook::{Chapter, Rubric, Workbook, read_text_lf, rust_files};
use crate::grade::runner::{OUTPUT_LIMIT_BYTES, TESTS_MEMORY_BYTES};
use crate::report::lang::Lang;
use crate::report::model::{CheckResult, Report};
use crate::report::text::explain;
use crate::sandbox::{self, Ending, Limits};
use crate::util::{FolderLock, write_if_changed};

/// Prove every chapter (authors and CI): exercises fail, solutions pass, mutants are caught.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only these chapters (default: every ready chapter, plus the book-wide checks).
    pub chapters: Vec<String>,
    /// Skip the mutants (faster while writing a chapter).
    #[arg(long)]
    pub no_mutants: bool,
    /// Only bring the records of the shipped exercises (xtask/shipped/) up to date, after an
    /// exercise changed or a merge; nothing is graded.
    #[arg(long, conflicts_with = "no_mutants")]
    pub shipped_only: bool,
    /// How many chapters to verify at once (default: the number of cores). More hides more of
    /// the time spent waiting on checks' time limits, but a loaded machine makes a slow check
    /// look hung: keep it near the number of cores.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// Words every chapter page has in a `##` heading: the standard shape of a page.
const PAGE_SECTIONS: &[&str] = &["goals", "exercise", "pitfalls", "checklist", "references"];

/// Problems found so far, printed as they come (or sent to the thread that prints every step's
/// lines in order, when steps run side by side).
#[derive(Default)]
pub struct Findings {
    pub problems: Vec<String>,
    pub passed: usize,
    /// What could not be proven here because a check was skipped (no database, say).
    pub unproven: Vec<String>,
    /// Where lines go when they are not printed here: the step's index, and the printer.
    sent: Option<(usize, mpsc::Sender<Message>)>,
    /// Gradings done, and the time they spent compiling and running checks.
    pub graded: Spent,
}

/// Where a verify's gradings spent their time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spent {
    pub gradings: usize,
    pub reused_builds: usize,
    pub replayed_builds: usize,
    pub compile: Duration,
    pub run: Duration,
}

impl Spent {
    fn add(&mut self, report: &Report) {
        self.gradings += 1;
        self.reused_builds += usize::from(report.build_reused);
        self.replayed_builds += usize::from(report.build_replayed);
        self.compile += Duration::from_millis(report.compile_ms);
        self.run += Duration::from_millis(report.run_ms);
    }

    fn absorb(&mut self, other: Spent) {
        self.gradings += other.gradings;
        self.reused_builds += other.reused_builds;
        self.replayed_builds += other.replayed_builds;
        self.compile += other.compile;
        self.run += other.run;
    }

    /// `N gradings: compiling X s, checks Y s`.
    fn summary(&self) -> String {
        format!(
            "{} gradings ({} reused, {} compiled by rustc alone): compiling {:.1} s, running \
             checks {:.1} s",
            self.gradings,
            self.reused_builds,
            self.replayed_builds,
            self.compile.as_secs_f64(),
            self.run.as_secs_f64()
        )
    }
}

impl Findings {
    /// Findings of step `index`, whose lines go to `printer`.
    fn sent(index: usize, printer: mpsc::Sender<Message>) -> Self {
        Self {
            sent: Some((index, printer)),
            ..Self::default()
        }
    }

    /// Prints a line now, or sends it to the printer.
    pub fn line(&mut self, text: impl AsRef<str>) {
        match &self.sent {
            Some((index, printer)) => {
                // The printer outlives every step; a send can fail only once it is gone.
                let _ = printer.send(Message::Line(*index, text.as_ref().to_owned()));
            }
            None => println!("{}", text.as_ref()),
        }
    }

    /// Adds another set of findings (their lines already shown).
    fn absorb(&mut self, other: Findings) {
        self.problems.extend(other.problems);
        self.passed += other.passed;
        self.unproven.extend(other.unproven);
        self.graded.absorb(other.graded);
    }

    pub fn ok(&mut self, what: impl AsRef<str>) {
        self.passed += 1;
        self.line(format!("  ok    {}", what.as_ref()));
    }

    pub fn fail(&mut self, what: impl Into<String>) {
        let what = what.into();
        self.line(format!("  FAIL  {what}"));
        self.problems.push(what);
    }

    /// Something worth a look that is not a failure.
    pub fn note(&mut self, what: impl AsRef<str>) {
        self.line(format!("  note  {}", what.as_ref()));
    }

    pub fn unproven(&mut self, what: impl Into<String>) {
        let what = what.into();
        self.line(format!("  SKIP  {what}"));
        self.unproven.push(what);
    }

    pub fn require(&mut self, condition: bool, what: impl Into<String>) {
        if condition {
            self.ok(what.into());
        } else {
            self.fail(what);
        }
    }
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let started = Instant::now();
    let mut findings = Findings::default();
    let chapters = workbook.ready_chapters_or(&args.chapters)?;
    if args.shipped_only {
        for chapter in &chapters {
            verify_shipped_record(&workbook, chapter, &mut findings)?;
        }
        // A rewritten record is a failure until it is committed, as in a full verify.
        println!(
            "verify: {} passed, {} failed",
            findings.passed,
            findings.problems.len()
        );
        return Ok(if findings.problems.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    // The steps, in the order their findings are shown; they run side by side. Each weighs
    // about what it builds, so the lanes get equal shares.
    let mut steps: Vec<(usize, Step)> = Vec::new();
    if args.chapters.is_empty() {
        steps.push((
            BOOK_STEP_WEIGHT,
            Box::new(|workbook: &Workbook, _lane, findings: &mut Findings| {
                findings.line("the workbook");
                verify_layout(workbook, findings)?;
                findings.require(
                    crate::commands::figures::figures(workbook, true)?,
                    "every figure of the book is up to date (`cargo xtask figures` regenerates them)",
                );
                findings.require(
                    crate::tools::builds(workbook)?,
                    "the book builds (mdbook build book)",
                );
                Ok(())
            }),
        ));
    }
    for chapter in &chapters {
        let with_mutants = !args.no_mutants;
        let weight = 2 + if with_mutants {
            mutants::count(&workbook.mutants_dir(chapter))
        } else {
            0
        };
        steps.push((
            weight,
            Box::new(
                move |workbook: &Workbook, lane: usize, findings: &mut Findings| {
                    let started = Instant::now();
                    verify_chapter(workbook, chapter, with_mutants, lane, findings)?;
                    findings.line(format!(
                        "  ({} took {:.1} s; {})",
                        chapter.id,
                        started.elapsed().as_secs_f64(),
                        findings.graded.summary()
                    ));
                    Ok(())
                },
            ),
        ));
    }
    let linted = chapters.clone();
    steps.push((
        LINT_STEP_WEIGHT,
        Box::new(move |workbook: &Workbook, _lane, findings: &mut Findings| {
            findings.line("lint");
            lint_solutions(workbook, &linted, findings)
        }),
    ));
    let jobs = args.jobs.unwrap_or_else(default_jobs).max(1);
    // A lane's first build would otherwise compile every dependency again in its own folder.
    for lane in 1..jobs {
        let folder = harness::lane_target_dir(&workbook, lane);
        let copied = crate::build::target_seed::seed(&workbook, chapters.iter().copied(), &folder)?;
        if copied > 0 {
            println!(
                "(lane {lane}: {copied} dependency builds copied from {} to {})",
                display_path(&workbook, &workbook.target_dir()),
                display_path(&workbook, &folder)
            );
        }
    }
    run_steps(&workbook, steps, jobs, &mut findings)?;
    println!(
        "\nverify took {:.1} s ({jobs} at a time; {})",
        started.elapsed().as_secs_f64(),
        findings.graded.summary()
    );
    if !findings.unproven.is_empty() {
        println!(
            "not proven here, because checks were skipped ({}):",
            findings.unproven.len()
        );
        for what in &findings.unproven {
            println!("  ~ {what}");
        }
    }
    for problem in &findings.problems {
        println!("  - {problem}");
    }
    // The closing line: "N passed, N failed" alone after one word.
    println!(
        "verify: {} passed, {} failed",
        findings.passed,
        findings.problems.len()
    );
    if findings.problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

/// One part of a verify whose findings are shown together. It builds in its lane's target
/// folder (see [`harness::BuildOptions::lane`]).
type Step<'a> = Box<dyn FnOnce(&Workbook, usize, &mut Findings) -> Result<()> + Send + 'a>;

/// What the workbook's own step (figures, book) and the lint step weigh, in gradings.
const BOOK_STEP_WEIGHT: usize = 10;
const LINT_STEP_WEIGHT: usize = 10;

/// The number of cores: one lane of builds and checks each.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Which lane each step runs in: the heaviest first, each to the lane with the least weight so
/// far. A chapter always lands in the same lane while its weight stays the same, so its builds
/// stay incremental in that lane's target folder.
fn assign_lanes(weights: &[usize], lanes: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&index| (std::cmp::Reverse(weights[index]), index));
    let mut load = vec![0; lanes.max(1)];
    let mut lane_of = vec![0; weights.len()];
    for index in order {
        let lightest = (0..load.len())
            .min_by_key(|&lane| (load[lane], lane))
            .unwrap_or(0);
        lane_of[index] = lightest;
        load[lightest] += weights[index];
    }
    lane_of
}

/// Runs the steps in `jobs` lanes side by side, and prints each step's findings in order as soon
/// as it and every step before it are done. Each lane builds in a target folder of its own
/// (cargo builds one thing at a time in a folder), and each chapter keeps its own harness and
/// mutant folders, so lanes never share a file or a lock.
fn run_steps(
    workbook: &Workbook,
    steps: Vec<(usize, Step)>,
    jobs: usize,
    findings: &mut Findings,
) -> Result<()> {
    if jobs == 1 {
        for (_, step) in steps {
            step(workbook, 0, findings)?;
        }
        return Ok(());
    }
    let weights: Vec<usize> = steps.iter().map(|(weight, _)| *weight).collect();
    let lane_of = assign_lanes(&weights, jobs);
    let mut lanes: Vec<VecDeque<(usize, Step)>> = (0..jobs).map(|_| VecDeque::new()).collect();
    for (index, (_, step)) in steps.into_iter().enumerate() {
        lanes[lane_of[index]].push_back((index, step));
    }
    let lanes = Mutex::new(lanes);
    let (printer, messages) = mpsc::channel::<Message>();
    std::thread::scope(|scope| {
        for lane in 0..jobs {
            let printer = printer.clone();
            let lanes = &lanes;
            scope.spawn(move || {
                while let Some((index, step)) = next_step(lanes, lane) {
                    let mut step_findings = Findings::sent(index, printer.clone());
                    let result = step(workbook, lane, &mut step_findings);
                    step_findings.sent = None;
                    if printer
                        .send(Message::Done(index, step_findings, result))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        }
        drop(printer);
        // The lines of the first unfinished step are printed as they come; later steps' lines
        // wait until every step before them is done.
        let mut waiting: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut done = BTreeMap::new();
        let mut shown = 0;
        let mut first_error = None;
        for message in messages {
            match message {
                Message::Line(index, line) if index == shown => println!("{line}"),
                Message::Line(index, line) => waiting.entry(index).or_default().push(line),
                Message::Done(index, step_findings, result) => {
                    done.insert(index, (step_findings, result));
                }
            }
            while let Some((step_findings, result)) = done.remove(&shown) {
                findings.absorb(step_findings);
                if let Err(error) = result {
                    first_error.get_or_insert(error);
                }
                shown += 1;
                for line in waiting.remove(&shown).unwrap_or_default() {
                    println!("{line}");
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}

/// The next step for `lane`: the first of its own, or else the last of the fullest other lane
/// (its builds start cold in this lane's folder, but the lanes finish together).
fn next_step<'a>(
    lanes: &Mutex<Vec<VecDeque<(usize, Step<'a>)>>>,
    lane: usize,
) -> Option<(usize, Step<'a>)> {
    let mut lanes = lanes.lock().expect("a verify lane panicked");
    if let Some(step) = lanes[lane].pop_front() {
        return Some(step);
    }
    let fullest = (0..lanes.len()).max_by_key(|&other| lanes[other].len())?;
    lanes[fullest].pop_back()
}

/// What a step running beside others tells the printer.
pub enum Message {
    /// A line of step `index`.
    Line(usize, String),
    /// Step `index` is done: its findings (lines already sent) and how it ended.
    Done(usize, Findings, Result<()>),
}

/// Checks one chapter completely.
pub fn verify_chapter(
    workbook: &Workbook,
    chapter: &Chapter,
    with_mutants: bool,
    lane: usize,
    findings: &mut Findings,
) -> Result<()> {
    findings.line(chapter.to_string());
    let rubric = match Rubric::for_chapter(workbook, chapter, None) {
        Ok(rubric) => rubric,
        Err(error) => {
            findings.fail(format!("{}: {error:#}", chapter.id));
            return Ok(());
        }
    };
    verify_structure(workbook, chapter, &rubric, findings)?;
    let build = harness::BuildOptions {
        lane,
        ..harness::BuildOptions::default()
    };
    verify_examples(workbook, chapter, build, findings)?;

    let grader = Grader {
        build,
        ..Grader::new(workbook)
    };
    let exercise = grader.grade(chapter, &Target::Exercise)?;
    findings.graded.add(&exercise);
    verify_exercise_fails(chapter, &exercise, findings);

    let solution = grader.grade(chapter, &Target::Solution)?;
    findings.graded.add(&solution);
    verify_solution_passes(chapter, &rubric, &solution, findings);

    if rubric.learner_tests.is_some() {
        // The mutants are the checks: the solution's reference suite must kill every one, which
        // the solution's passing report has just shown.
        findings.require(
            rubric.checks.iter().any(|c| c.id.starts_with("kills.")),
            format!(
                "{}: the reference suite is graded against mutants",
                chapter.id
            ),
        );
    } else if with_mutants {
        verify_mutants(&grader, chapter, &rubric, findings)?;
    }
    Ok(())
}

/// The chapter's crates, rubric and page agree with each other and with the rules.
fn verify_structure(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    verify_crates(workbook, chapter, rubric, findings)?;
    findings.require(
        !rubric.hints.is_empty(),
        format!("{}: has hints", chapter.id),
    );
    verify_shipped_record(workbook, chapter, findings)?;
    verify_translation(chapter, rubric, findings);
    verify_page(workbook, chapter, rubric, findings);
    verify_no_answer_on_page(workbook, chapter, rubric, findings)
}

/// The rubric's Japanese (`ja.toml`), when there is one, has exactly its hints and rules; a
/// chapter without one is counted, not failed.
fn verify_translation(chapter: &Chapter, rubric: &Rubric, findings: &mut Findings) {
    let id = &chapter.id;
    match translation::coverage(&rubric.dir, rubric, Lang::Ja) {
        Coverage::Complete => findings.ok(format!(
            "{id}: ja.toml has its {} hints and {} rules",
            rubric.hints.len(),
            rubric.checks.len()
        )),
        Coverage::Missing { hints, titles } => findings.note(format!(
            "{id}: no ja.toml: {hints} hints and {titles} rules are English only"
        )),
        Coverage::Inconsistent(problems) => {
            findings.fail(format!("{id}: ja.toml: {}", problems.join("; ")));
        }
    }
}

/// Package names, given files, what the exercise leaves to do and that the solution does it all.
fn verify_crates(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    for (dir, expected) in [
        (workbook.exercise_dir(chapter), chapter.crate_name()),
        (
            workbook.solution_dir(chapter),
            chapter.solution_crate_name(),
        ),
    ] {
        let shown = display_path(workbook, &dir);
        match CrateManifest::read(&dir).and_then(|m| m.package_name()) {
            Ok(name) => findings.require(
                name == expected,
                format!("{id}: {shown} is the package `{expected}`"),
            ),
            Err(error) => findings.fail(format!("{id}: {shown}: {error:#}")),
        }
    }
    for given in &rubric.given {
        let exercise = read_text_lf(&workbook.exercise_dir(chapter).join(given));
        let solution = read_text_lf(&workbook.solution_dir(chapter).join(given));
        let same = matches!((&exercise, &solution), (Ok(a), Ok(b)) if a == b);
        findings.require(
            same,
            format!("{id}: the given file {given} is identical in exercise and solution"),
        );
    }
    let learner_file = workbook.exercise_dir(chapter).join(rubric.learner_file());
    let shipped = std::fs::read_to_string(&learner_file).unwrap_or_default();
    if rubric.learner_tests.is_some() {
        let has_tests = shipped
            .lines()
            .map(str::trim_start)
            .any(|line| line.starts_with("#[test]") || line.starts_with("#[tokio::test"));
        findings.require(
            !has_tests,
            format!(
                "{id}: the exercise's {} ships with no tests",
                rubric.learner_file()
            ),
        );
    } else {
        findings.require(
            shipped.contains("todo!("),
            format!("{id}: the exercise has todo!()s to replace"),
        );
    }
    let solution_sources = rust_files(&workbook.solution_dir(chapter).join("src"))?;
    let unfinished = solution_sources.iter().any(|file| {
        std::fs::read_to_string(file)
            .is_ok_and(|text| text.contains("todo!(") || text.contains("unimplemented!("))
    });
    findings.require(
        !unfinished,
        format!("{id}: the solution has no todo!() or unimplemented!()"),
    );
    Ok(())
}

/// The page exists, has the standard sections, and has every section a check points to.
fn verify_page(workbook: &Workbook, chapter: &Chapter, rubric: &Rubric, findings: &mut Findings) {
    let id = &chapter.id;
    let page = workbook.page(chapter);
    findings.require(
        page.is_file(),
        format!(
            "{id}: the book page {} exists",
            display_path(workbook, &page)
        ),
    );
    for check in &rubric.checks {
        if let Some(section) = &check.section {
            findings.require(
                grader::page_has_section(&page, section),
                format!(
                    "{id}: {} points to §{section}, a heading of the page",
                    check.id
                ),
            );
        }
    }
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    let headings: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with("## "))
        .map(str::to_lowercase)
        .collect();
    let missing: Vec<String> = PAGE_SECTIONS
        .iter()
        .filter(|section| !headings.iter().any(|heading| heading.contains(*section)))
        .map(|section| section.to_string())
        .collect();
    findings.require(
        missing.is_empty(),
        format!(
            "{id}: the page has the standard sections ({}){}",
            PAGE_SECTIONS.join(", "),
            stray_list("missing", &missing)
        ),
    );
}

/// The page teaches without handing over the answer: no code block of the rendered page shares a
/// run of tokens with a solution function the learner writes (see `shown_answers`).
fn verify_no_answer_on_page(
    workbook: &Workbook,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let solution_dir = workbook.solution_dir(chapter);
    let answers = shown_answers::answers(
        &shown_answers::rust_sources(&workbook.exercise_dir(chapter))?,
        &shown_answers::rust_sources(&solution_dir)?,
        &rubric.given,
        &display_path(workbook, &solution_dir),
    );
    // The page and its sub-pages (`book/src/<stem>/*.md`).
    let mut pages = vec![workbook.page(chapter)];
    let sub_pages = workbook.page(chapter).with_extension("");
    if sub_pages.is_dir() {
        for file in shipped::crate_files(&sub_pages)? {
            if file.ends_with(".md") {
                pages.push(sub_pages.join(file));
            }
        }
    }
    let mut shown_anywhere = false;
    for page in &pages {
        let shown_page = display_path(workbook, page);
        let lines = match shown_answers::expand_includes(page) {
            Ok(lines) => lines,
            Err(error) => {
                findings.fail(format!("{id}: {shown_page}: {error:#}"));
                continue;
            }
        };
        let shown = shown_answers::shown_answers(&shown_answers::code_blocks(&lines), &answers);
        for finding in &shown {
            findings.fail(format!("{id}: {}", finding.message(&shown_page)));
        }
        shown_anywhere |= !shown.is_empty();
    }
    if !shown_anywhere {
        findings.ok(format!(
            "{id}: no page of the chapter ({}) shows any of the {} solution functions the exercise \
             asks for (no run of {} tokens)",
            pages.len(),
            answers.len(),
            shown_answers::RUN_TOKENS
        ));
    }
    Ok(())
}

/// The record of the shipped exercise (`xtask/shipped/<chapter>.txt`) matches the exercise; a
/// stale one is rewritten, and the finding says to commit it.
fn verify_shipped_record(
    workbook: &Workbook,
    chapter: &Chapter,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let path = Shipped::path(workbook, chapter);
    let shown = display_path(workbook, &path);
    let now = Shipped::of_folder(&workbook.exercise_dir(chapter))?;
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    let text = now.render(chapter);
    if recorded == text {
        findings.ok(format!("{id}: {shown} records the exercise as it is"));
    } else {
        write_if_changed(&path, &text)?;
        findings.fail(format!(
            "{id}: {shown} did not record the exercise as it is; it has been rewritten: commit it \
             with the exercise (reset and grade read it)"
        ));
    }
    Ok(())
}

fn verify_exercise_fails(chapter: &Chapter, report: &Report, findings: &mut Findings) {
    let id = &chapter.id;
    if !report.compiled {
        findings.fail(format!(
            "{id}: the untouched exercise must compile (it fails only its checks)"
        ));
        return;
    }
    let passing: Vec<&str> = report
        .hidden()
        .filter(|r| r.outcome.passed())
        .map(|r| r.id.as_str())
        .collect();
    let skipped = report.hidden().filter(|r| r.outcome.skipped()).count();
    if skipped > 0 {
        findings.unproven(format!(
            "{id}: {skipped} checks were skipped on the untouched exercise, so they are not proven to fail on it"
        ));
    }
    findings.require(
        passing.is_empty(),
        if passing.is_empty() {
            format!(
                "{id}: the untouched exercise fails all {} hidden checks that ran",
                report.hidden().filter(|r| r.outcome.failed()).count()
            )
        } else {
            format!(
                "{id}: checks that pass on the untouched exercise cannot fail: {}",
                passing.join(", ")
            )
        },
    );
}

fn verify_solution_passes(
    chapter: &Chapter,
    rubric: &Rubric,
    report: &Report,
    findings: &mut Findings,
) {
    let id = &chapter.id;
    if let Some(failure) = &report.compile_failure {
        findings.fail(format!(
            "{id}: the solution does not compile with its checks:\n{}",
            failure.first_message()
        ));
        return;
    }
    let skipped: Vec<&CheckResult> = report
        .results
        .iter()
        .filter(|r| r.outcome.skipped())
        .collect();
    if let Some(first) = skipped.first() {
        let ids: Vec<&str> = skipped.iter().map(|r| r.id.as_str()).collect();
        findings.unproven(format!(
            "{id}: {} checks were skipped on the solution ({}): {}",
            skipped.len(),
            ids.join(", "),
            explain(&first.outcome)
        ));
    }
    for result in &report.results {
        if result.outcome.failed() {
            findings.fail(format!(
                "{id}: the solution fails {}: {}",
                result.id,
                explain(&result.outcome)
            ));
        }
    }
    let all_pass = report.passed;
    findings.require(
        all_pass,
        format!(
            "{id}: the solution passes all {} checks and {} visible tests (checks ran in {} ms)",
            report.hidden().count(),
            report.visible().count(),
            report.run_ms
        ),
    );
    if rubric.learner_tests.is_some() {
        return;
    }
    // Every test in the check files must be in the rubric, or it would never be graded.
    let listed: Vec<String> = rubric.checks.iter().map(|c| c.test_name()).collect();
    let strays: Vec<String> = report
        .available_tests
        .iter()
        .filter(|name| !name.starts_with(harness::VISIBLE_MODULE) && !listed.contains(name))
        .cloned()
        .collect();
    findings.require(
        strays.is_empty(),
        format!(
            "{id}: every test in the check files is in the rubric{}",
            stray_list("not in the rubric", &strays)
        ),
    );
}

/// ` (label: a, b)`, or nothing for an empty list.
fn stray_list(label: &str, strays: &[String]) -> String {
    if strays.is_empty() {
        String::new()
    } else {
        format!(" ({label}: {})", strays.join(", "))
    }
}

fn verify_mutants(
    grader: &Grader,
    chapter: &Chapter,
    rubric: &Rubric,
    findings: &mut Findings,
) -> Result<()> {
    let workbook = grader.workbook;
    let id = &chapter.id;
    let all = match mutants::load_all(&workbook.mutants_dir(chapter)) {
        Ok(all) => all,
        Err(error) => {
            findings.fail(format!("{id}: {error:#}"));
            return Ok(());
        }
    };
    findings.require(!all.is_empty(), format!("{id}: has mutants"));
    for mutant in &all {
        let unknown: Vec<&str> = mutant
            .rejected_by
            .iter()
            .filter(|named| !rubric.checks.iter().any(|check| &check.id == *named))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            findings.fail(format!(
                "{id}: mutant {} names {}, which is not a check of the rubric",
                mutant.name,
                unknown.join(", ")
            ));
            continue;
        }
        // Only the checks that name the mutant run: they are what must reject it, and a hung
        // mutant then waits out their time limits alone. The exercise's visible tests would
        // tell nothing, and wait out their 10 s limits.
        let named = Grader {
            visible_tests: false,
            only_checks: Some(mutant.rejected_by.clone()),
            build: grader.build,
            ..Grader::new(workbook)
        };
        let report = match named.grade(chapter, &Target::Mutant(mutant.name.clone())) {
            Ok(report) => {
                findings.graded.add(&report);
                report
            }
            Err(error) => {
                findings.fail(format!("{id}: mutant {}: {error:#}", mutant.name));
                continue;
            }
        };
        if let Some(failure) = &report.compile_failure {
            findings.fail(format!(
                "{id}: mutant {} does not compile (a mutant must be wrong, not broken):\n{}",
                mutant.name,
                failure.first_message()
            ));
            continue;
        }
        verify_rejection(chapter, mutant, &report, findings);
    }
    let unnamed: Vec<&str> = rubric
        .checks
        .iter()
        .filter(|check| !all.iter().any(|m| m.rejected_by.contains(&check.id)))
        .map(|check| check.id.as_str())
        .collect();
    if !unnamed.is_empty() {
        findings.note(format!(
            "{id}: no mutant names {} of {} checks ({}); each is proven only to fail on the \
             untouched exercise",
            unnamed.len(),
            rubric.checks.len(),
            unnamed.join(", ")
        ));
    }
    Ok(())
}

/// Every check a mutant names fails on it (a skipped one leaves it unproven).
fn verify_rejection(
    chapter: &Chapter,
    mutant: &mutants::Mutant,
    report: &Report,
    findings: &mut Findings,
) {
    let id = &chapter.id;
    let named = mutant.rejected_by.join(", ");
    let skipped: Vec<String> = mutant
        .rejected_by
        .iter()
        .filter_map(|check| report.result(check))
        .filter(|r| r.outcome.skipped())
        .map(|r| format!("{} ({})", r.id, explain(&r.outcome)))
        .collect();
    if !skipped.is_empty() {
        findings.unproven(format!(
            "{id}: mutant {} is not proven rejected: {} skipped",
            mutant.name,
            skipped.join(", ")
        ));
        return;
    }
    let survived: Vec<&str> = mutant
        .rejected_by
        .iter()
        .filter(|check| !report.result(check).is_some_and(|r| r.outcome.failed()))
        .map(String::as_str)
        .collect();
    if survived.is_empty() {
        findings.ok(format!(
            "{id}: mutant {} is rejected by {named}",
            mutant.name
        ));
    } else {
        findings.fail(format!(
            "{id}: mutant {} survives {} ({})",
            mutant.name,
            survived.join(", "),
            mutant.description
        ));
    }
}

/// clippy -D warnings on the crates `linted` selects, and rustfmt on those `formatted` selects
/// (cargo's `-p NAME…` or `--manifest-path PATH`); `names` says which they are.
fn lint(
    workbook: &Workbook,
    findings: &mut Findings,
    names: &str,
    linted: &[OsString],
    formatted: &[OsString],
) -> Result<()> {
    let mut clippy = Command::new(crate::util::cargo());
    clippy
        .args(["clippy", "--quiet", "--all-targets"])
        .args(linted)
        .args(["--", "-D", "warnings"]);
    findings.require(
        quiet_success(&mut clippy, &workbook.root)?,
        format!("clippy -D warnings is clean on {names}"),
    );
    let mut fmt = Command::new(crate::util::cargo());
    fmt.args(["fmt", "--check"]).args(formatted);
    findings.require(
        quiet_success(&mut fmt, &workbook.root)?,
        format!("rustfmt is clean on {names}"),
    );
    Ok(())
}

/// clippy -D warnings and rustfmt on the solutions (and the workbook's own crates).
fn lint_solutions(
    workbook: &Workbook,
    chapters: &[&Chapter],
    findings: &mut Findings,
) -> Result<()> {
    let mut packages: Vec<String> = chapters.iter().map(|c| c.solution_crate_name()).collect();
    packages.extend(["xtask", "workbook-figures"].map(str::to_owned));
    let selected = |names: &[String]| -> Vec<OsString> {
        names
            .iter()
            .flat_map(|name| ["-p".into(), name.into()])
            .collect()
    };
    // The exercises are shipped code too: formatted, though unfinished.
    let mut formatted = packages.clone();
    formatted.extend(chapters.iter().map(|chapter| chapter.crate_name()));
    lint(
        workbook,
        findings,
        &packages.join(", "),
        &selected(&packages),
        &selected(&formatted),
    )?;
    // The launcher is a workspace of its own (xtask/launcher/Cargo.toml says why).
    let launcher: Vec<OsString> = vec![
        "--manifest-path".into(),
        workbook
            .root
            .join(crate::build::fast_path::LAUNCHER_MANIFEST)
            .into(),
    ];
    let mut linted = launcher.clone();
    linted.extend(["--target-dir".into(), workbook.target_dir().into()]);
    lint(workbook, findings, "the launcher", &linted, &launcher)?;
    // The hidden checks are code too, though no crate of the workspace holds them.
    let mut check_files = vec![workbook.support_file()];
    for chapter in chapters {
        check_files.extend(crate::curriculum::workbook::rust_files(
            &workbook.checks_dir(chapter),
        )?);
    }
    let mut rustfmt = Command::new("rustfmt");
    rustfmt
        .args(["--check", "--edition", "2024"])
        .args(&check_files);
    findings.require(
        quiet_success(&mut rustfmt, &workbook.root)?,
        "rustfmt is clean on the chapters' hidden checks",
    );
    Ok(())
}

/// Runs a command in `dir`, showing its output only when it fails.
pub fn quiet_success(command: &mut Command, dir: &Path) -> Result<bool> {
    let output = command
        .current_dir(dir)
        .output()
        .with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        print!("{}", String::from_utf8_lossy(&output.stdout));
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output.status.success())
}

/// The manifest, the folders and book/src/SUMMARY.md must agree.
fn verify_layout(workbook: &Workbook, findings: &mut Findings) -> Result<()> {
    let summary_path = workbook.root.join("book/src/SUMMARY.md");
    let summary = std::fs::read_to_string(&summary_path).unwrap_or_default();
    findings.require(!summary.is_empty(), "book/src/SUMMARY.md exists");
    for part in &workbook.parts {
        findings.require(
            summary.contains(&format!("# {}", part.title)),
            format!("SUMMARY.md has the part \"{}\"", part.title),
        );
    }
    for chapter in workbook.chapters() {
        let entry = if chapter.ready {
            format!("[{}]({}.md)", chapter.title, chapter.stem())
        } else {
            format!("[{}]()", chapter.title)
        };
        let kind = if chapter.ready {
            "a page"
        } else {
            "a draft entry"
        };
        findings.require(
            summary.contains(&entry),
            format!("SUMMARY.md lists {} as {kind}: {entry}", chapter.id),
        );
        let folders = [
            workbook.exercise_dir(chapter),
            workbook.solution_dir(chapter),
            workbook.checks_dir(chapter),
        ];
        if !chapter.ready {
            let stray: Vec<String> = folders
                .iter()
                .filter(|dir| dir.exists())
                .map(|dir| display_path(workbook, dir))
                .collect();
            findings.require(
                stray.is_empty(),
                format!(
                    "{}: a draft chapter has no folders yet{}",
                    chapter.id,
                    stray_list("present", &stray)
                ),
            );
        }
    }
    for folder in ["exercises", "solutions", "xtask/checks", "xtask/mutants"] {
        let dir = workbook.root.join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.path().is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let known = workbook
                .chapters()
                .any(|c| name == c.stem() || name == c.id);
            findings.require(
                known,
                format!("{folder}/{name} belongs to a chapter of the manifest"),
            );
        }
    }
    Ok(())
}

/// The page's "predict, then run" programs (`exercises/<chapter>/examples/*.rs`) compile and run
/// against the solution: built as examples of a copy of the solution that carries the exercise's
/// library name, each run in the sandbox and expected to exit successfully.
fn verify_examples(
    workbook: &Workbook,
    chapter: &Chapter,
    build: harness::BuildOptions,
    findings: &mut Findings,
) -> Result<()> {
    let id = &chapter.id;
    let exercise = workbook.exercise_dir(chapter);
    let examples: Vec<(String, String)> = rust_files(&exercise.join("examples"))?
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            Ok((format!("examples/{name}"), text))
        })
        .collect::<Result<_>>()?;
    if examples.is_empty() {
        return Ok(());
    }
    let dir = workbook.work_dir().join("examples").join(id);
    let _lock = FolderLock::acquire(&dir)?;
    crate_copy::write_crate_copy(
        &workbook.solution_dir(chapter),
        &dir,
        &crate_copy::CrateCopy {
            package: &format!("{}_examples", chapter.crate_name()),
            library: Some(&chapter.crate_name()),
            replaced: &examples,
            ..crate_copy::CrateCopy::default()
        },
    )?;
    let copy = harness::Graded::at(&dir, "the solution".to_owned(), "examples")?;
    let built = harness::cargo_build(
        workbook,
        &dir,
        &copy,
        &["build", "--examples"],
        build,
        false,
    )?;
    let binaries = match built {
        harness::BuildOutcome::Built(built) => built.binaries,
        harness::BuildOutcome::Failed(failure) => {
            findings.fail(format!(
                "{id}: the examples do not compile against the solution:\n{}",
                failure.first_message()
            ));
            return Ok(());
        }
    };
    let scratch = dir.join("runs").join(std::process::id().to_string());
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let limits = Limits {
        wall: Duration::from_secs(30),
        memory_bytes: TESTS_MEMORY_BYTES,
        output_bytes: OUTPUT_LIMIT_BYTES,
    };
    for (name, _) in &examples {
        let stem = name.trim_start_matches("examples/").trim_end_matches(".rs");
        let Some(binary) = binaries.iter().find(|binary| binary.target == stem) else {
            findings.fail(format!("{id}: {name} built no program"));
            continue;
        };
        let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
        let mut command = Command::new(&binary.path);
        command.current_dir(&scratch).env("NO_COLOR", "1");
        let finished = sandbox::run(command, limits, &stdout, &stderr)?;
        let ok = matches!(&finished.ending, Ending::Exited(status) if status.success());
        if ok {
            findings.ok(format!(
                "{id}: {name} compiles and runs against the solution ({:.1} s)",
                finished.elapsed.as_secs_f64()
            ));
        } else {
            let err = crate::grade::runner::read_head(&stderr, 4_000);
            findings.fail(format!(
                "{id}: {name} fails against the solution ({:?}):\n{}",
                finished.ending,
                err.trim()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::assign_lanes;

    #[test]
    fn lanes_get_equal_shares_and_keep_them_from_run_to_run() {
        let weights = [10, 64, 20, 36, 35, 2, 10];
        let lanes = assign_lanes(&weights, 2);
        let load = |lane| -> usize {
            weights
                .iter()
                .zip(&lanes)
                .filter(|(_, l)| **l == lane)
                .map(|(w, _)| w)
                .sum()
        };
        assert_eq!(load(0) + load(1), weights.iter().sum::<usize>());
        assert!(load(0).abs_diff(load(1)) <= 10, "{lanes:?}");
        assert_eq!(lanes, assign_lanes(&weights, 2));
    }

    #[test]
    fn a_lane_takes_its_own_steps_first_then_the_last_of_the_fullest_lane() {
        let step =
            |index: usize| -> (usize, super::Step<'static>) { (index, Box::new(|_, _, _| Ok(()))) };
        let lanes = std::sync::Mutex::new(vec![
            VecDeque::from([step(0)]),
            VecDeque::from([step(1), step(2), step(3)]),
        ]);
        let order: Vec<usize> = std::iter::from_fn(|| super::next_step(&lanes, 0))
            .map(|(index, _)| index)
            .collect();
        assert_eq!(order, [0, 3, 2, 1]);
    }

    #[test]
    fn one_lane_takes_everything() {
        assert_eq!(assign_lanes(&[3, 1, 2], 1), vec![0, 0, 0]);
    }
}
