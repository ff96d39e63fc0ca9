//! Grading a learner's *tests*: the suite runs against the shipped code (it must pass) and
//! against every mutant (it should fail), and each mutant it kills earns that mutant's points.
//! A chapter opts in with `[learner-tests]` in its rubric; nothing else in the grader changes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::report::model::{CheckKind, CheckResult, Report, Timing};

use crate::grade::runner::{OUTPUT_LIMIT_BYTES, TESTS_MEMORY_BYTES};

use crate::grade::request::Request;

use crate::build::compile;
use crate::build::compile::BuildOutcome;
use crate::build::crate_copy;
use crate::build::crate_copy::CrateCopy;
use crate::build::harness::{self, Graded};
use crate::curriculum::mutants::{self, Mutant};
use crate::curriculum::shipped::Shipped;
use crate::curriculum::translation;
use crate::curriculum::workbook::{
    LearnerTests, Rubric, SUITE_FAST, SUITE_GREEN, display_path, kill_check_id,
};
use crate::grade::request::start_report;
use crate::grade::runner::{self, RunTo};
use crate::grade::suite_rules;
use crate::lang::{
    self,
    words::{Key, t, tf},
};
use crate::report::model::Outcome;
use crate::sandbox::{Ending, Limits};
use crate::util::{Shuffler, stable_hash};

/// What one run of the suite showed.
struct SuiteRun {
    passed: usize,
    failed: Vec<String>,
    /// Set when a test binary did not finish normally (a hang, a crash).
    trouble: Option<String>,
    elapsed: Duration,
    peak_memory_kib: u64,
}

impl SuiteRun {
    fn green(&self) -> bool {
        self.failed.is_empty() && self.trouble.is_none() && self.passed > 0
    }
}

