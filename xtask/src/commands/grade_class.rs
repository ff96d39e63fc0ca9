//! `cargo xtask grade-class`: grade a whole class — a folder of student copies or a roster —
//! several students at once, each in its own sandboxed process, resumable; or merge the JSON
//! reports that CI runners produced. Writes a gradebook CSV, a JSON class report and an HTML
//! class report.
//!
//! Each student is graded by a child `cargo xtask grade --workspace <copy> --format json`
//! rather than in this process: a child can be killed with everything it started when a
//! student's code hangs the compiler, its limits hold only that student, and its output is the
//! very report a CI runner uploads, so a direct run and a merge of runners' reports are built
//! by one code path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::class::fingerprint::{self, Fingerprint};
use crate::class::model::{self, ClassReport, StatusCounts};
use crate::class::pool::{self, Event, Job, Settings};
use crate::class::progress_bar::{ProgressBar, human};
use crate::class::reports::{self, Entry, Expected, Outcome};
use crate::class::roster::{self, Student};
use crate::class::store::{self, Store};
use crate::class::{book_links, gradebook, html, time};
use crate::curriculum::workbook::{Chapter, Rubric, Workbook};
use crate::lang::words::{Key, t, tf};
use crate::report::chapter_status::ChapterStatus;
use crate::report::model::GRADER_VERSION;
use crate::report::model::SkippedPolicy;

/// Grade a whole class into a gradebook CSV and JSON and HTML class reports, or merge CI runners' reports.
#[derive(Debug, Args)]
pub struct GradeClassArgs {
    /// Chapters to grade (default: every ready chapter).
    pub chapters: Vec<String>,
    /// A folder with one copy of the workbook per student (each subfolder is a student).
    #[arg(long, value_name = "DIR", conflicts_with = "roster")]
    pub students: Option<PathBuf>,
    /// A roster file: one student a line, `name,folder[,due]`, folders relative to the file.
    /// With --from-reports it names the class and its deadlines.
    #[arg(long, value_name = "FILE")]
    pub roster: Option<PathBuf>,
    /// Merge the JSON reports in DIR (any depth; `<student>.json`) instead of grading: reports
    /// from `grade --format json` or from another grade-class run. Repeatable.
    #[arg(long, value_name = "DIR", conflicts_with = "students")]
    pub from_reports: Vec<PathBuf>,
    /// Like --from-reports, but every report in DIR is marked untrusted (reports from the
    /// students' own workflows). Repeatable.
    #[arg(long, value_name = "DIR", conflicts_with = "students")]
    pub untrusted_reports: Vec<PathBuf>,
    /// Private checks: DIR/<chapter>/chapter.toml and check files replace the public ones.
    #[arg(long, value_name = "DIR")]
    pub checks_dir: Option<PathBuf>,
    /// Where results and reports go (default: class-grades/ in the workbook's folder). A folder
    /// inside the workbook gets a .gitignore that keeps it out of git.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Students graded at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Real time one student's grading may take, in seconds (default: 60 plus 10 per chapter,
    /// about five times what a loaded 2-core machine needs).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// The deadline: work committed after it is marked late (e.g. 2026-12-01T23:59Z).
    #[arg(long, value_name = "WHEN")]
    pub due: Option<String>,
    /// Grade only shard K of N (K/N, from 1): every N-th student from the K-th.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Grade every student again, even those whose copy has not changed.
    #[arg(long)]
    pub force: bool,
    /// What a skipped check (one that could not run here, e.g. without a database) is worth,
    /// as for `grade`.
    #[arg(long, value_enum, default_value_t)]
    pub skipped: SkippedPolicy,
    /// A hosted copy of the book for the HTML report's links (default: $WORKBOOK_BOOK_URL, else
    /// this workbook's built book, built first when it is missing or out of date).
    #[arg(long, value_name = "URL")]
    pub book_url: Option<String>,
}

