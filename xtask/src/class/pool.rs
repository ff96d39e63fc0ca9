//! Grading many students at once. Each worker holds a slot — a folder under `class/` in the
//! grader's work folder in `target/` — copies one student's graded files into it, and runs
//! `cargo xtask grade --workspace <slot> --format json` there as a sandboxed process of its own:
//! its own process group, a real-time limit, memory and output limits, and killed with every
//! process it started when the limit is reached. Hostile code can therefore fail only its own
//! student.
//!
//! Grading a copy in a fixed slot, rather than in place, keeps the grader's generated crates
//! and build output to one set per slot however large the class, reads a snapshot the student
//! cannot change halfway, and leaves the student's folder untouched. Each slot has its own
//! cargo target folder: cargo locks a target folder for a whole build, so in a shared one a
//! student's build script that never ends would stall every other student's compile. A slot's
//! dependencies are compiled once, by grading the shipped exercises in it before the first
//! student (not counted against any student's time limit), and kept for later runs.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

use crate::class::cleanup;
use crate::class::reports::{ERROR_SCHEMA, GradingError};
use crate::class::roster::Student;
use crate::class::stamp;
use crate::curriculum::workbook::{Chapter, Workbook};
use crate::report::model::{GRADE_SCHEMA, SkippedPolicy};
use crate::sandbox::{self, Ending, Limits};
use crate::util::FolderLock;
use crate::util::{NOT_SOURCE_FOLDERS, files_under};

/// The most a student's graded files may weigh; a larger copy is not graded.
const COPY_LIMIT_BYTES: u64 = 256 * 1024 * 1024;

/// The most the grader of one student may print, and (times the sandbox's factor) the largest
/// file it may write: test binaries included.
const OUTPUT_LIMIT_BYTES: u64 = 64 * 1024 * 1024;

/// The longest the dependencies of a slot may take to compile.
const WARM_UP_LIMIT: Duration = Duration::from_secs(30 * 60);

/// How every student is graded.
pub struct Settings {
    pub chapters: Vec<Chapter>,
    pub checks_dir: Option<PathBuf>,
    /// What a skipped check is worth.
    pub skipped: SkippedPolicy,
    pub jobs: usize,
    /// Real time one student's grading may take.
    pub timeout: Duration,
    /// Address space any one process of a student's grading may use.
    pub memory_bytes: u64,
}

/// One student to grade.
pub struct Job {
    pub student: Student,
    pub fingerprint: String,
}

/// What the workers report.
pub enum Event {
    Started,
    Done {
        /// Boxed: a job is much larger than the other variants.
        job: Box<Job>,
        /// The grade report's JSON, or why there is none.
        result: Result<String, GradingError>,
        elapsed: Duration,
    },
}