/// Grades a learner-tests chapter.
pub fn grade(request: &Request, spec: &LearnerTests) -> Result<Report> {
    let Request {
        workbook,
        chapter,
        rubric,
        graded,
        build,
        ..
    } = *request;
    let mut report = start_report(workbook, chapter, rubric, graded);
    // The code under test always comes from the shipped exercise, as its record says, even when
    // the learner changed it: the suite meets the real code.
    let shipped = Shipped::load(workbook, chapter)?;
    let mut under_test = Vec::new();
    for file in &spec.under_test {
        let text = shipped.text(workbook, chapter, file)?;
        under_test.push((file.clone(), text));
    }
    let (base, package) = suite_folder(request);
    let _lock = crate::util::FolderLock::acquire(&base)?;
    let learner_path = display_path(workbook, &graded.dir);

    let started = Instant::now();
    let suite = Suite {
        workbook,
        graded,
        under_test: &under_test,
        spec,
        build,
        building_micros: AtomicU64::new(0),
    };
    let run = match suite.build_and_run(&base.join("correct"), &package)? {
        BuildOutcome::Built(run) => run,
        BuildOutcome::Failed(mut failure) => {
            let copy = display_path(workbook, &base.join("correct"));
            for error in &mut failure.errors {
                error.rendered = error
                    .rendered
                    .replace(&format!("{copy}/"), &format!("{learner_path}/"));
                error.file = error.file.take().map(|f| f.replace(&copy, &learner_path));
            }
            report.start_here = failure.first_location();
            report.compile_failure = Some(failure);
            report.compile_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
    };
    report.compiled = true;
    let slots = Slots::prepare(workbook, &graded.dir, &base, &package)?;
    let all = mutants::load_all(&rubric.mutants_dir(workbook, chapter))?;
    let verdict = judge(request, spec, &suite, &shipped, &run, &slots, &all)?;
    let building = Duration::from_micros(suite.building_micros.load(Ordering::Relaxed));
    report.compile_ms = building.as_millis() as u64;
    report.run_ms = started.elapsed().saturating_sub(building).as_millis() as u64;
    report.results = results(rubric, spec, &run, &all, verdict);
    report.total();
    if !report.passed {
        let suite = format!("{learner_path}/{}", spec.suite);
        report.start_here = Some(tf(Key::YourTests, &[&suite]));
    }
    Ok(report)
}

/// The folder the suite's copies are built in (one per graded crate), and the copies' package
/// name. Each copy is a package of its own name (cargo tells builds apart by it); the library
/// inside keeps the crate's name, so the learner's tests can `use` it.
fn suite_folder(request: &Request) -> (PathBuf, String) {
    let (workbook, chapter) = (request.workbook, request.chapter);
    let base = workbook.work_dir().join("suites").join(format!(
        "{}-{:08x}",
        chapter.id,
        stable_hash(&request.graded.dir.display().to_string()) as u32
    ));
    let key = base
        .file_name()
        .map(|n| n.to_string_lossy().replace('-', "_"))
        .unwrap_or_default();
    let package = format!("{}_suite_{key}", chapter.crate_name());
    (base, package)
}

/// What the suite's runs showed: whether it is green on the correct code (and on every copy of
/// it written differently), and which mutants it killed.
struct Verdict {
    green: bool,
    green_outcome: Outcome,
    killed: Vec<Option<Outcome>>,
}

/// Judges the suite: green on the correct code, within its own rules, then (only when green) run
/// against each rewrite of the correct code and each mutant, several at a time.
fn judge(
    request: &Request,
    spec: &LearnerTests,
    suite: &Suite,
    shipped: &Shipped,
    run: &SuiteRun,
    slots: &Slots,
    all: &[Mutant],
) -> Result<Verdict> {
    let mut verdict = Verdict {
        green: run.green(),
        green_outcome: Outcome::Passed,
        killed: vec![None; all.len()],
    };
    if !verdict.green {
        verdict.green_outcome = failed(not_green(run));
    }
    if verdict.green
        && let Some(message) = suite_rules::refusal(&suite.own_files(shipped)?, suite.under_test)
    {
        verdict.green = false;
        verdict.green_outcome = failed(message);
    }
    if !verdict.green {
        return Ok(verdict);
    }
    let rewrites = spec
        .rewrites
        .iter()
        .map(|file| mutants::load(&request.rubric.dir.join(file)))
        .collect::<Result<Vec<_>>>()?;
    let trials = trial_order(
        &rewrites,
        all,
        slots.members.len(),
        &mut Shuffler::unpredictable(),
    );
    let runs = suite.build_and_run_in_slots(slots, &trials)?;
    // A description in the learner's language, where the chapter's translation has it.
    let described = |copy: &Mutant| {
        translation::description(request.rubric, lang::current(), &copy.name)
            .unwrap_or_else(|| copy.description.clone())
    };
    for (trial, run) in trials.iter().zip(runs) {
        match trial {
            Trial::Rewrite(rewrite) => {
                if verdict.green
                    && let Some(message) = fails_on_rewrite(&described(rewrite), &run)
                {
                    verdict.green = false;
                    verdict.green_outcome = failed(message);
                }
            }
            Trial::Mutant(index, mutant) => {
                verdict.killed[*index] = Some(kill_outcome(mutant, &described(mutant), run));
            }
        }
    }
    Ok(verdict)
}

/// The rubric's rows: green, fast (on virtual time), and one per mutant killed; the last two
/// count only when the suite is green.
fn results(
    rubric: &Rubric,
    spec: &LearnerTests,
    run: &SuiteRun,
    all: &[Mutant],
    verdict: Verdict,
) -> Vec<CheckResult> {
    let green = verdict.green;
    let fast = if !green {
        failed(t(Key::SuiteNotMeasured).to_owned())
    } else if run.elapsed.as_millis() as u64 > spec.max_suite_ms {
        failed(tf(
            Key::SuiteTooSlow,
            &[&run.elapsed.as_millis(), &spec.max_suite_ms],
        ))
    } else {
        Outcome::Passed
    };
    let mut results = vec![
        row(rubric, SUITE_GREEN, verdict.green_outcome, run),
        row(rubric, SUITE_FAST, fast, run),
    ];
    for (mutant, outcome) in all.iter().zip(verdict.killed) {
        let outcome = match outcome {
            Some(outcome) if green => outcome,
            _ => failed(t(Key::SuiteNotCounted).to_owned()),
        };
        results.push(row(rubric, &kill_check_id(&mutant.name), outcome, run));
    }
    results
}

/// The folder, under a suite's work folder, where the mutants (and the rewrites) are built: a
/// workspace of [`SLOTS`] copies of the crate.
const SLOTS_FOLDER: &str = "slots";

/// The copies. Every rewrite runs in each of them, so that nothing but the code under test tells
/// a rewrite from a mutant (not the package name, not the folder).
const SLOTS: [&str; 4] = ["a", "b", "c", "d"];

/// How many copies one cargo run builds side by side: a round. The slots take turns by rounds,
/// so that while one round's suites run, the next round builds in the other slots.
const ROUND: usize = 2;

/// The workspace of copies where mutants and rewrites are built.
struct Slots {
    root: PathBuf,
    /// Each copy's folder and package name, in the order of [`SLOTS`].
    members: Vec<(PathBuf, String)>,
}

impl Slots {
    /// Writes the workspace of copies of `source` (the learner's crate) and its lockfile.
    fn prepare(
        workbook: &crate::curriculum::workbook::Workbook,
        source: &Path,
        base: &Path,
        package: &str,
    ) -> Result<Self> {
        let root = base.join(SLOTS_FOLDER);
        let packages: Vec<String> = SLOTS
            .iter()
            .map(|slot| format!("{package}_mutant_{slot}"))
            .collect();
        let members: Vec<(&str, &str)> = SLOTS
            .iter()
            .zip(&packages)
            .map(|(slot, package)| (*slot, package.as_str()))
            .collect();
        crate_copy::write_workspace(source, &root, &members)?;
        harness::sync_lockfile(&workbook.root, &root)?;
        let members = SLOTS
            .iter()
            .map(|slot| root.join(slot))
            .zip(packages)
            .collect();
        Ok(Self { root, members })
    }
}

fn failed(message: String) -> Outcome {
    Outcome::Failed {
        message,
        location: None,
        in_graded_code: false,
    }
}

fn not_green(run: &SuiteRun) -> String {
    if let Some(trouble) = &run.trouble {
        tf(Key::SuiteRunTrouble, &[trouble])
    } else if !run.failed.is_empty() {
        tf(
            Key::SuiteFailsOnCorrect,
            &[&run.failed.len(), &run.failed.join(", ")],
        )
    } else {
        t(Key::SuiteEmpty).to_owned()
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first
            .to_lowercase()
            .chain(chars)
            .collect::<String>()
            .trim_end_matches(['.', '。'])
            .to_owned(),
        None => String::new(),
    }
}

/// A report row for the rubric check `id`.
fn row(
    rubric: &crate::curriculum::workbook::Rubric,
    id: &str,
    outcome: Outcome,
    run: &SuiteRun,
) -> CheckResult {
    let spec = rubric.checks.iter().find(|c| c.id == id);
    let points = spec.map_or(0, |c| c.points);
    CheckResult {
        id: id.to_owned(),
        kind: CheckKind::Check,
        title: spec.map(|c| c.title.clone()).unwrap_or_default(),
        points,
        earned: if outcome.passed() { points } else { 0 },
        outcome,
        section: None,
        elapsed_ms: run.elapsed.as_millis() as u64,
        peak_memory_kib: run.peak_memory_kib,
        // Every row of a suite shows the suite's run.
        timing: Timing::Shared,
    }
}

/// One run of the suite in a slot: on a rewrite of the code under test (the same behaviour,
/// other text), where it must stay green, or on a mutant, which it should catch.
#[derive(Clone, Copy)]
enum Trial<'a> {
    Rewrite(&'a Mutant),
    /// The mutant and its place among the chapter's mutants.
    Mutant(usize, &'a Mutant),
}

impl<'a> Trial<'a> {
    fn copy(&self) -> &'a Mutant {
        match *self {
            Trial::Rewrite(copy) | Trial::Mutant(_, copy) => copy,
        }
    }

    /// A mutant only asks whether the suite stays green: its run stops at the first failure.
    fn run_to(&self) -> RunTo {
        match self {
            Trial::Rewrite(_) => RunTo::End,
            Trial::Mutant(..) => RunTo::FirstFailure,
        }
    }
}

/// The order of a grading's runs over `slots` slots: every rewrite once in each slot, and the
/// mutants dealt among the slots, each slot's runs shuffled. Copy `i` is built in slot
/// `i % slots` (see [`in_turns`]), so nothing but the code under test tells a rewrite from a
/// mutant: not the folder, not the package, not the place in the grading (a suite that counted
/// its runs in a file would otherwise know that the rewrites come first).
fn trial_order<'a>(
    rewrites: &'a [Mutant],
    mutants: &'a [Mutant],
    slots: usize,
    shuffler: &mut Shuffler,
) -> Vec<Trial<'a>> {
    let slots = slots.max(1);
    let mut dealt: Vec<Trial> = mutants
        .iter()
        .enumerate()
        .map(|(i, m)| Trial::Mutant(i, m))
        .collect();
    shuffler.shuffle(&mut dealt);
    let mut per_slot: Vec<Vec<Trial>> = (0..slots)
        .map(|_| rewrites.iter().map(Trial::Rewrite).collect())
        .collect();
    // Dealt from the first slot: the slots with one run more come first, so that the last,
    // partial row of the order still puts copy `i` in slot `i % slots`.
    for (i, trial) in dealt.into_iter().enumerate() {
        per_slot[i % slots].push(trial);
    }
    for runs in &mut per_slot {
        shuffler.shuffle(runs);
    }
    let rows = per_slot.iter().map(Vec::len).max().unwrap_or(0);
    (0..rows)
        .flat_map(|row| {
            per_slot
                .iter()
                .filter_map(move |runs| runs.get(row).copied())
        })
        .collect()
}