pub fn run(args: GradeClassArgs) -> Result<ExitCode> {
    let workbook = Workbook::load()?;
    let chapters: Vec<Chapter> = if args.chapters.is_empty() {
        workbook.ready_chapters().cloned().collect()
    } else {
        args.chapters
            .iter()
            .map(|id| workbook.ready_chapter(id).cloned())
            .collect::<Result<_>>()?
    };
    let checks_dir = match &args.checks_dir {
        Some(dir) => Some(
            dir.canonicalize()
                .with_context(|| format!("the checks folder {} does not exist", dir.display()))?,
        ),
        None => None,
    };
    let chapter_refs: Vec<&Chapter> = chapters.iter().collect();
    let expected = Expected {
        chapters: chapters.iter().map(|c| c.id.clone()).collect(),
        checks: fingerprint::checks(&workbook, &chapter_refs, checks_dir.as_deref())?,
        build: crate::class::stamp::grader_build(&workbook)?,
    };
    let due = args.due.as_deref().map(time::parse).transpose()?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| workbook.root.join(DEFAULT_OUT));
    let store = Store::open(&out_dir)?;
    let ignored = keep_out_of_git(&workbook, &out_dir)?;
    // Two runs into one folder would each grade everyone.
    let Some(_out_lock) = crate::util::FolderLock::try_acquire(&out_dir)? else {
        bail!("{}", tf(Key::AnotherGradeClass, &[&out_dir.display()]));
    };
    let roster = match (&args.students, &args.roster) {
        (Some(dir), _) => Some(roster::from_folder(dir)?),
        (None, Some(file)) => Some(roster::from_roster(file)?),
        (None, None) => None,
    };
    // The output folder is nobody's copy, even when it sits among them.
    let out = out_dir.canonicalize().ok();
    let roster = roster.map(|students| {
        students
            .into_iter()
            .filter(|s| {
                s.copy.is_none() || s.copy.as_ref().and_then(|c| c.canonicalize().ok()) != out
            })
            .collect::<Vec<_>>()
    });
    let roster = match (roster, &args.shard) {
        (Some(students), Some(spec)) => Some(roster::shard(students, spec)?),
        (roster, _) => roster,
    };
    let merging = !args.from_reports.is_empty() || !args.untrusted_reports.is_empty();
    let entries = if merging {
        merge(&args, &expected, roster)?
    } else {
        let Some(students) = roster else {
            bail!("say whom to grade: --students DIR, --roster FILE, or --from-reports DIR");
        };
        let settings = Settings {
            timeout: student_timeout(&workbook, &chapters, checks_dir.as_deref(), args.timeout)?,
            memory_bytes: student_memory(&workbook, &chapters, checks_dir.as_deref())?,
            jobs: args
                .jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
                .max(1),
            checks_dir: checks_dir.clone(),
            chapters: chapters.clone(),
            skipped: args.skipped,
        };
        grade(
            &workbook, &settings, &store, &expected, students, args.force,
        )?
    };
    let report = model::build(
        &workbook,
        &chapters,
        checks_dir.as_deref(),
        &expected,
        due,
        &entries,
    )?;
    write_outputs(
        &workbook,
        &store,
        &report,
        args.book_url.as_deref(),
        ignored,
    )?;
    let rejected = report.students.iter().any(|s| s.status == "rejected");
    Ok(if rejected {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Grades every student whose copy changed since their stored result, `settings.jobs` at a time.
fn grade(
    workbook: &Workbook,
    settings: &Settings,
    store: &Store,
    expected: &Expected,
    students: Vec<Student>,
    force: bool,
) -> Result<Vec<Entry>> {
    let started = Instant::now();
    crate::class::cleanup::on_stop_kill_everything();
    let (mut entries, jobs) = plan(settings, store, expected, &students, force)?;
    let reused = entries
        .values()
        .filter(|e| !matches!(e.outcome, Outcome::Missing))
        .count();
    let to_grade = jobs.len();
    let mut bar = ProgressBar::new(students.len(), entries.len(), reused, settings.jobs);
    let mut failed = 0;
    pool::grade_all(workbook, settings, jobs, |event| {
        match event {
            Event::Started => bar.started(),
            Event::Done {
                job,
                result,
                elapsed,
            } if !crate::class::cleanup::stopping() => {
                let ok = result.is_ok();
                let file = store.save(
                    &job.student,
                    &job.fingerprint,
                    &result,
                    elapsed.as_millis() as u64,
                )?;
                let entry = reports::read(&file, &job.student.name, expected, true)?;
                let line = student_line(&job.student, &entry, elapsed);
                failed += usize::from(!ok);
                bar.finished(!ok, &line);
                entries.insert(job.student.name.clone(), entry);
            }
            // Killed by the stop: nothing to keep.
            Event::Done { .. } => {}
        }
        Ok(())
    })?;
    bar.close();
    println!(
        "{}",
        tf(
            Key::GradedStudents,
            &[
                &students.len(),
                &human(started.elapsed()),
                &to_grade,
                &failed,
                &reused,
                &students.iter().filter(|s| s.copy.is_none()).count(),
            ],
        )
    );
    Ok(students
        .iter()
        .filter_map(|student| {
            let mut entry = entries.remove(&student.name)?;
            entry.due = student.due;
            Some(entry)
        })
        .collect())
}

/// The students' entries that stand as stored (a copy missing, or unchanged since its stored
/// result unless `force`), and a job for every other student.
fn plan(
    settings: &Settings,
    store: &Store,
    expected: &Expected,
    students: &[Student],
    force: bool,
) -> Result<(BTreeMap<String, Entry>, Vec<Job>)> {
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    let mut jobs = Vec::new();
    let chapters: Vec<&Chapter> = settings.chapters.iter().collect();
    for student in students {
        let Some(copy) = &student.copy else {
            entries.insert(student.name.clone(), missing(student));
            continue;
        };
        let mut hash = Fingerprint::default();
        hash.text(GRADER_VERSION)
            .text(&expected.build)
            .text(&expected.checks)
            .text(&expected.chapters.join(" "))
            .text(&format!("{:?}", settings.skipped))
            .text(&fingerprint::copy(copy, &chapters)?);
        let fingerprint = hash.finish();
        match store.reusable(student, &fingerprint, expected) {
            Some(entry) if !force => {
                entries.insert(student.name.clone(), entry);
            }
            _ => jobs.push(Job {
                student: student.clone(),
                fingerprint,
            }),
        }
    }
    Ok((entries, jobs))
}

/// The line that tells how a student's grading ended.
fn student_line(student: &Student, entry: &Entry, elapsed: Duration) -> String {
    match &entry.outcome {
        Outcome::Graded(grade) => tf(
            Key::StudentPoints,
            &[
                &student.name,
                &format!("{:.2}", grade.points),
                &format!("{:.2}", grade.max_points),
                &StatusCounts::of(grade.chapters.iter().map(|c| c.status()))
                    .describe(&ChapterStatus::ALL),
                &human(elapsed),
            ],
        ),
        Outcome::Failed(error) => tf(Key::StudentNotGraded, &[&student.name, &error.reason]),
        _ => format!("{}: {:?}", student.name, entry.outcome),
    }
}

fn missing(student: &Student) -> Entry {
    Entry {
        student: student.name.clone(),
        outcome: Outcome::Missing,
        untrusted: Vec::new(),
        source: String::new(),
        submitted_at: None,
        due: student.due,
    }
}

/// Reads every report of the `--from-reports` and `--untrusted-reports` folders; a student with
/// a trusted and an untrusted report keeps the trusted one.
fn merge(
    args: &GradeClassArgs,
    expected: &Expected,
    roster: Option<Vec<Student>>,
) -> Result<Vec<Entry>> {
    let folders = args
        .from_reports
        .iter()
        .map(|dir| (dir, true))
        .chain(args.untrusted_reports.iter().map(|dir| (dir, false)));
    let mut found: BTreeMap<String, Entry> = BTreeMap::new();
    for (dir, trusted) in folders {
        if !dir.is_dir() {
            bail!("{}", tf(Key::ReportsFolderMissing, &[&dir.display()]));
        }
        for (student, file) in reports::files_in(dir)? {
            let entry = reports::read(&file, &student, expected, trusted)?;
            match found.get(&student) {
                Some(kept) if kept.untrusted.is_empty() || !entry.untrusted.is_empty() => {
                    eprintln!(
                        "{}",
                        tf(Key::TwoReports, &[&student, &kept.source, &entry.source])
                    );
                }
                _ => {
                    found.insert(student, entry);
                }
            }
        }
    }
    let Some(students) = roster else {
        return Ok(found.into_values().collect());
    };
    let mut entries: Vec<Entry> = students
        .iter()
        .map(|student| {
            let mut entry = found
                .remove(&roster::file_stem(&student.name))
                .or_else(|| found.remove(&student.name))
                .unwrap_or_else(|| missing(student));
            entry.student = student.name.clone();
            entry.due = student.due;
            entry
        })
        .collect();
    for student in found.keys() {
        eprintln!("{}", tf(Key::NotOnRoster, &[student]));
    }
    entries.extend(found.into_values());
    Ok(entries)
}

/// The time one student may take: as asked, or a minute plus ten seconds a chapter. It must leave
/// room for the slowest check.
fn student_timeout(
    workbook: &Workbook,
    chapters: &[Chapter],
    checks_dir: Option<&Path>,
    asked: Option<u64>,
) -> Result<Duration> {
    let mut slowest_ms = 0;
    for chapter in chapters {
        let rubric = Rubric::for_chapter(workbook, chapter, checks_dir)?;
        slowest_ms = rubric
            .checks
            .iter()
            .map(|c| c.timeout_ms)
            .fold(slowest_ms, u64::max);
    }
    let floor = Duration::from_millis(slowest_ms) + Duration::from_secs(10);
    let timeout = Duration::from_secs(asked.unwrap_or(60 + 10 * chapters.len() as u64));
    if timeout < floor {
        bail!(
            "{}",
            tf(
                Key::TimeoutTooShort,
                &[&timeout.as_secs(), &(slowest_ms / 1000), &floor.as_secs()],
            )
        );
    }
    Ok(timeout)
}

/// The address space any one process of a student's grading may use: 4 GiB, or more when a
/// check is allowed more (a check's own limit must fit under it).
fn student_memory(
    workbook: &Workbook,
    chapters: &[Chapter],
    checks_dir: Option<&Path>,
) -> Result<u64> {
    let mut largest_mb = 0;
    for chapter in chapters {
        let rubric = Rubric::for_chapter(workbook, chapter, checks_dir)?;
        largest_mb = rubric
            .checks
            .iter()
            .map(|c| c.memory_mb)
            .fold(largest_mb, u64::max);
    }
    Ok((largest_mb + 1024).max(4096) * 1024 * 1024)
}

fn write_outputs(
    workbook: &Workbook,
    store: &Store,
    report: &ClassReport,
    book_url: Option<&str>,
    ignored: bool,
) -> Result<()> {
    let (links, book_note) = book_links::resolve(workbook, report, book_url);
    let csv = store.dir.join("gradebook.csv");
    let json = store.dir.join("class-report.json");
    let page = store.dir.join("class-report.html");
    store::write_atomically(&csv, &gradebook::render(report))?;
    store::write_atomically(&json, &serde_json::to_string_pretty(report)?)?;
    store::write_atomically(&page, &html::render(report, &links, book_note.as_deref()))?;
    let untrusted = report.students.iter().filter(|s| !s.trusted).count();
    if untrusted > 0 {
        println!("{}", tf(Key::UntrustedResults, &[&untrusted]));
    }
    for row in report.students.iter().filter(|s| s.status == "rejected") {
        println!(
            "{}",
            tf(
                Key::RejectedReport,
                &[
                    &row.student,
                    &row.source,
                    &row.reason.as_deref().unwrap_or_default(),
                ],
            )
        );
    }
    let dir = store
        .dir
        .canonicalize()
        .unwrap_or_else(|_| store.dir.clone());
    println!(
        "{}",
        tf(
            Key::ReportsAreIn,
            &[
                &dir.display(),
                &if ignored { t(Key::KeptOutOfGit) } else { "" },
                &csv.display(),
                &json.display(),
                &page.display(),
            ],
        )
    );
    Ok(())
}

/// The output folder's name in the workbook's folder, by default.
const DEFAULT_OUT: &str = "class-grades";

/// Students' grades must never be one `git add .` from a commit: an output folder inside the
/// workbook (a git repository, perhaps public) gets a `.gitignore` that ignores all of it,
/// itself included. True when the folder is inside the workbook.
fn keep_out_of_git(workbook: &Workbook, out: &Path) -> Result<bool> {
    let (Ok(out), Ok(root)) = (out.canonicalize(), workbook.root.canonicalize()) else {
        return Ok(false);
    };
    if out == root || !out.starts_with(&root) {
        return Ok(false);
    }
    let ignore = out.join(".gitignore");
    if ignore.is_file() {
        let text = std::fs::read_to_string(&ignore).unwrap_or_default();
        return Ok(text.lines().any(|line| line.trim() == "*"));
    }
    // Only a folder of this command's own files: a `*` must never hide anything else from git.
    let foreign = std::fs::read_dir(&out)
        .with_context(|| format!("listing {}", out.display()))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .find(|name| !OWN_FILES.contains(&name.as_str()) && !name.ends_with(".partial"));
    if let Some(name) = foreign {
        println!("{}", tf(Key::NotIgnored, &[&out.display(), &name]));
        return Ok(false);
    }
    std::fs::write(
        &ignore,
        "# Students' grades, written by `cargo xtask grade-class`: git ignores this whole \
         folder.\n*\n",
    )
    .with_context(|| format!("writing {}", ignore.display()))?;
    Ok(true)
}

/// What grade-class writes in its output folder.
const OWN_FILES: [&str; 7] = [
    "reports",
    "state",
    ".lock",
    ".gitignore",
    "gradebook.csv",
    "class-report.json",
    "class-report.html",
];