/// Grades every job, `settings.jobs` at a time, calling `on_event` on this thread as students
/// start and finish.
pub fn grade_all(
    workbook: &Workbook,
    settings: &Settings,
    jobs: Vec<Job>,
    mut on_event: impl FnMut(Event) -> Result<()>,
) -> Result<()> {
    let workers = settings.jobs.clamp(1, jobs.len().max(1));
    let queue = Mutex::new(VecDeque::from(jobs));
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || work(workbook, settings, queue, &sender));
        }
        drop(sender);
        let mut first_error = None;
        for event in receiver {
            if let Err(error) = on_event(event)
                && first_error.is_none()
            {
                // Stop handing out students; those in progress finish.
                queue.lock().expect("no worker panics").clear();
                first_error = Some(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}

fn work(
    workbook: &Workbook,
    settings: &Settings,
    queue: &Mutex<VecDeque<Job>>,
    events: &mpsc::Sender<Event>,
) {
    let slot = Slot::take(workbook).and_then(|slot| {
        slot.warm_up(workbook, settings)?;
        Ok(slot)
    });
    loop {
        let Some(job) = queue.lock().expect("no worker panics").pop_front() else {
            return;
        };
        let _ = events.send(Event::Started);
        let started = Instant::now();
        let result = match &slot {
            Ok(slot) => slot.grade(workbook, settings, &job.student),
            Err(error) => Err(format!("no folder to grade in: {error:#}")),
        }
        .map_err(|reason| GradingError {
            schema: ERROR_SCHEMA.to_owned(),
            student: job.student.name.clone(),
            reason,
            log: String::new(),
        });
        let result = match result {
            Ok(Ok(report)) => Ok(report),
            Ok(Err(error)) | Err(error) => Err(error),
        };
        let _ = events.send(Event::Done {
            job: Box::new(job),
            result,
            elapsed: started.elapsed(),
        });
    }
}

/// A folder one worker grades in, locked so that two class runs at once use different ones.
struct Slot {
    dir: PathBuf,
    _lock: FolderLock,
}

impl Slot {
    fn take(workbook: &Workbook) -> Result<Self> {
        let base = workbook.work_dir().join("class");
        for index in 0.. {
            let dir = base.join(format!("slot-{index}"));
            if let Some(lock) = FolderLock::try_acquire(&dir)? {
                // A run killed while grading here may have left a build or a check running.
                cleanup::kill_leftovers(&dir);
                cleanup::holding(&dir);
                return Ok(Self { dir, _lock: lock });
            }
        }
        unreachable!("the slots never run out")
    }

    /// Compiles the dependencies of the graded chapters into the slot's target folder, once:
    /// by grading the shipped exercises, which needs exactly what a student's copy needs.
    fn warm_up(&self, workbook: &Workbook, settings: &Settings) -> Result<()> {
        let mut hash = crate::class::fingerprint::Fingerprint::default();
        hash.text(crate::report::model::GRADER_VERSION);
        for chapter in &settings.chapters {
            hash.text(&chapter.id);
        }
        hash.file(&workbook.root, &workbook.root.join("Cargo.lock"))?;
        let marker = self.dir.join(format!("warm-{}", hash.finish()));
        if marker.exists() {
            return Ok(());
        }
        eprintln!(
            "{}",
            crate::lang::words::tf(
                crate::lang::words::Key::PreparingSlot,
                &[&self.dir.display()]
            )
        );
        // What the workbook's own target folder has built need not be compiled again here.
        crate::build::target_seed::seed(workbook, &settings.chapters, &self.target())?;
        let finished = sandbox::run(
            grade_command(workbook, settings, &workbook.root, &self.target()),
            Limits {
                wall: WARM_UP_LIMIT,
                memory_bytes: settings.memory_bytes,
                output_bytes: OUTPUT_LIMIT_BYTES,
            },
            &self.dir.join("stdout"),
            &self.dir.join("stderr"),
        )?;
        let report = std::fs::read_to_string(self.dir.join("stdout")).unwrap_or_default();
        let graded = serde_json::from_str::<serde_json::Value>(&report)
            .is_ok_and(|report| report["schema"] == GRADE_SCHEMA);
        if !matches!(finished.ending, Ending::Exited(_)) || !graded {
            bail!(
                "grading the shipped exercises in {} failed: {}",
                self.dir.display(),
                tail(
                    &std::fs::read(self.dir.join("stderr")).unwrap_or_default(),
                    2000
                )
            );
        }
        std::fs::write(&marker, "").with_context(|| format!("writing {}", marker.display()))
    }

    fn target(&self) -> PathBuf {
        self.dir.join("target")
    }

    /// Grades `student` in this slot: `Err` for a problem of the grader's (a copy that cannot
    /// be made), `Ok(Err)` for a student whose grading produced no report.
    fn grade(
        &self,
        workbook: &Workbook,
        settings: &Settings,
        student: &Student,
    ) -> Result<Result<String, GradingError>, String> {
        let source = student.copy.as_deref().ok_or("the copy is missing")?;
        let copy = self.dir.join("copy");
        prepare_copy(source, &copy, &settings.chapters).map_err(|e| format!("{e:#}"))?;
        let stdout = self.dir.join("stdout");
        let stderr = self.dir.join("stderr");
        let finished = sandbox::run(
            grade_command(workbook, settings, &copy, &self.target()),
            Limits {
                wall: settings.timeout,
                memory_bytes: settings.memory_bytes,
                output_bytes: OUTPUT_LIMIT_BYTES,
            },
            &stdout,
            &stderr,
        )
        .map_err(|e| format!("{e:#}"))?;
        // Checks run in process groups of their own; when the grader was stopped in the middle
        // of one, it is still running, from this slot's files.
        cleanup::kill_leftovers(&self.dir);
        let log = tail(&std::fs::read(&stderr).unwrap_or_default(), 4000);
        let failure = |reason: String| GradingError {
            schema: ERROR_SCHEMA.to_owned(),
            student: student.name.clone(),
            reason,
            log: log.clone(),
        };
        let status = match finished.ending {
            Ending::TimedOut => {
                return Ok(Err(failure(format!(
                    "grading took longer than {} s and was stopped, with every process it \
                     started (a build script or a compile that never ends?)",
                    settings.timeout.as_secs()
                ))));
            }
            Ending::Exited(status) => status,
            Ending::Settled => unreachable!("a grading process runs to its end"),
        };
        let text = std::fs::read_to_string(&stdout).unwrap_or_default();
        let mut report: serde_json::Value = match serde_json::from_str(&text) {
            Ok(report @ serde_json::Value::Object(_)) if report["schema"] == GRADE_SCHEMA => report,
            _ => {
                let ended = match sandbox::abnormal_end(&status) {
                    Some(cause) => format!("ended abnormally: {cause}"),
                    None => format!("exited with {status}"),
                };
                return Ok(Err(failure(format!(
                    "the grader {ended} without a grade report"
                ))));
            }
        };
        // The slot is a copy; the report names the student's own commit.
        let (commit, time) = stamp::last_commit(source).unzip();
        report["grader"]["commit"] = commit.into();
        report["grader"]["commit_time"] = time.into();
        Ok(Ok(
            serde_json::to_string_pretty(&report).expect("JSON values serialize")
        ))
    }
}

/// `cargo xtask grade <chapters> --workspace <copy> --format json`, by this very binary,
/// building in `target`.
fn grade_command(workbook: &Workbook, settings: &Settings, copy: &Path, target: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap_or_else(|_| "xtask".into()));
    command
        .arg("grade")
        .args(settings.chapters.iter().map(|c| &c.id))
        .arg("--workspace")
        .arg(copy)
        .args(["--format", "json"]);
    if let Some(dir) = &settings.checks_dir {
        command.arg("--checks-dir").arg(dir);
    }
    if let Some(policy) = settings.skipped.to_possible_value() {
        command.arg("--skipped").arg(policy.get_name());
    }
    command
        .current_dir(&workbook.root)
        .env("CARGO_TARGET_DIR", target)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_OUTPUT");
    // A student's grading ends when the class run does, however the class run ends.
    sandbox::die_with_parent(&mut command);
    command
}

/// Copies what grading reads — the workspace manifest and lockfile, and the graded chapters'
/// exercise folders — from `source` into a fresh `copy`. Every file is written anew
/// (`util::copy_as_new`, not `std::fs::copy`, which keeps old times on macOS and Windows), so
/// cargo sees it newer than the previous student's build and recompiles.
fn prepare_copy(source: &Path, copy: &Path, chapters: &[Chapter]) -> Result<()> {
    if copy.exists() {
        std::fs::remove_dir_all(copy).with_context(|| format!("emptying {}", copy.display()))?;
    }
    std::fs::create_dir_all(copy).with_context(|| format!("creating {}", copy.display()))?;
    let mut files = Vec::new();
    for name in ["Cargo.toml", "Cargo.lock"] {
        if source.join(name).is_file() {
            files.push(source.join(name));
        }
    }
    for chapter in chapters {
        files.extend(files_under(
            &source.join("exercises").join(chapter.stem()),
            &NOT_SOURCE_FOLDERS,
        )?);
    }
    let mut copied = 0;
    for file in files {
        let relative = file.strip_prefix(source).unwrap_or(&file);
        let target = copy.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        copied += file.metadata().map_or(0, |m| m.len());
        if copied > COPY_LIMIT_BYTES {
            bail!(
                "the graded files weigh more than {} MiB",
                COPY_LIMIT_BYTES / (1024 * 1024)
            );
        }
        crate::util::copy_as_new(&file, &target)?;
    }
    Ok(())
}

/// The last `limit` bytes of `bytes`, as text.
fn tail(bytes: &[u8], limit: usize) -> String {
    let start = bytes.len().saturating_sub(limit);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}