/// Why the suite is not green on `rewrite`, or `None` when it is.
fn fails_on_rewrite(rewrite: &str, run: &BuildOutcome<SuiteRun>) -> Option<String> {
    match run {
        BuildOutcome::Built(run) if run.green() => None,
        BuildOutcome::Built(run) => Some(tf(
            Key::SuiteFailsOnRewrite,
            &[&rewrite, &lower_first(&not_green(run))],
        )),
        BuildOutcome::Failed(_) => Some(tf(Key::SuiteRewriteDoesNotCompile, &[&rewrite])),
    }
}

/// Whether the suite caught `mutant`, from its run on it.
fn kill_outcome(mutant: &Mutant, description: &str, run: BuildOutcome<SuiteRun>) -> Outcome {
    match run {
        BuildOutcome::Built(run) if run.green() => failed(tf(
            Key::MutantSurvived,
            &[&lower_first(description), &run.passed],
        )),
        BuildOutcome::Built(_) => Outcome::Passed,
        BuildOutcome::Failed(_) => Outcome::Crashed {
            reason: tf(Key::MutantDoesNotCompile, &[&mutant.name]),
        },
    }
}

/// One learner's suite and the code it tests.
struct Suite<'a> {
    workbook: &'a crate::curriculum::workbook::Workbook,
    graded: &'a Graded,
    under_test: &'a [(String, String)],
    spec: &'a LearnerTests,
    build: compile::BuildOptions,
    /// Time spent waiting on cargo, in microseconds: the report's compile time. The rest of the
    /// grading's time is the suite's runs (those not hidden behind a build).
    building_micros: AtomicU64,
}

impl Suite<'_> {
    /// Builds and runs the suite on each trial's copy, [`ROUND`] at a time (see [`in_turns`]):
    /// one cargo run builds a round's copies side by side. A round that does not compile is
    /// built again one copy at a time, so that each copy's failure is its own. The outcomes come
    /// in the order of `trials`.
    fn build_and_run_in_slots(
        &self,
        slots: &Slots,
        trials: &[Trial],
    ) -> Result<Vec<BuildOutcome<SuiteRun>>> {
        // Cargo loads every member of the workspace, so each slot must hold a crate from the
        // start.
        for (dir, package) in &slots.members {
            if !dir.join("Cargo.toml").is_file() {
                self.write_copy(dir, package, None, true)?;
            }
        }
        let quiet = compile::BuildOptions {
            show_progress: false,
            ..self.build
        };
        let mut started = 0;
        let outcomes = in_turns(
            trials,
            slots.members.len() / ROUND,
            |first, round| {
                started += round.len();
                if self.build.show_progress {
                    // One count for rewrites and mutants alike: the status line tells nothing
                    // of which is which either.
                    compile::show_status(&tf(Key::StatusSuiteCopies, &[&started, &trials.len()]));
                }
                let members = &slots.members[first..first + round.len()];
                for ((dir, package), trial) in members.iter().zip(round) {
                    self.write_copy(dir, package, Some(trial.copy()), true)?;
                }
                let packages: Vec<&str> = members.iter().map(|(_, p)| p.as_str()).collect();
                let built: Vec<BuildOutcome<Vec<compile::Executable>>> =
                    match self.build(&slots.root, &packages, quiet)? {
                        BuildOutcome::Built(built) => members
                            .iter()
                            .map(|(dir, _)| {
                                Ok(BuildOutcome::Built(binaries_of(&built.binaries, dir)?))
                            })
                            .collect::<Result<_>>()?,
                        BuildOutcome::Failed(_) => members
                            .iter()
                            .map(|(_, package)| {
                                Ok(self
                                    .build(&slots.root, &[package], quiet)?
                                    .map(|built| built.binaries))
                            })
                            .collect::<Result<_>>()?,
                    };
                Ok(built
                    .into_iter()
                    .zip(round)
                    .map(|(built, trial)| built.map(|binaries| (binaries, trial.run_to())))
                    .collect())
            },
            |slot, (binaries, run_to)| self.run(&slots.members[slot].0, &binaries, run_to),
        );
        if self.build.show_progress {
            compile::clear_status();
        }
        outcomes
    }

    /// The learner's Rust files as the copies hold them: those the learner wrote or changed
    /// (the code under test and the given files as shipped left out).
    fn own_files(&self, shipped: &Shipped) -> Result<Vec<(String, String)>> {
        Ok(crate_copy::crate_files(&self.graded.dir)?
            .into_iter()
            .filter(|(file, _)| {
                file.ends_with(".rs")
                    && !self.under_test.iter().any(|(given, _)| given == file)
                    && !shipped.is_as_shipped(&self.graded.dir, file)
            })
            .collect())
    }

    /// Writes the learner's crate, with the code under test and `mutant`'s edits, to `dir`.
    fn write_copy(
        &self,
        dir: &Path,
        package: &str,
        mutant: Option<&Mutant>,
        workspace_member: bool,
    ) -> Result<()> {
        crate_copy::write_crate_copy(
            &self.graded.dir,
            dir,
            &CrateCopy {
                package,
                replaced: self.under_test,
                mutant,
                workspace_member,
                ..CrateCopy::default()
            },
        )
    }

    /// Builds the tests of `packages` of the workspace (or the crate) at `dir`.
    fn build(
        &self,
        dir: &Path,
        packages: &[&str],
        options: compile::BuildOptions,
    ) -> Result<BuildOutcome<compile::BuiltTests>> {
        let copy = Graded {
            dir: dir.to_path_buf(),
            package: packages.join(" "),
            label: self.graded.label.clone(),
            harness: harness::HarnessOwner {
                kind: "suite",
                dir: dir.to_path_buf(),
            },
            visible_tests: dir.join("tests"),
            copy: None,
        };
        let mut subcommand = vec!["test", "--no-run", "--tests"];
        for package in packages {
            subcommand.extend(["--package", package]);
        }
        let started = Instant::now();
        let built = compile::cargo_build(self.workbook, dir, &copy, &subcommand, options, false);
        self.building_micros
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        built
    }

    /// Writes the learner's crate to `dir` as the stand-alone package `package`, builds its
    /// tests and runs them.
    fn build_and_run(&self, dir: &Path, package: &str) -> Result<BuildOutcome<SuiteRun>> {
        self.write_copy(dir, package, None, false)?;
        Ok(match self.build(dir, &[], self.build)? {
            BuildOutcome::Built(built) => {
                BuildOutcome::Built(self.run(dir, &built.binaries, RunTo::End)?)
            }
            BuildOutcome::Failed(failure) => BuildOutcome::Failed(failure),
        })
    }

    /// Runs each test binary of a copy at `dir` through the runner.
    fn run(&self, dir: &Path, binaries: &[compile::Executable], run_to: RunTo) -> Result<SuiteRun> {
        let limits = Limits {
            wall: Duration::from_millis((self.spec.max_suite_ms * 3).max(3_000)),
            memory_bytes: TESTS_MEMORY_BYTES,
            output_bytes: OUTPUT_LIMIT_BYTES,
        };
        let mut run = SuiteRun {
            passed: 0,
            failed: Vec::new(),
            trouble: None,
            elapsed: Duration::ZERO,
            peak_memory_kib: 0,
        };
        let scratch = dir.join("runs").join(std::process::id().to_string());
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("creating {}", scratch.display()))?;
        for (index, binary) in binaries.iter().enumerate() {
            let target = &binary.target;
            if run_to == RunTo::FirstFailure && !run.failed.is_empty() {
                break;
            }
            let tests = runner::run_binary(
                &binary.path,
                &[],
                2,
                limits,
                &scratch,
                &index.to_string(),
                run_to,
            )?;
            run.elapsed += tests.finished.elapsed;
            run.peak_memory_kib = run.peak_memory_kib.max(tests.finished.peak_memory_kib);
            run.passed += tests.passed.len();
            run.failed.extend(tests.failed);
            if tests.flooded {
                run.trouble = Some(tf(
                    Key::TestsPrintedTooMuch,
                    &[target, &(limits.output_bytes / (1024 * 1024))],
                ));
                continue;
            }
            match tests.finished.ending {
                Ending::TimedOut => {
                    run.trouble = Some(tf(Key::TestsTimedOut, &[target, &limits.wall.as_secs()]))
                }
                Ending::Exited(status) if !status.success() && run.failed.is_empty() => {
                    run.trouble = Some(tf(Key::TestsEndedAbnormally, &[target, &status]));
                }
                // Stopped at its first failed test, which `run.failed` names.
                Ending::Settled | Ending::Exited(_) => {}
            }
        }
        Ok(run)
    }
}

/// Builds `copies` [`ROUND`] at a time and runs each built one, the rounds taking turns between
/// `turns` groups of slots: while one round runs (each copy in a thread of its own), the next
/// builds in the next group's slots. A group is rebuilt only once its last round has finished
/// running, so a running copy never sees its folder change.
///
/// `build` gets the first slot of its group and the round's copies, and returns each copy's
/// build; `run` gets a built copy's slot. The outcomes come in the order of `copies`.
fn in_turns<C, B: Send, R: Send>(
    copies: &[C],
    turns: usize,
    mut build: impl FnMut(usize, &[C]) -> Result<Vec<BuildOutcome<B>>>,
    run: impl Fn(usize, B) -> Result<R> + Sync,
) -> Result<Vec<BuildOutcome<R>>> {
    let turns = turns.max(1);
    let run = &run;
    std::thread::scope(|scope| {
        let mut rounds: Vec<Vec<Pending<R>>> = Vec::new();
        for (index, round) in copies.chunks(ROUND).enumerate() {
            if let Some(earlier) = index.checked_sub(turns) {
                rounds[earlier] = std::mem::take(&mut rounds[earlier])
                    .into_iter()
                    .map(Pending::finished)
                    .collect::<Result<_>>()?;
            }
            let first = (index % turns) * ROUND;
            let built = build(first, round)?;
            rounds.push(
                built
                    .into_iter()
                    .enumerate()
                    .map(|(offset, built)| match built {
                        BuildOutcome::Built(built) => {
                            Pending::Running(scope.spawn(move || run(first + offset, built)))
                        }
                        BuildOutcome::Failed(failure) => {
                            Pending::Done(BuildOutcome::Failed(failure))
                        }
                    })
                    .collect(),
            );
        }
        rounds.into_iter().flatten().map(Pending::outcome).collect()
    })
}

/// A copy's run: going on in a thread of its own, or done (or never built).
enum Pending<'scope, R> {
    Running(std::thread::ScopedJoinHandle<'scope, Result<R>>),
    Done(BuildOutcome<R>),
}

impl<R> Pending<'_, R> {
    /// The copy's outcome, once its run has finished.
    fn outcome(self) -> Result<BuildOutcome<R>> {
        match self {
            Pending::Running(run) => {
                Ok(BuildOutcome::Built(run.join().map_err(|_| {
                    anyhow::anyhow!("a suite's run panicked")
                })??))
            }
            Pending::Done(outcome) => Ok(outcome),
        }
    }

    /// Waits for the run to finish.
    fn finished(self) -> Result<Self> {
        self.outcome().map(Pending::Done)
    }
}

/// The test binaries that cargo built for the copy at `dir`, out of a build of several copies.
fn binaries_of(binaries: &[compile::Executable], dir: &Path) -> Result<Vec<compile::Executable>> {
    // Compared as the system resolves them: cargo may name a folder through another path
    // (macOS's /var is /private/var).
    let this_copy = crate::curriculum::workbook::canonical(dir)
        .with_context(|| format!("resolving {}", dir.display()))?;
    Ok(binaries
        .iter()
        .filter(|binary| {
            binary.package_dir.as_deref().is_some_and(|folder| {
                crate::curriculum::workbook::canonical(folder).is_ok_and(|f| f == this_copy)
            })
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::report::model::CompileFailure;

    /// How many rounds have started building, and the slots whose run has not ended.
    #[derive(Default)]
    struct Seen {
        rounds_started: usize,
        running: Vec<usize>,
        rebuilt_while_running: Vec<usize>,
        runs_without_overlap: Vec<u32>,
    }

    fn named(name: &str) -> Mutant {
        Mutant {
            name: name.to_owned(),
            description: String::new(),
            rejected_by: Vec::new(),
            points: 1,
            section: None,
            edits: Vec::new(),
        }
    }

    /// The names of an order's trials, a rewrite's marked with `=`.
    fn names(trials: &[Trial]) -> Vec<String> {
        trials
            .iter()
            .map(|trial| match trial {
                Trial::Rewrite(rewrite) => format!("={}", rewrite.name),
                Trial::Mutant(_, mutant) => mutant.name.clone(),
            })
            .collect()
    }

    #[test]
    fn every_rewrite_runs_in_every_slot_at_a_place_no_run_can_foresee() {
        let rewrites = [named("r1"), named("r2")];
        let mutants: Vec<Mutant> = (0..11).map(|i| named(&format!("m{i}"))).collect();
        let mut seen_first = std::collections::BTreeSet::new();
        for seed in 0..50 {
            let order = trial_order(&rewrites, &mutants, 4, &mut Shuffler::seeded(seed));
            let names = names(&order);
            assert_eq!(names.len(), 2 * 4 + 11);
            for rewrite in ["=r1", "=r2"] {
                let mut slots: Vec<usize> = (0..names.len())
                    .filter(|&i| names[i] == rewrite)
                    .map(|i| i % 4)
                    .collect();
                slots.sort();
                assert_eq!(slots, [0, 1, 2, 3], "{rewrite} in {names:?}");
            }
            for (index, mutant) in mutants.iter().enumerate() {
                let places: Vec<&Trial> = order
                    .iter()
                    .filter(|t| matches!(t, Trial::Mutant(i, _) if *i == index))
                    .collect();
                assert_eq!(places.len(), 1, "{} in {names:?}", mutant.name);
            }
            seen_first.insert(names[0].clone());
        }
        // The first run is sometimes a rewrite, sometimes a mutant, and not always the same.
        assert!(seen_first.len() > 5, "{seen_first:?}");
        assert!(seen_first.iter().any(|name| name.starts_with('=')));
        assert!(seen_first.iter().any(|name| name.starts_with('m')));
    }

    #[test]
    fn rounds_take_turns_run_while_the_next_builds_and_keep_their_order() {
        // Seven copies: four rounds over two groups of two slots; copy 3 does not compile.
        let copies: Vec<u32> = (0..7).collect();
        let rounds = copies.len().div_ceil(ROUND);
        let seen = Mutex::new(Seen::default());
        let changed = Condvar::new();
        let outcomes = in_turns(
            &copies,
            2,
            |first, round| {
                let mut state = seen.lock().unwrap();
                let slots = first..first + round.len();
                let clashes: Vec<usize> = state
                    .running
                    .iter()
                    .copied()
                    .filter(|s| slots.contains(s))
                    .collect();
                state.rebuilt_while_running.extend(clashes);
                state.rounds_started += 1;
                changed.notify_all();
                Ok(round
                    .iter()
                    .map(|&copy| match copy {
                        3 => BuildOutcome::Failed(CompileFailure {
                            errors: Vec::new(),
                            cargo_output: "copy 3 does not compile".to_owned(),
                        }),
                        copy => BuildOutcome::Built(copy),
                    })
                    .collect())
            },
            |slot, copy| {
                let round = copy as usize / ROUND;
                let mut state = seen.lock().unwrap();
                state.running.push(slot);
                // Each run but the last round's waits until the next round has started to
                // build: it can only end if runs and builds overlap.
                let (mut state, waited) = changed
                    .wait_timeout_while(state, Duration::from_secs(10), |state| {
                        round + 1 < rounds && state.rounds_started <= round + 1
                    })
                    .unwrap();
                if waited.timed_out() {
                    state.runs_without_overlap.push(copy);
                }
                state.running.retain(|&s| s != slot);
                Ok((slot, copy))
            },
        )
        .unwrap();

        let described: Vec<String> = outcomes
            .iter()
            .map(|outcome| match outcome {
                BuildOutcome::Built((slot, copy)) => format!("copy {copy} ran in slot {slot}"),
                BuildOutcome::Failed(failure) => failure.cargo_output.clone(),
            })
            .collect();
        assert_eq!(
            described,
            [
                "copy 0 ran in slot 0",
                "copy 1 ran in slot 1",
                "copy 2 ran in slot 2",
                "copy 3 does not compile",
                "copy 4 ran in slot 0",
                "copy 5 ran in slot 1",
                "copy 6 ran in slot 2",
            ]
        );
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.rebuilt_while_running, Vec::<usize>::new());
        assert_eq!(seen.runs_without_overlap, Vec::<u32>::new());
    }
}
